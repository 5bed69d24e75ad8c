// One primary of a three-node Redis Cluster SIGKILLed, with BACKEND_FAILURE_MODE=deny (docs/outages.md "Redis
// Cluster"). The survivors keep serving their slots (cluster-require-full-coverage no); a descriptor whose
// key hashes to a lost slot is denied on every decision. The breaker is one per primary: the lost node's
// opens and refuses only its slots, a surviving slot is counted all along, and the lost node's probe fails
// and opens its breaker again.
import slotOf from "cluster-key-slot";
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { startCluster } from "../../helpers/redis-cluster.js";
import { requireBinaries } from "../../helpers/redis-servers.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import { ask as askOnce, failureAnswer, outageEnv, RULES, request } from "./outage-answers.js";
import {
  escaped,
  outageStats,
  records,
  sleep,
  stats,
  stopAtTeardown,
  waitForBreakerLines,
  windowKey,
} from "./outage-harness.js";

const TIMEOUT_MS = 300;
const FAILURES = 3;
const COOLDOWN_MS = 500;

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "cluster primary lost: its slots denied, the others served when the breaker lets them",
    async (t) => {
      const cluster = await startCluster(t);
      for (const node of cluster.nodes) {
        t.equal(await node.cli("CONFIG", "SET", "cluster-require-full-coverage", "no"), "OK");
      }
      const daemon = await startDaemon({
        ...outageEnv(cluster.url, "deny", {
          timeoutMs: TIMEOUT_MS,
          failures: FAILURES,
          cooldownMs: COOLDOWN_MS,
        }),
        REDIS_TYPE: "cluster",
        RUNTIME_ROOT: t.testdir({ config: { "rules.yaml": RULES } }),
      });
      stopAtTeardown(t, daemon);
      const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
      t.teardown(() => client.close());
      const ask = (value: string) => askOnce(() => client.shouldRateLimit(request(value)));

      await stayInsideWindow(60, 25);
      // Each node's own slot ranges, from the `myself` line of CLUSTER NODES.
      const ranges = await Promise.all(
        cluster.nodes.map(async (node) => {
          const mine = (await node.cli("CLUSTER", "NODES"))
            .split("\n")
            .find((line) => line.includes("myself"))!;
          return mine
            .split(" ")
            .slice(8)
            .map((range) => range.split("-").map(Number));
        }),
      );
      const owns = (index: number, key: string) =>
        ranges[index]!.some(([from, to = from]) => slotOf(key) >= from! && slotOf(key) <= to!);
      /** A descriptor value whose limited and shadow keys both live on node `index`. */
      const valueOn = (index: number) => {
        for (let i = 0; ; i++) {
          const keys = ["limited", "shadow"].map((k) => windowKey("outage", k, `v${i}`, 60));
          if (keys.every((key) => owns(index, key))) return `v${i}`;
        }
      };
      const [doomed, survivor] = cluster.nodes;
      const lost = valueOn(0);
      const kept = valueOn(1);
      const lostKey = windowKey("outage", "limited", lost, 60);
      const keptKey = windowKey("outage", "limited", kept, 60);
      for (const value of [lost, kept]) t.match((await ask(value)).answer, { overall_code: "OK" }, value);
      t.equal(await doomed!.cli("GET", lostKey), "1");
      t.equal(await survivor!.cli("GET", keptKey), "1");

      await doomed!.kill();
      const node = `127.0.0.1:${doomed!.port}`;
      for (let i = 1; i <= FAILURES; i++) {
        t.strictSame((await ask(lost)).answer, failureAnswer("deny", i, ""), `lost slot #${i}: denied`);
      }
      const [open] = await waitForBreakerLines(daemon, 1);
      t.match(
        open,
        new RegExp(
          `^counter store node ${escaped(node)} unavailable \\((.+)\\), answering its slots with failure mode deny$`,
        ),
      );
      for (let i = 1; i <= 3; i++) {
        const { outcome, answer } = await ask(lost);
        t.strictSame(answer, failureAnswer("deny", 0, ""), `lost slot, breaker open #${i}: denied`);
        t.ok(outcome.ms < 100, `answered in ${outcome.ms.toFixed(1)} ms`);
      }
      const { answer } = await ask(kept);
      t.match(
        answer,
        { overall_code: "OK", statuses: [{ code: "OK", limit_remaining: 8 }] },
        "a surviving slot is counted while the lost node's breaker is open",
      );
      t.equal(await survivor!.cli("GET", keptKey), "2", "counted on the surviving primary");
      // A request on both nodes is answered by the failure mode as a whole, and nothing of it is sent.
      const spanning = await askOnce(() =>
        client.shouldRateLimit({
          domain: "outage",
          descriptors: [lost, kept].map((value) => ({ entries: [{ key: "limited", value }] })),
        }),
      );
      t.strictSame(
        spanning.answer,
        {
          overall_code: "OVER_LIMIT",
          statuses: [lost, kept].map(() => ({
            code: "OVER_LIMIT",
            current_limit: { requests_per_unit: 10, unit: "MINUTE" },
            duration_until_reset: { seconds: "window" },
          })),
        },
        "a request spanning the lost and a surviving node: denied whole",
      );
      t.equal(await survivor!.cli("GET", keptKey), "2", "its surviving descriptor not counted");
      t.strictSame(await outageStats(daemon, "deny"), { breakerOpen: 1, failures: 7, redisErrors: 7 });
      t.equal(
        (await stats(daemon)).get(`ratelimit.backend.breaker_open.__node=${node}`),
        1,
        "the node's gauge",
      );

      // The cooldown over, the lost slot's decision is the node's probe: it fails, the breaker opens again.
      await sleep(COOLDOWN_MS + 100);
      const probe = await ask(lost);
      t.strictSame(probe.answer, failureAnswer("deny", 0, ""), "probe: denied");
      const [, again] = await waitForBreakerLines(daemon, 2);
      t.match(
        again,
        new RegExp(
          `^counter store node ${escaped(node)} still unavailable after \\d+\\.\\d s \\(.+\\), next probe in 1\\.0 s$`,
        ),
      );
      t.match((await ask(kept)).answer, { overall_code: "OK", statuses: [{ limit_remaining: 7 }] });
      t.strictSame(await outageStats(daemon, "deny"), { breakerOpen: 1, failures: 8, redisErrors: 8 });
      const lossLines = records(daemon)
        .map((r) => r["@message"])
        .filter((m) => m.includes(`node ${node} lost: `));
      t.equal(lossLines.length, 1, "the node's loss logged once");
    },
  );
}
