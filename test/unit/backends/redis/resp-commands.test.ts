// Commands as bytes on the wire: the reference's INCRBY + EXPIRE pairs and GETs, lengths in UTF-8 bytes.
import t from "tap";
import {
  encodeCommand,
  encodeIncrements,
  encodeReads,
} from "../../../../src/backends/redis/resp-commands.js";

const inc = (key: string, hits: number, ttlSeconds: number) => ({ key, hits, ttlSeconds, perSecond: false });

t.test("a command is an array of bulk strings", async (t) => {
  t.equal(encodeCommand(["PING"]), "*1\r\n$4\r\nPING\r\n");
  t.equal(
    encodeCommand(["AUTH", "user", "s3cr\u00eat"]),
    "*3\r\n$4\r\nAUTH\r\n$4\r\nuser\r\n$7\r\ns3cr\u00eat\r\n",
  );
  t.equal(encodeCommand(["SET", ""]), "*2\r\n$3\r\nSET\r\n$0\r\n\r\n");
});

t.test("INCRBY then EXPIRE for every increment, in order", async (t) => {
  t.equal(
    encodeIncrements([inc("dom_k_v_1700000040", 1, 60), inc("dom_k2_1700000000", 25, 3600)]),
    "*3\r\n$6\r\nINCRBY\r\n$18\r\ndom_k_v_1700000040\r\n$1\r\n1\r\n" +
      "*3\r\n$6\r\nEXPIRE\r\n$18\r\ndom_k_v_1700000040\r\n$2\r\n60\r\n" +
      "*3\r\n$6\r\nINCRBY\r\n$17\r\ndom_k2_1700000000\r\n$2\r\n25\r\n" +
      "*3\r\n$6\r\nEXPIRE\r\n$17\r\ndom_k2_1700000000\r\n$4\r\n3600\r\n",
  );
  t.equal(encodeIncrements([]), "");
});

t.test("lengths count bytes, not characters: any descriptor value reaches Redis intact", async (t) => {
  const key = "d_k_\u00fcber\u{1f600}_60";
  t.equal(Buffer.byteLength(key), 16);
  t.equal(encodeReads([inc(key, 1, 60)]), `*2\r\n$3\r\nGET\r\n$16\r\n${key}\r\n`);
  t.match(encodeIncrements([inc(key, 1, 60)]), `$16\r\n${key}\r\n`);
});
