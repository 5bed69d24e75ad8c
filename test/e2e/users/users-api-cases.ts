// The users REST API's whole route table (docs/users-api.md), run against a fresh daemon on each database.
import { request } from "node:http";
import type { Test } from "tap";
import { type HttpReply, httpRequest } from "../../helpers/http-request.js";

/** A daemon to test and a look into its database. */
export interface UsersTarget {
  readonly port: number;
  /** USERS_MAX_BODY_BYTES the daemon was started with. */
  readonly maxBodyBytes: number;
  /** The stored password hash of the user with this lower-cased e-mail. */
  passwordHashOf(emailKey: string): Promise<string | undefined>;
}

const BAD_REQUEST = { error: "Bad request" };
const DUPLICATE = { error: "User with that email already exists" };
const NOT_FOUND = { error: "User with that id does not exist" };
const JSON_TYPE = { "content-type": "application/json" };

/** Sends a request and parses a JSON body (or keeps the text when there is none). */
export async function call(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = JSON_TYPE,
): Promise<HttpReply & { json: unknown }> {
  const text = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  const reply = await httpRequest(port, path, {
    method,
    headers: body === undefined ? {} : headers,
    ...(text === undefined ? {} : { body: text }),
  });
  let json: unknown;
  try {
    json = reply.body === "" ? undefined : JSON.parse(reply.body);
  } catch {
    json = reply.body;
  }
  return { ...reply, json };
}

/** Runs every case, in order, on a daemon with no users yet. */
export function usersApiCases(t: Test, target: UsersTarget): void {
  const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    call(target.port, method, path, body, headers);
  const expectReply = (t: Test, reply: { status: number; json: unknown }, status: number, json: unknown) => {
    t.equal(reply.status, status);
    t.strictSame(reply.json, json);
  };
  const replies: string[] = [];
  const remember = async <R extends HttpReply>(reply: Promise<R>) => {
    const r = await reply;
    replies.push(r.body, JSON.stringify(r.headers));
    return r;
  };

  t.test("an empty list is []", async (t) => {
    const reply = await remember(api("GET", "/users"));
    expectReply(t, reply, 200, []);
    t.equal(reply.headers["content-type"], "application/json");
    t.equal(reply.headers["x-total-count"], undefined);
  });

  t.test("create: 200 with exactly id, name, email, trimmed", async (t) => {
    const ann = await remember(
      api("PUT", "/users", { name: "  Ann Lee ", email: " Ann@Example.com ", password: "s3cret" }),
    );
    expectReply(t, ann, 200, { id: 1, name: "Ann Lee", email: "Ann@Example.com" });
    t.equal(ann.headers["content-type"], "application/json");
    const bob = await remember(
      api("PUT", "/users", { name: "Bob", email: "bob@example.com", password: "pw", id: 77, admin: true }),
    );
    expectReply(t, bob, 200, { id: 2, name: "Bob", email: "bob@example.com" });
    const charset = await remember(
      api(
        "PUT",
        "/users",
        { name: "Cy", email: "cy@example.com", password: "pw" },
        {
          "content-type": "Application/JSON; charset=utf-8",
        },
      ),
    );
    expectReply(t, charset, 200, { id: 3, name: "Cy", email: "cy@example.com" });
  });

  t.test("create: the same e-mail in any case is a 403", async (t) => {
    for (const email of ["ann@example.com", "ANN@EXAMPLE.COM", " ann@Example.com"]) {
      expectReply(
        t,
        await remember(api("PUT", "/users", { name: "X", email, password: "pw" })),
        403,
        DUPLICATE,
      );
    }
  });

  t.test("create: missing, mistyped or invalid fields are a 400", async (t) => {
    const good = { name: "Dee", email: "dee@example.com", password: "pw" };
    const bodies: unknown[] = [
      { email: good.email, password: "pw" },
      { name: "Dee", password: "pw" },
      { name: "Dee", email: good.email },
      { ...good, name: 5 },
      { ...good, email: null },
      { ...good, password: ["pw"] },
      { ...good, name: "   " },
      { ...good, name: "n".repeat(256) },
      { ...good, password: "" },
      { ...good, password: "p".repeat(1025) },
      // PostgreSQL cannot store a NUL: refused on every store alike rather than a 500 on one.
      { ...good, name: "Dee\u0000" },
      ...[
        "aaa@.com",
        "a@b",
        "a b@c.com",
        "@c.com",
        "dee",
        "dee@example..com",
        `${"x".repeat(250)}@b.com`,
      ].map((email) => ({ ...good, email })),
      [good],
      "just a string",
      42,
      null,
    ];
    for (const body of bodies) {
      expectReply(t, await remember(api("PUT", "/users", body)), 400, BAD_REQUEST);
    }
    for (const raw of ["", "{", "{'name': 'x'}", "nul"]) {
      expectReply(t, await remember(api("PUT", "/users", raw)), 400, BAD_REQUEST);
    }
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/jsonp"]) {
      expectReply(t, await remember(api("PUT", "/users", good, { "content-type": type })), 400, BAD_REQUEST);
    }
    expectReply(t, await remember(api("PUT", "/users", good, {})), 400, BAD_REQUEST);
    expectReply(t, await remember(api("PUT", "/users")), 400, BAD_REQUEST);
    t.strictSame(
      (await api("GET", "/users")).json,
      [
        { id: 1, name: "Ann Lee", email: "Ann@Example.com" },
        { id: 2, name: "Bob", email: "bob@example.com" },
        { id: 3, name: "Cy", email: "cy@example.com" },
      ],
      "nothing was created",
    );
  });

  t.test("limits: 255-character names and 1024-character passwords are fine", async (t) => {
    const name = "n".repeat(255);
    const reply = await remember(
      api("PUT", "/users", { name, email: "long@example.com", password: "p".repeat(1024) }),
    );
    expectReply(t, reply, 200, { id: 4, name, email: "long@example.com" });
  });

  t.test("get one: 200, or 404 for any id that names no user", async (t) => {
    expectReply(t, await remember(api("GET", "/users/2")), 200, {
      id: 2,
      name: "Bob",
      email: "bob@example.com",
    });
    for (const id of ["999", "abc", "0", "-1", "1.5", "01", "1e2", "%31"]) {
      expectReply(t, await remember(api("GET", `/users/${id}`)), 404, NOT_FOUND);
    }
  });

  t.test("update: only the attributes given change", async (t) => {
    const renamed = await remember(api("PATCH", "/users/2", { name: " Robert " }));
    expectReply(t, renamed, 200, { id: 2, name: "Robert", email: "bob@example.com" });
    const moved = await remember(api("PATCH", "/users/2", { email: "Robert@Example.com" }));
    expectReply(t, moved, 200, { id: 2, name: "Robert", email: "Robert@Example.com" });
    const recased = await remember(api("PATCH", "/users/2", { email: "robert@example.com", name: "Rob" }));
    expectReply(t, recased, 200, { id: 2, name: "Rob", email: "robert@example.com" });
    const before = await target.passwordHashOf("robert@example.com");
    const password = await remember(api("PATCH", "/users/2", { password: "new password", ignored: 1 }));
    expectReply(t, password, 200, { id: 2, name: "Rob", email: "robert@example.com" });
    const after = await target.passwordHashOf("robert@example.com");
    t.not(after, before, "the hash changed");
    t.match(after, /^\$scrypt\$ln=\d+,r=8,p=1\$/);
    expectReply(t, await api("GET", "/users/2"), 200, { id: 2, name: "Rob", email: "robert@example.com" });
  });

  t.test("update: refusals", async (t) => {
    expectReply(t, await remember(api("PATCH", "/users/2", { email: "ANN@example.com" })), 403, DUPLICATE);
    for (const body of [
      {},
      { id: 5 },
      { unknown: "x" },
      { name: 5 },
      { email: null },
      { password: "" },
      { email: "a@b" },
      { name: "" },
      { name: "Rob\u0000" },
      [],
      "x",
    ]) {
      expectReply(t, await remember(api("PATCH", "/users/2", body)), 400, BAD_REQUEST);
    }
    expectReply(
      t,
      await remember(api("PATCH", "/users/2", { name: "x" }, { "content-type": "text/plain" })),
      400,
      BAD_REQUEST,
    );
    expectReply(t, await remember(api("PATCH", "/users/999", { name: "Nobody" })), 404, NOT_FOUND);
    for (const id of ["abc", "0", "-1", "1.5"]) {
      expectReply(t, await remember(api("PATCH", `/users/${id}`, { name: "Nobody" })), 404, NOT_FOUND);
    }
    expectReply(t, await api("GET", "/users/2"), 200, { id: 2, name: "Rob", email: "robert@example.com" });
  });

  t.test(
    "delete: 200 with an empty body, then 404; the e-mail is free at once; ids are never reused",
    async (t) => {
      const deleted = await remember(api("DELETE", "/users/4"));
      t.equal(deleted.status, 200);
      t.equal(deleted.body, "");
      expectReply(t, await remember(api("DELETE", "/users/4")), 404, NOT_FOUND);
      expectReply(t, await remember(api("GET", "/users/4")), 404, NOT_FOUND);
      expectReply(t, await remember(api("PATCH", "/users/4", { name: "Gone" })), 404, NOT_FOUND);
      for (const id of ["abc", "0", "-1", "1.5"]) {
        expectReply(t, await remember(api("DELETE", `/users/${id}`)), 404, NOT_FOUND);
      }
      const again = await remember(
        api("PUT", "/users", { name: "Long again", email: "LONG@example.com", password: "pw" }),
      );
      expectReply(t, again, 200, { id: 5, name: "Long again", email: "LONG@example.com" });
    },
  );

  t.test("list: id ascending, whole by default, pages on request", async (t) => {
    const all = [
      { id: 1, name: "Ann Lee", email: "Ann@Example.com" },
      { id: 2, name: "Rob", email: "robert@example.com" },
      { id: 3, name: "Cy", email: "cy@example.com" },
      { id: 5, name: "Long again", email: "LONG@example.com" },
    ];
    expectReply(t, await remember(api("GET", "/users")), 200, all);
    const page = await remember(api("GET", "/users?limit=2&offset=1"));
    expectReply(t, page, 200, all.slice(1, 3));
    t.equal(page.headers["x-total-count"], "4");
    const tail = await api("GET", "/users?offset=3");
    expectReply(t, tail, 200, all.slice(3));
    t.equal(tail.headers["x-total-count"], "4");
    const beyond = await api("GET", "/users?limit=5&offset=10");
    expectReply(t, beyond, 200, []);
    t.equal(beyond.headers["x-total-count"], "4");
    expectReply(t, await api("GET", "/users?limit=1000"), 200, all);
    for (const query of [
      "limit=0",
      "limit=1001",
      "limit=abc",
      "offset=-1",
      "limit=1.5",
      "offset=x",
      "limit=",
    ]) {
      expectReply(t, await api("GET", `/users?${query}`), 400, BAD_REQUEST);
    }
    expectReply(t, await api("GET", "/users?sort=name"), 200, all);
  });

  t.test("methods a path does not support: 405 with Allow", async (t) => {
    for (const [method, path, allow] of [
      ["POST", "/users", "GET, PUT"],
      ["DELETE", "/users", "GET, PUT"],
      ["PATCH", "/users", "GET, PUT"],
      ["PUT", "/users/1", "GET, PATCH, DELETE"],
      ["POST", "/users/1", "GET, PATCH, DELETE"],
      ["POST", "/users/openapi.json", "GET"],
    ] as const) {
      const reply = await remember(api(method, path, { name: "x", email: "y@example.com", password: "z" }));
      expectReply(t, reply, 405, { error: "Method not allowed" });
      t.equal(reply.headers.allow, allow, `${method} ${path}`);
    }
    const list = await call(target.port, "GET", "/users");
    t.equal((list.json as unknown[]).length, 4, "nothing was created");
  });

  t.test("other paths are Go's 404", async (t) => {
    for (const path of ["/users/1/extra", "/users/", "/usersx", "/user"]) {
      const reply = await api("GET", path);
      t.equal(reply.status, 404);
      t.equal(reply.body, "404 page not found\n", path);
    }
  });

  t.test("413 for a body over USERS_MAX_BODY_BYTES, declared or streamed", async (t) => {
    const big = { name: "n", email: "big@example.com", password: "p".repeat(target.maxBodyBytes) };
    expectReply(t, await remember(api("PUT", "/users", big)), 413, { error: "Request entity too large" });
    expectReply(t, await remember(api("PATCH", "/users/1", big)), 413, { error: "Request entity too large" });
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port: target.port, path: "/users", method: "PUT", headers: JSON_TYPE },
        (res) => {
          let body = "";
          res.on("data", (chunk) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on("error", reject);
      // No content-length: chunked, so the size is only known while reading.
      for (let sent = 0; sent <= target.maxBodyBytes; sent += 1000) req.write(" ".repeat(1000));
      req.end(JSON.stringify(big));
    });
    t.equal(chunked.status, 413);
    t.strictSame(JSON.parse(chunked.body), { error: "Request entity too large" });
    t.equal(((await api("GET", "/users")).json as unknown[]).length, 4);
  });

  t.test("50 concurrent creates with one e-mail: exactly one succeeds", async (t) => {
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api("PUT", "/users", {
          name: `Racer ${i}`,
          email: i % 2 ? "RACE@example.com" : "race@example.com",
          password: "pw",
        }),
      ),
    );
    const statuses = replies.map((r) => r.status).sort();
    t.same(statuses, [200, ...Array(49).fill(403)]);
    const winner = replies.find((r) => r.status === 200)?.json as { id: number };
    t.equal(winner.id, 6, "the losers used up no ids");
    for (const loser of replies.filter((r) => r.status === 403)) t.strictSame(loser.json, DUPLICATE);
    const users = (await api("GET", "/users")).json as { email: string }[];
    t.equal(users.filter((u) => u.email.toLowerCase() === "race@example.com").length, 1);
    expectReply(
      t,
      await api("PUT", "/users", { name: "After", email: "after@example.com", password: "pw" }),
      200,
      {
        id: 7,
        name: "After",
        email: "after@example.com",
      },
    );
  });

  t.test("lone surrogates (JSON allows \\ud800) become U+FFFD, the same on every store", async (t) => {
    const created = await remember(
      api("PUT", "/users", { name: "Sur\ud800rogate", email: "lo\udc00ne@example.com", password: "pw" }),
    );
    const stored = { id: 8, name: "Sur\ufffdrogate", email: "lo\ufffdne@example.com" };
    expectReply(t, created, 200, stored);
    expectReply(t, await api("GET", "/users/8"), 200, stored);
    const renamed = await api("PATCH", "/users/8", { name: "\ud83d\ude00 \ud83d" });
    expectReply(t, renamed, 200, { ...stored, name: "\u{1f600} \ufffd" });
    expectReply(t, await api("GET", "/users/8"), 200, { ...stored, name: "\u{1f600} \ufffd" });
  });

  t.test("the stored hash is not the password, and verifies", async (t) => {
    const { PasswordHasher } = await import("../../../src/users/password-hasher.js");
    const stored = await target.passwordHashOf("ann@example.com");
    t.type(stored, "string");
    t.not(stored, "s3cret");
    t.notMatch(stored ?? "", /s3cret/);
    t.equal(await new PasswordHasher().verify("s3cret", stored ?? ""), true);
    t.equal(await new PasswordHasher().verify("s3cret!", stored ?? ""), false);
    const robert = await target.passwordHashOf("robert@example.com");
    t.equal(await new PasswordHasher().verify("new password", robert ?? ""), true);
  });

  t.test("no response ever showed a password or a hash", async (t) => {
    t.ok(replies.length > 80, `${replies.length} replies recorded`);
    for (const text of replies) {
      t.notMatch(text, /s3cret|new password|scrypt|password/i);
    }
  });
}
