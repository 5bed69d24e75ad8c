import { readdirSync, readFileSync } from "node:fs";
import t from "tap";
import { OverloadedError } from "../../../src/errors.js";
import { PasswordHasher } from "../../../src/users/password-hasher.js";

const cheap = new PasswordHasher({ parameters: { logN: 10, r: 8, p: 1 } });

t.test("hashes are PHC strings with a random salt and verify", async (t) => {
  const first = await cheap.hash("correct horse");
  const second = await cheap.hash("correct horse");
  t.match(first, /^\$scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  t.not(first, second, "a new salt each time");
  t.not(first.includes("correct horse"), true);
  t.equal(await cheap.verify("correct horse", first), true);
  t.equal(await cheap.verify("correct horse", second), true);
  t.equal(await cheap.verify("correct horsf", first), false);
  t.equal(await cheap.verify("", first), false);
});

t.test("hashes made with other parameters still verify; weaker ones need a rehash", async (t) => {
  const stronger = new PasswordHasher({ parameters: { logN: 11, r: 8, p: 1 } });
  const old = await cheap.hash("pw");
  t.equal(await stronger.verify("pw", old), true);
  t.equal(stronger.needsRehash(old), true);
  t.equal(cheap.needsRehash(old), false);
  t.equal(cheap.needsRehash(await stronger.hash("pw")), false);
  t.equal(cheap.needsRehash("plain text"), true);
});

t.test("Unicode passwords are compared in NFC", async (t) => {
  const hash = await cheap.hash("caf\u00e9");
  t.equal(await cheap.verify("cafe\u0301", hash), true);
});

t.test("anything that is not a sane hash does not verify", async (t) => {
  const good = await cheap.hash("pw");
  const [, , , salt, key] = good.split("$");
  for (const stored of [
    "",
    "pw",
    "$scrypt$ln=10,r=8,p=1$$",
    `$scrypt$ln=40,r=8,p=1$${salt}$${key}`, // a cost nobody should compute
    `$scrypt$ln=10,r=0,p=1$${salt}$${key}`,
    `$scrypt$ln=10,r=8,p=1$${salt}$AAAA`,
    `$argon2id$ln=10,r=8,p=1$${salt}$${key}`,
  ]) {
    t.equal(await cheap.verify("pw", stored), false, stored);
  }
});

t.test("no more hashes run at once than the concurrency allows", async (t) => {
  const hasher = new PasswordHasher({ parameters: { logN: 10, r: 8, p: 1 }, concurrency: 1 });
  const hashes = await Promise.all(["a", "b", "c"].map((pw) => hasher.hash(pw)));
  t.same(await Promise.all(hashes.map((hash, i) => hasher.verify(["a", "b", "c"][i] ?? "", hash))), [
    true,
    true,
    true,
  ]);
});

t.test("hashing threads run at the lowest priority, and a closed hasher refuses work", async (t) => {
  const hasher = new PasswordHasher({ parameters: { logN: 10, r: 8, p: 1 }, concurrency: 1 });
  const stored = await hasher.hash("pw");
  if (process.platform === "linux") {
    const niceOf = (tid: string) => {
      const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]); // field 19 of proc(5)
    };
    const threads = readdirSync(`/proc/${process.pid}/task`);
    t.equal(niceOf(String(process.pid)), 0, "the event loop's thread keeps its priority");
    t.ok(
      threads.some((tid) => niceOf(tid) === 19),
      "a hashing thread runs at nice 19",
    );
  }
  await hasher.close();
  await t.rejects(hasher.verify("pw", stored), { message: "password hashing has been stopped" });
});

t.test("beyond maxQueued waiting hashes, more are refused at once, with a time to retry", async (t) => {
  const hasher = new PasswordHasher({ parameters: { logN: 10, r: 8, p: 1 }, concurrency: 1, maxQueued: 2 });
  t.teardown(() => hasher.close());
  const outcome = (promise: Promise<string>) =>
    promise.then(
      () => "hashed",
      (error: unknown) =>
        error instanceof OverloadedError ? [error.message, error.retryAfterSeconds] : String(error),
    );
  // One runs, two wait, two are refused; the administrator bootstrap's hash is never refused.
  const outcomes = await Promise.all([
    ...["a", "b", "c", "d", "e"].map((pw) => outcome(hasher.hash(pw))),
    outcome(hasher.hash("admin", { unbounded: true })),
  ]);
  const busy = ["Too many passwords waiting to be hashed; try again later", 1];
  t.strictSame(outcomes, ["hashed", "hashed", "hashed", busy, busy, "hashed"]);
  t.equal(await outcome(hasher.hash("f")), "hashed", "room again once the queue drained");
});
