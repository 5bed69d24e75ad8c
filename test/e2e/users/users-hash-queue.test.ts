// The password-hashing queue is bounded (USERS_PASSWORD_HASH_QUEUE): a flood of creates is shed with 503
// and Retry-After (gRPC UNAVAILABLE with a retry-after trailer) instead of queueing for minutes; what was
// refused left nothing behind, and everything accepted was created.
import { connect } from "node:http2";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import t from "tap";
import { UserService } from "../../../src/gen/ratelimitd/users/v1/users_pb.js";
import { runDaemonToExit, startDaemon } from "../../helpers/daemon-process.js";
import { call } from "./users-api-cases.js";

const BUSY = "Too many passwords waiting to be hashed; try again later";
const dir = t.testdir({ config: {} });
// No waiting room at all: with the two hashing threads busy, the next create is refused. Hashes at the
// default cost take long enough that a burst on one connection always finds them busy.
const daemon = await startDaemon({
  RUNTIME_ROOT: dir,
  USERS_PASSWORD_HASH_QUEUE: "0",
  USERS_PASSWORD_SCRYPT_LOG_N: "15",
});
t.teardown(() => daemon.stop());

t.test("REST: a burst of creates on one HTTP/2 connection is shed with 503 and Retry-After", async (t) => {
  const session = connect(`http://127.0.0.1:${daemon.httpPort}`);
  t.teardown(() => session.close());
  const password = "p".repeat(1024);
  const replies = await Promise.all(
    Array.from(
      { length: 30 },
      (_, i) =>
        new Promise<{ status: number; retryAfter: unknown; body: string }>((resolve, reject) => {
          const stream = session.request({
            ":method": "PUT",
            ":path": "/users",
            "content-type": "application/json",
          });
          let status = 0;
          let retryAfter: unknown;
          let body = "";
          stream.on("response", (headers) => {
            status = Number(headers[":status"]);
            retryAfter = headers["retry-after"];
          });
          stream.on("data", (chunk: Buffer) => (body += chunk));
          stream.on("error", reject);
          stream.on("end", () => resolve({ status, retryAfter, body }));
          stream.end(JSON.stringify({ name: `U${i}`, email: `u${i}@example.com`, password }));
        }),
    ),
  );
  const shed = replies.filter((r) => r.status === 503);
  const created = replies.filter((r) => r.status === 200);
  t.equal(shed.length + created.length, replies.length, "every answer is a 200 or a 503");
  t.ok(shed.length > 0, `some were shed (${shed.length})`);
  t.ok(created.length >= 2, `the two hashing threads' creates went through (${created.length})`);
  for (const reply of shed) {
    t.strictSame(JSON.parse(reply.body), { error: BUSY });
    t.match(reply.retryAfter, /^[1-9]\d*$/);
  }
  const listed = (await call(daemon.httpPort, "GET", "/users")).json as { email: string }[];
  t.strictSame(
    listed.map((user) => user.email).sort(),
    created.map((reply) => (JSON.parse(reply.body) as { email: string }).email).sort(),
    "exactly the accepted users exist",
  );
});

t.test("Connect/gRPC: the same refusal is UNAVAILABLE with a retry-after trailer", async (t) => {
  const users = createClient(
    UserService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${daemon.grpcPort}` }),
  );
  const outcomes = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      users.createUser({ name: `G${i}`, email: `g${i}@example.com`, password: "pw" }).then(
        () => "created",
        (error: unknown) => error,
      ),
    ),
  );
  const refused = outcomes.filter((o) => o !== "created");
  t.ok(refused.length > 0, `some were shed (${refused.length})`);
  for (const error of refused) {
    if (!(error instanceof ConnectError)) throw error;
    t.strictSame([Code[error.code], error.rawMessage], ["Unavailable", BUSY]);
    t.match(error.metadata.get("retry-after"), /^[1-9]\d*$/);
  }
});

t.test("passwords beyond 1024 characters are refused before any hashing", async (t) => {
  const long = await call(daemon.httpPort, "PUT", "/users", {
    name: "Long",
    email: "long@example.com",
    password: "p".repeat(1025),
  });
  t.strictSame([long.status, long.json], [400, { error: "Bad request" }]);
});

t.test("USERS_PASSWORD_HASH_QUEUE must be a whole number from 0", async (t) => {
  const bad = await runDaemonToExit({ RUNTIME_ROOT: dir, USERS_PASSWORD_HASH_QUEUE: "-1" });
  t.equal(bad.code, 1);
  t.match(bad.logs, 'invalid setting USERS_PASSWORD_HASH_QUEUE="-1": must be between 0 and 100000');
});
