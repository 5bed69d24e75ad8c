// A sentinel failover under traffic with BACKEND_FAILURE_MODE=local (docs/outages.md): the primary is SIGKILLed and the sentinels promote the replica (3–6 s). Every decision
// made meanwhile is answered — by Redis, or by the in-process limiter while Redis cannot — none waits longer
// than REDIS_TIMEOUT, and once the daemon has found the new primary a probe closes the breaker and the counts
// go to the promoted server.
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { pollUntil } from "../../helpers/redis-process.js";
import { startSentinelGroup } from "../../helpers/redis-sentinel.js";
import { requireBinaries } from "../../helpers/redis-servers.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import { outageEnv, RULES, roomy } from "./outage-answers.js";
import {
  breakerLines,
  type Outcome,
  outageStats,
  sleep,
  stopAtTeardown,
  timed,
  windowKey,
} from "./outage-harness.js";

const TIMEOUT_MS = 300;
const COOLDOWN_MS = 500;

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "sentinel failover in local mode: every decision answered, then the new primary counts",
    async (t) => {
      const group = await startSentinelGroup(t);
      const daemon = await startDaemon({
        ...outageEnv(group.sentinelUrl, "local", {
          timeoutMs: TIMEOUT_MS,
          failures: 3,
          cooldownMs: COOLDOWN_MS,
        }),
        REDIS_TYPE: "sentinel",
        RUNTIME_ROOT: t.testdir({ config: { "rules.yaml": RULES } }),
      });
      stopAtTeardown(t, daemon);
      const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
      t.teardown(() => client.close());
      const ask = () => timed(() => client.shouldRateLimit(roomy("failover")));
      // The window's key once the wait is over: a wait that crosses the hour starts a new window.
      await stayInsideWindow(3600, 60);
      const key = windowKey("outage", "roomy", "failover", 3600);
      for (let i = 0; i < 3; i++) t.equal((await ask()).response?.overall_code, "OK", `before #${i + 1}`);
      t.equal(await group.primary.cli("GET", key), "3", "counted on the primary");

      // Decisions every 50 ms from before the kill until the promoted server has answered ROLE as master.
      const outcomes: Outcome[] = [];
      let failingOver = true;
      const traffic = (async () => {
        while (failingOver) {
          outcomes.push(await ask());
          await sleep(50);
        }
      })();
      await sleep(200);
      const promotedAddress = await group.failover().finally(() => {
        failingOver = false;
      });
      await traffic;
      const promoted = [group.primary, group.replica].find((server) => server.port === promotedAddress.port)!;
      t.equal(promoted, group.replica, "the replica was promoted");

      t.ok(outcomes.length >= 20, `${outcomes.length} decisions during the failover`);
      t.strictSame(
        outcomes.filter((o) => o.error !== undefined).map((o) => o.error),
        [],
        "no decision failed",
      );
      t.strictSame(
        [...new Set(outcomes.map((o) => `${o.response?.overall_code} ${o.response?.statuses[0]?.code}`))],
        ["OK OK"],
        "every one OK",
      );
      const slowest = Math.max(...outcomes.map((o) => o.ms));
      t.ok(slowest < TIMEOUT_MS + 200, `none waited beyond REDIS_TIMEOUT: slowest ${slowest.toFixed(0)} ms`);
      const during = await outageStats(daemon, "local");
      t.ok((during.failures ?? 0) > 0, `${during.failures} decisions answered by the local limiter`);
      t.equal(during.redisErrors, during.failures, "each also counted as a redis_error");
      t.match(
        breakerLines(daemon)[0],
        /^counter store unavailable \((.+)\), answering with failure mode local$/,
        "the breaker opened",
      );

      await pollUntil(
        "recovered on the new primary",
        async () => {
          await ask();
          return breakerLines(daemon).at(-1)?.startsWith("counter store recovered") ? true : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      t.match(breakerLines(daemon).at(-1), /^counter store recovered after \d+\.\d s$/);
      t.equal((await outageStats(daemon, "local")).breakerOpen, 0, "gauge back to 0");
      const before = Number(await promoted.cli("GET", key));
      const { response } = await ask();
      t.equal(Number(await promoted.cli("GET", key)), before + 1, "counted on the promoted server");
      t.equal(response?.statuses[0]?.limit_remaining, 1_000_000 - (before + 1), "Redis's count answers");
    },
  );
}
