// One primary of a three-node Redis Cluster SIGKILLed, with BACKEND_FAILURE_MODE=deny (docs/outages.md). The survivors keep serving their slots
// (cluster-require-full-coverage no); a descriptor whose key hashes to a lost slot is denied on every
// decision. The breaker is one for the whole store: while it is open a descriptor on a surviving slot is
// denied too, and when that descriptor's decision is the probe it succeeds and closes the breaker.
import slotOf from "cluster-key-slot";
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { startCluster } from "../../helpers/redis-cluster.js";
import { requireBinaries } from "../../helpers/redis-servers.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import { ask as askOnce, failureAnswer, outageEnv, RULES, request } from "./outage-answers.js";
import {
  breakerLines,
  outageStats,
  sleep,
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
      for (let i = 1; i <= FAILURES; i++) {
        t.strictSame((await ask(lost)).answer, failureAnswer("deny", i, ""), `lost slot #${i}: denied`);
      }
      const [open] = await waitForBreakerLines(daemon, 1);
      t.match(open, /^counter store unavailable \((.+)\), answering with failure mode deny$/);
      for (let i = 1; i <= 3; i++) {
        const { outcome, answer } = await ask(lost);
        t.strictSame(answer, failureAnswer("deny", 0, ""), `lost slot, breaker open #${i}: denied`);
        t.ok(outcome.ms < 100, `answered in ${outcome.ms.toFixed(1)} ms`);
      }
      const { outcome, answer } = await ask(kept);
      t.strictSame(
        answer,
        failureAnswer("deny", 0, ""),
        "a surviving slot is denied while the breaker is open",
      );
      t.ok(outcome.ms < 100, `answered in ${outcome.ms.toFixed(1)} ms`);
      t.strictSame(await outageStats(daemon, "deny"), { breakerOpen: 1, failures: 7, redisErrors: 7 });
      t.equal(await survivor!.cli("GET", keptKey), "1", "nothing sent while open");

      // The cooldown over, the surviving slot's decision is the probe: it succeeds and closes the breaker.
      await sleep(COOLDOWN_MS + 100);
      const probe = await ask(kept);
      t.match(probe.answer, { overall_code: "OK", statuses: [{ code: "OK", limit_remaining: 8 }] }, "probe");
      t.equal(await survivor!.cli("GET", keptKey), "2", "counted on the surviving primary");
      t.match(breakerLines(daemon)[1], /^counter store recovered after \d+\.\d s$/);
      t.equal((await outageStats(daemon, "deny")).breakerOpen, 0);
      const again = await ask(lost);
      t.strictSame(again.answer, failureAnswer("deny", 0, ""), "the lost slot is still denied");
      t.strictSame(await outageStats(daemon, "deny"), { breakerOpen: 0, failures: 8, redisErrors: 8 });
    },
  );
}
