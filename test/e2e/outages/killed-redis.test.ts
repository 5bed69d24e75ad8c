// redis-server SIGKILLed, then restarted on the same port (docs/outages.md): calls
// fail at once (refused, closed), the breaker opens after BACKEND_BREAKER_FAILURES of them,
// each failed probe doubles the cooldown up to BACKEND_BREAKER_MAX_COOLDOWN, and the first probe after the
// restart closes it. With REDIS_HEALTH_CHECK_ACTIVE_CONNECTION on, /healthcheck turns unhealthy in error mode
// only: in allow mode the daemon still answers every decision, so it stays 200.
import t from "tap";
import { type DaemonProcess, startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { httpRequest } from "../../helpers/http-request.js";
import { pollUntil } from "../../helpers/redis-process.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import { ask as askOnce, failureAnswer, outageEnv, RULES, request } from "./outage-answers.js";
import {
  breakerLines,
  escaped,
  type FailureMode,
  outageStats,
  sleep,
  stopAtTeardown,
  waitForBreakerLines,
  windowKey,
} from "./outage-harness.js";

const MODES: readonly FailureMode[] = ["error", "allow"];
const TIMEOUT_MS = 300;
const FAILURES = 3;
const COOLDOWN_MS = 500;
const MAX_COOLDOWN_MS = 2000;
const FAST = 5;
/** How long Redis stays down after the breakers opened: several probes, up to the capped cooldown. */
const DOWN_MS = 4500;
/** What a call on a dead server fails with, before the breaker opens and in a failed probe. */
const DEAD = /^redis: (connection (closed|reset|refused)|not connected)$/;
const BREAKER_OPEN = "redis: unavailable (circuit breaker open)";

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("SIGKILL and restart: error and allow mode, health, capped cooldown, recovery", async (t) => {
    const server = await startRedis(t);
    // The cause in the log names the deployment (the client is told only the reason).
    const gone = `redis ${escaped(server.url)}: (no connection is up: )?(connection closed by Redis|connect ECONNREFUSED ${escaped(server.url)})`;
    const runtimeRoot = t.testdir({ config: { "rules.yaml": RULES } });
    const daemons = new Map<FailureMode, DaemonProcess>();
    for (const mode of MODES) {
      const daemon = await startDaemon({
        ...outageEnv(server.url, mode, {
          timeoutMs: TIMEOUT_MS,
          failures: FAILURES,
          cooldownMs: COOLDOWN_MS,
        }),
        BACKEND_BREAKER_MAX_COOLDOWN: `${MAX_COOLDOWN_MS}ms`,
        REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: "true",
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
    const health = async (mode: FailureMode) => {
      const reply = await httpRequest(daemons.get(mode)!.httpPort, "/healthcheck");
      return { status: reply.status, body: reply.body };
    };
    /** Checks one answer given while Redis is down: `detail` is the error mode's gRPC message. */
    const expectFailure = (mode: FailureMode, answer: unknown, detail: RegExp | string, what: string) => {
      if (mode === "error") t.match(answer, { error: { code: 14, details: detail } }, what);
      else t.strictSame(answer, failureAnswer(mode, 0, ""), what);
    };

    await stayInsideWindow(60, 25);
    for (const mode of MODES) {
      t.match((await ask(mode)).answer, { overall_code: "OK" }, `${mode}: before`);
      t.strictSame(await health(mode), { status: 200, body: "OK" }, `${mode}: healthy before`);
    }

    await server.kill();
    const answered = new Map<FailureMode, number>();
    for (const mode of MODES) {
      const daemon = daemons.get(mode)!;
      for (let i = 1; i <= FAILURES; i++)
        expectFailure(mode, (await ask(mode)).answer, DEAD, `${mode} #${i}`);
      const [open] = await waitForBreakerLines(daemon, 1);
      t.match(
        open,
        new RegExp(`^counter store unavailable \\(${gone}\\), answering with failure mode ${mode}$`),
      );
      for (let i = 1; i <= FAST; i++) {
        const { outcome, answer } = await ask(mode);
        expectFailure(mode, answer, BREAKER_OPEN, `${mode} #${FAILURES + i}`);
        t.ok(outcome.ms < 100, `${mode} #${FAILURES + i} answered in ${outcome.ms.toFixed(1)} ms`);
      }
      answered.set(mode, FAILURES + FAST);
      t.strictSame(await outageStats(daemon, mode), {
        breakerOpen: 1,
        failures: FAILURES + FAST,
        redisErrors: FAILURES + FAST,
      });
    }
    await pollUntil(
      "error mode unhealthy",
      async () => ((await health("error")).status === 500 ? true : undefined),
      { timeoutMs: 5000 },
    );
    t.strictSame(
      await health("error"),
      { status: 500, body: "" },
      "error mode: unhealthy while Redis is down",
    );
    t.strictSame(
      await health("allow"),
      { status: 200, body: "OK" },
      "allow mode: healthy while Redis is down",
    );

    // Keep asking while Redis stays down: each cooldown ends in one failed probe.
    const downUntil = performance.now() + DOWN_MS;
    while (performance.now() < downUntil) {
      for (const mode of MODES) {
        const { answer } = await ask(mode);
        // Either the breaker's answer or a failed probe's: the error mode's message tells them apart.
        expectFailure(
          mode,
          answer,
          mode === "error" ? new RegExp(`${DEAD.source}|^${escaped(BREAKER_OPEN)}$`) : "",
          mode,
        );
        answered.set(mode, answered.get(mode)! + 1);
      }
      t.strictSame(await health("allow"), { status: 200, body: "OK" }, "allow mode stays healthy");
      await sleep(50);
    }
    for (const mode of MODES) {
      const daemon = daemons.get(mode)!;
      t.strictSame(
        await outageStats(daemon, mode),
        { breakerOpen: 1, failures: answered.get(mode), redisErrors: answered.get(mode) },
        `${mode}: every decision counted once`,
      );
      // Cooldowns after each failed probe: 1.0, 2.0, then capped at 2.0 s.
      const probes = breakerLines(daemon).slice(1);
      t.ok(probes.length >= 3, `${mode}: ${probes.length} failed probes`);
      t.strictSame(
        probes.map((line) => /, next probe in (\d+\.\d) s$/.exec(line)?.[1]),
        probes.map((_line, i) => (Math.min(COOLDOWN_MS * 2 ** (i + 1), MAX_COOLDOWN_MS) / 1000).toFixed(1)),
        `${mode}: cooldown doubled up to BACKEND_BREAKER_MAX_COOLDOWN`,
      );
      for (const line of probes) {
        t.match(
          line,
          new RegExp(
            `^counter store still unavailable after \\d+\\.\\d s \\(${gone}\\), next probe in \\d+\\.\\d s$`,
          ),
        );
      }
    }

    await server.restart();
    for (const mode of MODES) {
      const daemon = daemons.get(mode)!;
      await pollUntil(
        `${mode}: recovered`,
        async () => {
          await ask(mode);
          return breakerLines(daemon).at(-1)?.startsWith("counter store recovered") ? true : undefined;
        },
        { timeoutMs: 2 * MAX_COOLDOWN_MS + 5000, intervalMs: 100 },
      );
      t.match(breakerLines(daemon).at(-1), /^counter store recovered after \d+\.\d s$/);
      t.equal((await outageStats(daemon, mode)).breakerOpen, 0, `${mode}: gauge back to 0`);
      const key = windowKey("outage", "limited", mode, 60);
      const before = Number(await server.cli("GET", key));
      const { outcome } = await ask(mode);
      t.equal(Number(await server.cli("GET", key)), before + 1, `${mode}: counted in the restarted Redis`);
      t.equal(outcome.response?.statuses[0]?.limit_remaining ?? 0, Math.max(0, 10 - (before + 1)));
      t.strictSame(await health(mode), { status: 200, body: "OK" }, `${mode}: healthy again`);
    }
  });
}
