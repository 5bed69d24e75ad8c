import t from "tap";
import { checkEmail, checkName, checkPassword, userIdOf } from "../../../src/users/user-input.js";

t.test("names are trimmed and 1–255 characters", async (t) => {
  t.same(checkName("  Ann  "), { ok: true, value: "Ann" });
  t.same(checkName("   "), { ok: false, reason: "name is empty" });
  t.same(checkName("x".repeat(255)), { ok: true, value: "x".repeat(255) });
  t.same(checkName("😀".repeat(255)), { ok: true, value: "😀".repeat(255) }, "characters, not UTF-16 units");
  t.same(checkName("x".repeat(256)), { ok: false, reason: "name is longer than 255 characters" });
});

t.test("e-mails are trimmed, validated, and keyed case-insensitively", async (t) => {
  t.same(checkEmail(" Ann@X.com "), { ok: true, value: { email: "Ann@X.com", emailKey: "ann@x.com" } });
  t.same(checkEmail("a@b"), { ok: false, reason: "email is not a valid address" });
});

t.test("passwords: non-empty, at most 1024 characters, not trimmed", async (t) => {
  t.same(checkPassword(" p "), { ok: true, value: " p " });
  t.same(checkPassword(""), { ok: false, reason: "password is empty" });
  t.same(checkPassword("p".repeat(1024)), { ok: true, value: "p".repeat(1024) });
  t.same(checkPassword("p".repeat(1025)), { ok: false, reason: "password is longer than 1024 characters" });
});

t.test("ids are positive integers", async (t) => {
  t.equal(userIdOf("1"), 1);
  t.equal(userIdOf("9007199254740991"), 9007199254740991);
  for (const text of [
    "abc",
    "0",
    "-1",
    "1.5",
    "01",
    "+1",
    " 1",
    "1e3",
    "",
    "9007199254740992",
    "99999999999999999",
  ]) {
    t.equal(userIdOf(text), undefined, JSON.stringify(text));
  }
  t.equal(userIdOf(5n), 5);
  t.equal(userIdOf(0n), undefined);
  t.equal(userIdOf(-3n), undefined);
});
