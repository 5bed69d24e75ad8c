// One primary of a six-node Redis Cluster (three primaries, three replicas, node timeout 2 s) SIGKILLed under
// steady load until its replica is promoted (docs/outages.md "Redis Cluster"): the healthy primaries' slots
// get not one error, the lost slots answer again within a second of the promotion, and Redis holds exactly
// the decisions that were answered as counted. Defaults (breaker on), a pipeline window, and mode allow.
import t from "tap";
import { requireBinaries } from "../../helpers/redis-servers.js";
import { counted, killPrimaryUnderLoad, tally } from "./cluster-load.js";
import { escaped, records, stats } from "./outage-harness.js";

/** What a decision on a lost slot may fail with, by failure mode (gRPC details in mode error). */
const LOST_SLOT_FAILURES = {
  error: [
    "redis: unavailable (circuit breaker open)",
    "redis: connection closed",
    // Its connection gone, ioredis sends the lost slots' commands to another node, which redirects them to
    // the lost one (until the breaker opens or the slot map names the replica).
    "redis: MOVED redirection",
    "redis: too many cluster redirections",
  ],
  allow: ["allow answer"],
} as const;

interface Variant {
  readonly name: string;
  readonly mode: "error" | "allow";
  readonly env: Record<string, string>;
}

const VARIANTS: readonly Variant[] = [
  { name: "defaults", mode: "error", env: {} },
  {
    name: "a pipeline window",
    mode: "error",
    env: { REDIS_PIPELINE_WINDOW: "1ms", REDIS_PIPELINE_LIMIT: "8" },
  },
  { name: "BACKEND_FAILURE_MODE=allow", mode: "allow", env: { BACKEND_FAILURE_MODE: "allow" } },
];

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  for (const variant of VARIANTS) {
    t.test(`a primary SIGKILLed under load, ${variant.name}`, async (t) => {
      const run = await killPrimaryUnderLoad(t, variant.env);
      const { cluster, daemon, groups, killedMs, promotedMs, firstAnswered } = run;
      const [doomed] = cluster.nodes;
      const replica = cluster.nodes[3]!;
      const doomedGroup = groups[0]!;

      // The healthy primaries' slots: every decision counted, none failed.
      for (const [i, group] of groups.entries()) {
        if (i === 0) continue;
        t.strictSame(
          tally(group.decisions),
          { counted: group.decisions.length },
          `${group.value}: no errors`,
        );
        t.ok(group.decisions.length >= 50, `${group.value}: ${group.decisions.length} decisions`);
      }
      // The lost slots: failures only between the kill and the promotion's first answer, and only the
      // failure mode's or the node's own.
      const failed = doomedGroup.decisions.filter((d) => !counted(d));
      const allowed = new Set<string>(LOST_SLOT_FAILURES[variant.mode]);
      const counts = tally(doomedGroup.decisions);
      t.ok(failed.length > 0, `${failed.length} decisions on the lost slots failed`);
      t.strictSame(
        Object.keys(counts).filter((what) => what !== "counted" && !allowed.has(what)),
        [],
        `lost slots fail only with ${[...allowed].join(" | ")}: ${JSON.stringify(counts)}`,
      );
      // The pool's clients each read the slot map again: one may lag another by a round trip (or by the
      // 250 ms between readings when a node it asked had not heard of the promotion yet).
      t.strictSame(
        failed.filter((d) => d.sentMs < killedMs - 5 || d.sentMs > promotedMs + 1000),
        [],
        "no failure before the kill nor from a second after the promotion",
      );
      const recoveryMs = firstAnswered.doneMs - promotedMs;
      t.ok(recoveryMs < 1000, `answered ${recoveryMs.toFixed(0)} ms after the promotion`);
      t.comment(
        `killed → promoted ${(promotedMs - killedMs).toFixed(0)} ms, promoted → answered ${recoveryMs.toFixed(0)} ms; ` +
          groups.map((g) => `${g.value}: ${JSON.stringify(tally(g.decisions))}`).join("; "),
      );

      // No count lost: Redis holds the warm-up's two and every decision answered as counted. On the lost
      // slots it may hold one more: a probe of the lost node admitted just as the slot map changed goes to
      // the promoted replica and counts there, but past its 100 ms its decision was answered by the failure
      // mode (docs/outages.md "Redis Cluster").
      for (const [i, group] of groups.entries()) {
        const value = Number(await healthyCli(cluster.nodes[1]!, group.key));
        const answered = 2 + group.decisions.filter(counted).length;
        if (i > 0) t.equal(value, answered, `${group.value}: counter`);
        else
          t.ok(
            value === answered || value === answered + 1,
            `${group.value}: ${value} counted, ${answered} answered`,
          );
      }

      // One warn line for the lost node, one when its slots are served again; the breaker's name it too.
      const lost = `127.0.0.1:${doomed!.port}`;
      const lines = records(daemon)
        .filter((r) => r.level === "warning" && r["@message"].includes(`node ${lost}`))
        .map((r) => r["@message"]);
      t.equal(lines.filter((m) => / lost: /.test(m)).length, 1, "one loss line");
      t.match(
        lines.find((m) => / lost: /.test(m)),
        new RegExp(`^redis ${escaped(cluster.url)}: node ${escaped(lost)} lost: connection closed \\(`),
      );
      t.equal(lines.filter((m) => / replaced after /.test(m)).length, 1, "one recovery line");
      t.match(
        lines.find((m) => / replaced after /.test(m)),
        new RegExp(
          `^redis ${escaped(cluster.url)}: node ${escaped(lost)} replaced after \\d+\\.\\d s: its slots are served by the primaries .*127\\.0\\.0\\.1:${replica.port}`,
        ),
      );
      const all = await stats(daemon);
      t.equal(all.get("ratelimit.backend.breaker_open"), 0, "no breaker open at the end");
      if (variant.mode === "allow") {
        t.equal(all.get("ratelimit.service.backend_failure.allow"), failed.length, "backend_failure.allow");
      }
    });
  }
}

/** GET `key` through the cluster (following MOVED) from a node that stayed up. */
function healthyCli(node: { cli(...args: string[]): Promise<string> }, key: string): Promise<string> {
  return node.cli("-c", "GET", key);
}
