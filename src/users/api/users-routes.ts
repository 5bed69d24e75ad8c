import type { IncomingMessage, ServerResponse } from "node:http";
import { type UsersAccess, type UsersOperation, usersRefusalText } from "../../auth/users-access.js";
import { BodyTooLargeError, InvalidArgumentError, NotFoundError, OverloadedError } from "../../errors.js";
import type { Logger } from "../../observability/logger.js";
import { accessDenied, credentialsOf } from "../../transports/http/access-responses.js";
import { readBody, sendJson } from "../../transports/http/http-responses.js";
import type { HttpRoute } from "../../transports/http/http-route.js";
import { httpStatusOf } from "../../transports/http-status.js";
import { USER_ERROR_TEXT } from "../user.js";
import { userIdOf } from "../user-input.js";
import type { UserService } from "../user-service.js";

/** Options of {@link usersRoutes}. */
export interface UsersRoutesOptions {
  readonly service: UserService;
  /** Path prefix (USERS_BASE_PATH): `""` or `/something`. */
  readonly basePath: string;
  readonly maxBodyBytes: number;
  /** The OpenAPI document served at `{base}/users/openapi.json`. */
  readonly openApi: unknown;
  /** Which requests need `manage_options` credentials (USERS_REQUIRE_AUTH, accounts with capabilities). */
  readonly access: UsersAccess;
  readonly logger: Logger;
  /** Whether a 401 carries `WWW-Authenticate` (default true; the console's mount says false). */
  readonly challenge?: boolean;
}

type Body = Record<string, unknown>;

/**
 * The users REST API (README "Users API"): `PUT|GET {base}/users`, `GET|PATCH|DELETE {base}/users/{id}`,
 * JSON in and out, errors as `{"error": "<text>"}` with the texts the README lists for the status
 * `httpStatusOf` gives.
 */
export function usersRoutes(options: UsersRoutesOptions): HttpRoute {
  const collection = `${options.basePath}/users`;
  const openApiPath = `${collection}/openapi.json`;
  const { service } = options;
  return {
    // `{base}/users` and `{base}/users/{one non-empty segment}`, as gorilla/mux would match them.
    matches: (path) =>
      path === collection ||
      (path.length > collection.length + 1 &&
        path.startsWith(`${collection}/`) &&
        !path.includes("/", collection.length + 1)),
    async handle(req, res, path) {
      if (path === openApiPath) {
        if (req.method !== "GET") return methodNotAllowed(res, "GET");
        return sendJson(res, 200, options.openApi);
      }
      const isCollection = path === collection;
      const id = isCollection ? undefined : userIdOf(path.slice(collection.length + 1));
      const operation = operationOf(req.method, isCollection, id);
      if (operation === undefined)
        return methodNotAllowed(res, isCollection ? "GET, PUT" : "GET, PATCH, DELETE");
      try {
        // Inside the try: checking credentials reads the database, and its failure is this API's 500.
        const decision = await options.access(operation, credentialsOf(req));
        if (!decision.allowed)
          return accessDenied(
            res,
            decision,
            { error: usersRefusalText(decision) },
            options.challenge ?? true,
          );
        switch (operation.kind) {
          case "list":
            return await list(req, res, service);
          case "create":
            return sendJson(res, 200, await service.create(await createInput(req, options)));
          case "get":
            return sendJson(res, 200, await service.get(id));
          case "delete":
            await service.delete(id);
            res.writeHead(200, { "content-length": 0 });
            res.end();
            return;
          case "update":
            if (id === undefined) throw new NotFoundError(USER_ERROR_TEXT.notFound);
            return sendJson(res, 200, await service.update(id, await updateInput(req, options)));
        }
      } catch (error) {
        sendUserError(res, error, options.logger, `${req.method} ${path}`);
      }
    },
  };
}

/** The operation a method asks for on the collection or on one user; undefined for other methods. */
function operationOf(
  method: string | undefined,
  isCollection: boolean,
  userId: number | undefined,
): UsersOperation | undefined {
  if (isCollection)
    return method === "GET" ? { kind: "list" } : method === "PUT" ? { kind: "create" } : undefined;
  if (method === "GET") return { kind: "get" };
  if (method === "PATCH") return { kind: "update", userId };
  if (method === "DELETE") return { kind: "delete", userId };
  return undefined;
}

async function list(req: IncomingMessage, res: ServerResponse, service: UserService): Promise<void> {
  const query = new URL(req.url ?? "/", "http://x").searchParams;
  const number = (name: string) => {
    const text = query.get(name);
    if (text === null) return undefined;
    return /^[0-9]{1,15}$/.test(text) ? Number(text) : Number.NaN;
  };
  const page = service.pageOf(number("limit"), number("offset"));
  const { users, total } = await service.list(page);
  sendJson(res, 200, users, page === undefined ? {} : { "x-total-count": String(total) });
}

async function createInput(req: IncomingMessage, options: UsersRoutesOptions) {
  const body = await jsonBody(req, options.maxBodyBytes);
  const { name, email, password } = body;
  if (typeof name !== "string" || typeof email !== "string" || typeof password !== "string")
    throw badRequest();
  return { name, email, password };
}

async function updateInput(req: IncomingMessage, options: UsersRoutesOptions) {
  const body = await jsonBody(req, options.maxBodyBytes);
  const field = (key: string): string | undefined => {
    const value = body[key];
    if (value === undefined) return undefined;
    if (typeof value !== "string") throw badRequest();
    return value;
  };
  return { name: field("name"), email: field("email"), password: field("password") };
}

/** The body as a JSON object: `application/json`, within the size limit, parsing to an object. */
async function jsonBody(req: IncomingMessage, maxBodyBytes: number): Promise<Body> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") throw badRequest();
  if (Number(req.headers["content-length"] ?? 0) > maxBodyBytes) throw new BodyTooLargeError(maxBodyBytes);
  const text = (await readBody(req, maxBodyBytes)).toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest();
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest();
  return value as Body;
}

function badRequest(): InvalidArgumentError {
  return new InvalidArgumentError(USER_ERROR_TEXT.badRequest);
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  sendJson(res, 405, { error: USER_ERROR_TEXT.methodNotAllowed }, { allow });
}

/** Answers an error with its status ({@link httpStatusOf}) and that status's text; a 500 is logged. */
function sendUserError(res: ServerResponse, error: unknown, logger: Logger, what: string): void {
  const status = httpStatusOf(error, "users");
  if (status === 500) {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    logger.error(`users API: ${what} failed: ${detail}`);
  }
  sendJson(
    res,
    status,
    { error: ERROR_TEXTS[status] ?? USER_ERROR_TEXT.serverError },
    errorHeaders(res, error),
  );
}

/** The users API's error text for each status. */
const ERROR_TEXTS: Readonly<Record<number, string>> = {
  400: USER_ERROR_TEXT.badRequest,
  403: USER_ERROR_TEXT.duplicateEmail,
  404: USER_ERROR_TEXT.notFound,
  413: USER_ERROR_TEXT.tooLarge,
  503: USER_ERROR_TEXT.busy,
};

function errorHeaders(res: ServerResponse, error: unknown): Record<string, string> {
  // The rest of an oversized body is not read: answer, then close the HTTP/1.1 connection (HTTP/2 forbids
  // the header; the stream just ends).
  if (error instanceof BodyTooLargeError)
    return res.req.httpVersionMajor === 1 ? { connection: "close" } : {};
  if (error instanceof OverloadedError) return { "retry-after": String(error.retryAfterSeconds) };
  return {};
}
