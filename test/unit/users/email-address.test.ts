import t from "tap";
import { emailKeyOf, isValidEmailAddress } from "../../../src/users/email-address.js";

const VALID = [
  "a@b.co",
  "Ann.Lee+tag@Example.COM",
  "o'brien@mail.example.org",
  "x@sub-domain.example-1.io",
  "user@1.2",
  `${"l".repeat(64)}@example.com`,
  `a@${"d".repeat(63)}.com`,
  `a@${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(63)}.${"g".repeat(60)}`, // 254 characters
];
const INVALID = [
  "",
  "plain",
  "a@b",
  "aaa@.com",
  "@c.com",
  "a b@c.com",
  "a@b c.com",
  "a@@b.com",
  "a@b@c.com",
  "a@-b.com",
  "a@b-.com",
  "a@b..com",
  "a@b.com.",
  "a@.b.com",
  "a@b_c.com",
  "a\t@b.com",
  "a\u0000@b.com",
  `${"l".repeat(65)}@example.com`,
  `a@${"d".repeat(64)}.com`,
  `a@${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(63)}.${"g".repeat(61)}`, // 255 characters
];

t.test("accepted addresses", async (t) => {
  for (const address of VALID) t.equal(isValidEmailAddress(address), true, address);
});

t.test("refused addresses", async (t) => {
  for (const address of INVALID) t.equal(isValidEmailAddress(address), false, JSON.stringify(address));
});

t.test("the key is the lower-cased address", async (t) => {
  t.equal(emailKeyOf("Ann.Lee@Example.COM"), "ann.lee@example.com");
});
