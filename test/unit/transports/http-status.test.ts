// Errors become HTTP statuses in one place, each API keeping the statuses its clients expect.
import t from "tap";
import {
  AlreadyExistsError,
  BackendError,
  BackendUnavailableError,
  BodyTooLargeError,
  ConflictError,
  DatabaseError,
  InvalidArgumentError,
  NotFoundError,
  OverloadedError,
  ServiceError,
} from "../../../src/errors.js";
import { type HttpApi, httpStatusOf } from "../../../src/transports/http-status.js";

const ERRORS = {
  service: new ServiceError("rate limit domain must not be empty"),
  invalid: new InvalidArgumentError("Bad request"),
  backend: new BackendError("redis 10.0.0.7:6379: ECONNREFUSED", {
    clientMessage: "redis: connection refused",
  }),
  breakerOpen: new BackendUnavailableError("redis", "breaker_open", ""),
  notFound: new NotFoundError("User with that id does not exist"),
  duplicate: new AlreadyExistsError("User with that email already exists"),
  conflict: new ConflictError("already running"),
  overloaded: new OverloadedError("Too many passwords waiting to be hashed", 2),
  tooLarge: new BodyTooLargeError(65_536),
  database: new DatabaseError("SQLITE_BUSY"),
  bug: new TypeError("x is undefined"),
  thrownString: "not an error",
};

/** Every error's status on `api`, in the order of {@link ERRORS}. */
const statusesOn = (api: HttpApi) =>
  Object.fromEntries(Object.entries(ERRORS).map(([name, error]) => [name, httpStatusOf(error, api)]));

t.test("/json: every failure is 400, as the reference answers", async (t) => {
  t.strictSame(
    Object.values(statusesOn("json")),
    Object.values(ERRORS).map(() => 400),
  );
});

t.test("POST /explain: a failing counter store is 503, anything else 400", async (t) => {
  t.strictSame(statusesOn("explain"), {
    service: 400,
    invalid: 400,
    backend: 503,
    breakerOpen: 503,
    notFound: 400,
    duplicate: 400,
    conflict: 400,
    overloaded: 400,
    tooLarge: 400,
    database: 400,
    bug: 400,
    thrownString: 400,
  });
});

t.test("users API: 400, 403 for a duplicate e-mail, 404, 413, 503; anything else 500", async (t) => {
  t.strictSame(statusesOn("users"), {
    service: 500,
    invalid: 400,
    backend: 500,
    breakerOpen: 500,
    notFound: 404,
    duplicate: 403,
    conflict: 500,
    overloaded: 503,
    tooLarge: 413,
    database: 500,
    bug: 500,
    thrownString: 500,
  });
});

t.test("migrations API: 400, 404, 409, 413; anything else 500", async (t) => {
  t.strictSame(statusesOn("migrations"), {
    service: 500,
    invalid: 400,
    backend: 500,
    breakerOpen: 500,
    notFound: 404,
    duplicate: 500,
    conflict: 409,
    overloaded: 500,
    tooLarge: 413,
    database: 500,
    bug: 500,
    thrownString: 500,
  });
});
