// The hot path's bytes, written straight into a slab: the same bytes as the RESP text of resp-commands.ts, for
// any key (lengths in UTF-8 bytes, including where the byte count needs more digits than the character
// count), across slab boundaries, and never written over once taken.
import t from "tap";
import {
  encodeCommand,
  encodeIncrements,
  encodeReads,
} from "../../../../src/backends/redis/resp-commands.js";
import { RespWriter } from "../../../../src/backends/redis/resp-writer.js";

const inc = (key: string, hits: number, ttlSeconds: number) => ({ key, hits, ttlSeconds, perSecond: false });

t.test("INCRBY + EXPIRE per increment, byte for byte the reference's commands", async (t) => {
  const writer = new RespWriter();
  t.equal(writer.pending, false);
  writer.increments([inc("dom_k_v_1700000040", 1, 60), inc("dom_k2_1700000000", 25, 3600)]);
  t.equal(writer.pending, true);
  t.equal(
    writer.take().toString("latin1"),
    "*3\r\n$6\r\nINCRBY\r\n$18\r\ndom_k_v_1700000040\r\n$1\r\n1\r\n" +
      "*3\r\n$6\r\nEXPIRE\r\n$18\r\ndom_k_v_1700000040\r\n$2\r\n60\r\n" +
      "*3\r\n$6\r\nINCRBY\r\n$17\r\ndom_k2_1700000000\r\n$2\r\n25\r\n" +
      "*3\r\n$6\r\nEXPIRE\r\n$17\r\ndom_k2_1700000000\r\n$4\r\n3600\r\n",
  );
  t.equal(writer.pending, false);
  t.equal(writer.take().length, 0, "nothing more to take");
});

t.test("keys of every length and script: the same bytes as the text encoding", async (t) => {
  const keys = [
    "",
    "k",
    "123456789",
    "1234567890",
    "x".repeat(99),
    "x".repeat(100),
    // 9 characters, 10+ bytes: the length needs one more digit than the character count.
    "\u00fc".repeat(9),
    "a\u00fc".repeat(4) + "\u{1f600}",
    // 99 characters, 100+ bytes.
    `${"y".repeat(98)}\u00e9`,
    "\u{1f600}".repeat(40),
    "d_k_\u00fcber\u{1f600}_60",
  ];
  for (const key of keys) {
    for (const [hits, ttl] of [
      [0, 1],
      [1, 9],
      [10, 10],
      [4_294_967_295, 86_699],
      [9_007_199_254_740_991, 31_622_400],
    ] as const) {
      const writer = new RespWriter();
      writer.increments([inc(key, hits, ttl)]);
      t.same(
        writer.take(),
        Buffer.from(encodeIncrements([inc(key, hits, ttl)])),
        `${key.length} chars, ${hits}`,
      );
    }
    const writer = new RespWriter();
    writer.reads([inc(key, 1, 1)]);
    t.same(writer.take(), Buffer.from(encodeReads([inc(key, 1, 1)])), `GET, ${key.length} chars`);
  }
});

t.test("text and commands mix in order; a taken batch is never written over", async (t) => {
  const writer = new RespWriter();
  const taken: Buffer[] = [];
  const expected: string[] = [];
  // Far more than one slab (64 KiB): batches of every size, some with a long key that forces a new slab.
  for (let batch = 0; batch < 400; batch++) {
    let text = "";
    for (let n = 0; n < batch % 7; n++) {
      const key = `rl_${batch}_${n}_${"z".repeat(batch % 50 === 0 ? 30_000 : n * 10)}`;
      writer.increments([inc(key, n + 1, 60 * (n + 1))]);
      text += encodeIncrements([inc(key, n + 1, 60 * (n + 1))]);
    }
    if (batch % 3 === 0) {
      const ping = encodeCommand(["PING", `p\u00e9${batch}`]);
      writer.text(ping);
      text += ping;
    }
    taken.push(writer.take());
    expected.push(text);
  }
  t.strictSame(
    taken.map((bytes) => bytes.toString("utf8")),
    expected,
    "every batch as written, after all the later ones",
  );
});

t.test("clear() drops what was not taken, and only that", async (t) => {
  const writer = new RespWriter();
  writer.increments([inc("a", 1, 60)]);
  const first = writer.take();
  writer.increments([inc("b", 1, 60)]);
  writer.clear();
  t.equal(writer.pending, false);
  writer.reads([inc("c", 1, 60)]);
  t.equal(writer.take().toString(), encodeReads([inc("c", 1, 60)]));
  t.equal(first.toString(), encodeIncrements([inc("a", 1, 60)]));
});
