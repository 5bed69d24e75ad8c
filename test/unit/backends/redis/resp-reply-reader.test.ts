// Redis replies read from socket chunks: every reply type, every split point, and bytes that are not RESP.
import t from "tap";
import {
  RespError,
  RespProtocolError,
  type RespReply,
  RespReplyReader,
} from "../../../../src/backends/redis/resp-reply-reader.js";

const replies =
  ":1\r\n:-42\r\n:0\r\n:9007199254740991\r\n+PONG\r\n-WRONGPASS invalid username-password pair\r\n" +
  "$5\r\nhello\r\n$-1\r\n$0\r\n\r\n$6\r\nd\u00e9j\u00e0\r\n*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n*-1\r\n" +
  "*3\r\n$6\r\nmaster\r\n:3129\r\n*1\r\n*3\r\n$9\r\n127.0.0.1\r\n$4\r\n9001\r\n$4\r\n3129\r\n*0\r\n";

const expected: RespReply[] = [
  1,
  -42,
  0,
  9007199254740991,
  "PONG",
  new RespError("WRONGPASS invalid username-password pair"),
  "hello",
  null,
  "",
  "déjà",
  ["127.0.0.1", "6379"],
  null,
  ["master", 3129, [["127.0.0.1", "9001", "3129"]]],
  [],
];

function readAll(chunks: Buffer[]): RespReply[] {
  const seen: RespReply[] = [];
  const reader = new RespReplyReader((reply) => seen.push(reply));
  for (const chunk of chunks) reader.feed(chunk);
  return seen;
}

t.test("every reply type, in one chunk", async (t) => {
  t.same(readAll([Buffer.from(replies, "utf8")]), expected);
});

t.test("the same replies split at every byte, and one byte at a time", async (t) => {
  const bytes = Buffer.from(replies, "utf8");
  for (let at = 1; at < bytes.length; at++) {
    const got = readAll([bytes.subarray(0, at), bytes.subarray(at)]);
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      t.fail(`split at byte ${at}: ${JSON.stringify(got)}`);
      return;
    }
  }
  t.same(readAll([...bytes].map((b) => Buffer.from([b]))), expected);
});

t.test("an error reply is a RespError with the text after '-'", async (t) => {
  const [reply] = readAll([Buffer.from("-READONLY You can't write against a read only replica.\r\n")]);
  t.type(reply, RespError);
  t.equal((reply as RespError).message, "READONLY You can't write against a read only replica.");
});

t.test("nothing is reported until a reply is complete", async (t) => {
  t.same(readAll([Buffer.from(":12")]), []);
  t.same(readAll([Buffer.from("$5\r\nhel")]), []);
  t.same(readAll([Buffer.from("*2\r\n:1\r\n")]), []);
  t.same(readAll([Buffer.from(":7\r")]), []);
});

t.test("bytes that are not RESP throw RespProtocolError", async (t) => {
  const thrown = (bytes: string) => {
    try {
      readAll([Buffer.from(bytes)]);
    } catch (error) {
      return error;
    }
    return undefined;
  };
  const notResp = thrown("HTTP/1.1 400 Bad Request\r\n");
  t.type(notResp, RespProtocolError);
  t.equal((notResp as Error).message, "unexpected reply type byte 72 from Redis");
  const badInteger = thrown(":12x\r\n");
  t.type(badInteger, RespProtocolError);
  t.equal((badInteger as Error).message, "malformed integer reply from Redis");
});

t.test("reset drops a partial reply", async (t) => {
  const seen: RespReply[] = [];
  const reader = new RespReplyReader((reply) => seen.push(reply));
  reader.feed(Buffer.from("$10\r\nabc"));
  reader.reset();
  reader.feed(Buffer.from(":5\r\n"));
  t.same(seen, [5]);
});
