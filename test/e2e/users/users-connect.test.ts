// ratelimitd.users.v1.UserService over gRPC, gRPC-Web and Connect (connect-web's fetch transports in
// Node, as a browser would use them): the same results and texts as the REST routes, on one database.
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import t from "tap";
import { UserService } from "../../../src/gen/ratelimitd/users/v1/users_pb.js";
import { startDaemon } from "../../helpers/daemon-process.js";
import { call } from "./users-api-cases.js";

const dir = t.testdir({ config: {} });
const daemon = await startDaemon({ RUNTIME_ROOT: dir });
t.teardown(() => daemon.stop());
const baseUrl = `http://127.0.0.1:${daemon.grpcPort}`;

const transports: Record<string, Transport> = {
  "connect-web Connect JSON (fetch)": createConnectTransport({ baseUrl }),
  "connect-web Connect binary (fetch)": createConnectTransport({ baseUrl, useBinaryFormat: true }),
  "connect-web gRPC-Web (fetch)": createGrpcWebTransport({ baseUrl }),
  "gRPC over HTTP/2": createGrpcTransport({ baseUrl }),
};

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => new Error("expected a refusal"),
    (e: unknown) => e,
  );
  if (!(error instanceof ConnectError)) throw error;
  return { code: Code[error.code], message: error.rawMessage };
}

// Someone else's address, for the duplicate checks.
t.equal(
  (
    await call(daemon.httpPort, "PUT", "/users", {
      name: "Other",
      email: "other@example.com",
      password: "pw",
    })
  ).status,
  200,
);

let next = 0;
for (const [name, transport] of Object.entries(transports)) {
  t.test(name, async (t) => {
    const users = createClient(UserService, transport);
    const tag = `u${next++}`;
    const created = await users.createUser({ name: ` ${tag} `, email: `${tag}@Example.com`, password: "pw" });
    const id = created.id;
    t.same(
      { id: created.id, name: created.name, email: created.email },
      { id, name: tag, email: `${tag}@Example.com` },
    );
    t.strictSame(
      (await call(daemon.httpPort, "GET", `/users/${id}`)).json,
      {
        id: Number(id),
        name: tag,
        email: `${tag}@Example.com`,
      },
      "REST sees the same user",
    );

    t.same(await refusal(users.createUser({ name: "x", email: `${tag}@example.COM`, password: "pw" })), {
      code: "AlreadyExists",
      message: "User with that email already exists",
    });
    for (const bad of [
      { name: "", email: "ok@example.com", password: "pw" },
      { name: "x", email: "a@b", password: "pw" },
      { name: "x", email: "ok@example.com", password: "" },
    ]) {
      t.same(await refusal(users.createUser(bad)), { code: "InvalidArgument", message: "Bad request" });
    }

    const updated = await users.updateUser({ id, name: "Renamed" });
    t.same([updated.id, updated.name, updated.email], [id, "Renamed", `${tag}@Example.com`]);
    t.same(await refusal(users.updateUser({ id })), { code: "InvalidArgument", message: "Bad request" });
    t.same(await refusal(users.updateUser({ id: 999_999n, name: "n" })), {
      code: "NotFound",
      message: "User with that id does not exist",
    });
    t.same(await refusal(users.updateUser({ id, email: "OTHER@example.com" })), {
      code: "AlreadyExists",
      message: "User with that email already exists",
    });
    const recased = await users.updateUser({ id, email: `${tag}@example.com` });
    t.equal(recased.email, `${tag}@example.com`, "a user may change the case of its own address");

    const got = await users.getUser({ id });
    t.same([got.id, got.name], [id, "Renamed"]);
    for (const missing of [0n, -1n, 999_999n]) {
      t.same(await refusal(users.getUser({ id: missing })), {
        code: "NotFound",
        message: "User with that id does not exist",
      });
    }

    const all = await users.listUsers({});
    t.equal(all.totalCount, BigInt(all.users.length));
    t.same(
      all.users.map((u) => u.id),
      [...all.users.map((u) => u.id)].sort((a, b) => Number(a - b)),
      "id ascending",
    );
    t.ok(all.users.some((u) => u.id === id));
    const page = await users.listUsers({ limit: 1, offset: 0 });
    t.equal(page.users.length, 1);
    t.equal(page.totalCount, all.totalCount);
    t.same(await refusal(users.listUsers({ limit: 0 })), { code: "InvalidArgument", message: "Bad request" });
    t.same(await refusal(users.listUsers({ limit: 1001 })), {
      code: "InvalidArgument",
      message: "Bad request",
    });

    await users.deleteUser({ id });
    t.same(await refusal(users.deleteUser({ id })), {
      code: "NotFound",
      message: "User with that id does not exist",
    });
    t.equal((await call(daemon.httpPort, "GET", `/users/${id}`)).status, 404, "REST sees the delete");
  });
}
