// `CLIENT PAUSE <ms> ALL` (Redis ≥ 6.2): the server holds every client's commands until the pause ends, as
// a long fork or a stuck AOF rewrite would. Two daemons (error and deny mode) on that Redis: the breaker opens
// after BACKEND_BREAKER_FAILURES timeouts, decisions are answered at once while it is open, and once the pause
// has expired the next probe closes it and Redis counts again (README, BACKEND_FAILURE_MODE).
import t from "tap";
import { type DaemonProcess, startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { pollUntil } from "../../helpers/redis-process.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import { ask as askOnce, failureAnswer, outageEnv, RULES, request } from "./outage-answers.js";
import {
  breakerLines,
  type FailureMode,
  outageStats,
  stopAtTeardown,
  waitForBreakerLines,
  windowKey,
} from "./outage-harness.js";

const MODES: readonly FailureMode[] = ["error", "deny"];
const TIMEOUT_MS = 300;
const FAILURES = 3;
const COOLDOWN_MS = 500;
const FAST = 5;
const PAUSE_MS = 5000;

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("CLIENT PAUSE ALL: the breaker opens, answers at once, closes after the pause", async (t) => {
    const server = await startRedis(t);
    const runtimeRoot = t.testdir({ config: { "rules.yaml": RULES } });
    const daemons = new Map<FailureMode, DaemonProcess>();
    for (const mode of MODES) {
      const daemon = await startDaemon({
        ...outageEnv(server.url, mode, {
          timeoutMs: TIMEOUT_MS,
          failures: FAILURES,
          cooldownMs: COOLDOWN_MS,
        }),
        RUNTIME_ROOT: runtimeRoot,
      });
      stopAtTeardown(t, daemon);
      daemons.set(mode, daemon);
    }
    const clients = new Map(
      MODES.map((mode) => [mode, envoyRlsClient(`127.0.0.1:${daemons.get(mode)!.grpcPort}`)] as const),
    );
    t.teardown(() => {
      for (const client of clients.values()) client.close();
    });
    const ask = (mode: FailureMode) => askOnce(() => clients.get(mode)!.shouldRateLimit(request(mode)));

    await stayInsideWindow(60, 20);
    for (const mode of MODES) t.match((await ask(mode)).answer, { overall_code: "OK" }, `${mode}: before`);

    // redis-cli's own reply comes before the pause takes hold; every later command waits for its end.
    t.equal(await server.cli("CLIENT", "PAUSE", String(PAUSE_MS), "ALL"), "OK");
    const pauseEnds = performance.now() + PAUSE_MS;
    for (const mode of MODES) {
      const daemon = daemons.get(mode)!;
      await t.test(`${mode}: ${FAILURES} timeouts open the breaker, then answers at once`, async (t) => {
        for (let i = 1; i <= FAILURES; i++) {
          const { outcome, answer } = await ask(mode);
          t.strictSame(answer, failureAnswer(mode, i, `redis: no answer within ${TIMEOUT_MS} ms`), `#${i}`);
          if (i === 1) t.ok(outcome.ms >= TIMEOUT_MS - 20, `#1 waited: ${outcome.ms.toFixed(0)} ms`);
        }
        const [open] = await waitForBreakerLines(daemon, 1);
        t.match(
          open,
          new RegExp(`^counter store unavailable \\((.+)\\), answering with failure mode ${mode}$`),
        );
        for (let i = 1; i <= FAST; i++) {
          const { outcome, answer } = await ask(mode);
          t.strictSame(
            answer,
            failureAnswer(mode, FAILURES + i, "redis: unavailable (circuit breaker open)"),
            `#${FAILURES + i}`,
          );
          t.ok(outcome.ms < 100, `#${FAILURES + i} answered in ${outcome.ms.toFixed(1)} ms`);
        }
        t.strictSame(await outageStats(daemon, mode), {
          breakerOpen: 1,
          failures: FAILURES + FAST,
          redisErrors: FAILURES + FAST,
        });
      });
    }
    t.ok(performance.now() < pauseEnds, "all of it within the pause");

    for (const mode of MODES) {
      await t.test(`${mode}: after the pause, a probe closes the breaker and Redis counts`, async (t) => {
        const daemon = daemons.get(mode)!;
        await pollUntil(
          `${mode}: recovered`,
          async () => {
            await ask(mode);
            return breakerLines(daemon).at(-1)?.startsWith("counter store recovered") ? true : undefined;
          },
          { timeoutMs: PAUSE_MS + 8 * COOLDOWN_MS + 3000, intervalMs: 100 },
        );
        const lines = breakerLines(daemon);
        t.match(lines[0], /^counter store unavailable /);
        t.ok(
          lines.slice(1, -1).every((line) => /^counter store still unavailable after /.test(line)),
          "only failed probes between the open and the close",
        );
        t.match(lines.at(-1), /^counter store recovered after \d+\.\d s$/);
        t.equal((await outageStats(daemon, mode)).breakerOpen, 0, "gauge back to 0");
        const key = windowKey("outage", "limited", mode, 60);
        const before = Number(await server.cli("GET", key));
        const { outcome } = await ask(mode);
        t.equal(Number(await server.cli("GET", key)), before + 1, "the decision counted in Redis");
        t.equal(outcome.response?.statuses[0]?.limit_remaining ?? 0, Math.max(0, 10 - (before + 1)));
      });
    }
  });
}
