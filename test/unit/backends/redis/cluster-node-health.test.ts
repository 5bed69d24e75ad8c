import t from "tap";
import { ClusterNodeHealth, isNodeFailure } from "../../../../src/backends/redis/cluster-node-health.js";

// One Redis Cluster node's loss and its end, logged once each (docs/outages.md "Redis Cluster").
const WHERE = "redis 10.0.0.7:6379,10.0.0.8:6379";

function setUp() {
  const clock = { ms: 0 };
  const lines: { kind: string; text: string }[] = [];
  let refreshes = 0;
  const health = new ClusterNodeHealth({
    where: WHERE,
    log: {
      warn: (kind, text) => lines.push({ kind, text: typeof text === "string" ? text : text() }),
      error: () => {},
    },
    refreshSlots: () => refreshes++,
    refreshIntervalMs: 20,
    nowMs: () => clock.ms,
  });
  t.teardown(() => health.close());
  return { clock, lines, health, refreshes: () => refreshes };
}

t.test("a lost node: one line, the slot map read again until its slots are served", async (t) => {
  const { clock, lines, health, refreshes } = setUp();
  health.failed("10.0.0.7:6379", new Error("Connection is closed."));
  health.failed("10.0.0.7:6379", new Error("Connection is closed."));
  t.strictSame(lines, [
    {
      kind: `${WHERE} node 10.0.0.7:6379`,
      text: `${WHERE}: node 10.0.0.7:6379 lost: connection closed (Connection is closed.)`,
    },
  ]);
  t.equal(refreshes(), 1, "read at once, not again for the next failure within the interval");
  clock.ms = 20;
  health.failed("10.0.0.8:6379", new Error("CLUSTERDOWN The cluster is down"));
  t.equal(refreshes(), 2, "read again for a failure after the interval");
  await new Promise((resolve) => setTimeout(resolve, 70));
  t.ok(refreshes() >= 4, `then every 20 ms (${refreshes()})`);
  clock.ms = 1020;
  health.answered("10.0.0.8:6379");
  t.equal(lines.at(-1)?.text, `${WHERE}: node 10.0.0.8:6379 answers again after 1.0 s`);
  health.refreshed(new Set(["10.0.0.7:6379", "10.0.0.8:6379"]));
  t.strictSame(health.lost, ["10.0.0.7:6379"], "still named by the slot map");
  clock.ms = 4100;
  health.refreshed(new Set(["10.0.0.9:6379", "10.0.0.8:6379"]));
  t.strictSame(health.lost, []);
  t.equal(
    lines.at(-1)?.text,
    `${WHERE}: node 10.0.0.7:6379 replaced after 4.1 s: its slots are served by the primaries 10.0.0.9:6379, 10.0.0.8:6379`,
  );
  const after = refreshes();
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(refreshes(), after, "no more reading once nothing is lost");
});

t.test("a node that answers again ends its loss", async (t) => {
  const { clock, lines, health } = setUp();
  health.answered("10.0.0.8:6379");
  t.strictSame(lines, [], "answering says nothing when nothing was lost");
  health.failed("10.0.0.8:6379", Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
  clock.ms = 2000;
  health.answered("10.0.0.8:6379");
  t.strictSame(
    lines.map((l) => l.text),
    [
      `${WHERE}: node 10.0.0.8:6379 lost: connection refused (connect ECONNREFUSED)`,
      `${WHERE}: node 10.0.0.8:6379 answers again after 2.0 s`,
    ],
  );
});

t.test("what counts as a node's loss", async (t) => {
  const reply = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });
  t.equal(isNodeFailure(new Error("Connection is closed.")), true);
  t.equal(isNodeFailure(reply("CLUSTERDOWN The cluster is down")), true);
  t.equal(isNodeFailure(new Error("Too many Cluster redirections. Last error: MOVED 1 a:1")), true);
  t.equal(isNodeFailure(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })), true);
  t.equal(isNodeFailure(reply("WRONGTYPE Operation against a key holding the wrong kind of value")), false);
  t.equal(isNodeFailure(new Error("no answer within 500 ms")), false, "a slow node still serves");
  t.equal(isNodeFailure("text"), false);
});
