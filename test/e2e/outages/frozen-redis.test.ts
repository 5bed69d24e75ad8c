// A redis-server frozen with SIGSTOP (docs/outages.md): the connection stays up but
// nothing answers. One daemon per failure mode on one Redis: the first call waits for REDIS_TIMEOUT (the
// connection is then dropped and the next calls fail at once), BACKEND_BREAKER_FAILURES failed calls open the
// breaker, and every decision is then answered by the mode without waiting; a probe after the cooldown fails
// and doubles it; after SIGCONT the next probe closes the breaker and Redis counts again. Local mode
// (BACKEND_LOCAL_LIMIT_FRACTION=0.5) counts in memory against half of each limit and writes none of it to
// Redis.
import t from "tap";
import { type DaemonProcess, startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { freePort } from "../../helpers/free-port.js";
import { httpRequest } from "../../helpers/http-request.js";
import { parsePrometheusText, seriesValue } from "../../helpers/prometheus-text.js";
import { pollUntil } from "../../helpers/redis-process.js";
import { requireBinaries, startRedis } from "../../helpers/redis-servers.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import {
  ask as askOnce,
  failureAnswer,
  limitedOnly,
  outageEnv,
  RULES,
  request,
  UINT32_MAX,
} from "./outage-answers.js";
import {
  breakerLines,
  escaped,
  type FailureMode,
  freezer,
  occurrences,
  outageStats,
  records,
  sleep,
  stopAtTeardown,
  waitForBreakerLines,
  windowKey,
  withoutCount,
} from "./outage-harness.js";

const MODES: readonly FailureMode[] = ["error", "allow", "deny", "local"];
const TIMEOUT_MS = 300;
const FAILURES = 3;
const COOLDOWN_MS = 1000;
/** Decisions answered while the breaker is open, each expected well under REDIS_TIMEOUT. */
const FAST = 5;
const BREAKER_OPEN = "redis: unavailable (circuit breaker open)";
/** The log's cause for the probe's decision, answered by the mode while the probe waits on. */
const PROBE_WAITED = "redis: unavailable (circuit breaker open: its probe has had no answer for 100 ms)";

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "SIGSTOP: breaker opens after 3 timeouts, each mode answers at once, SIGCONT recovers",
    async (t) => {
      const server = await startRedis(t);
      const redis = await freezer(t, server);
      // The cause in the log names the deployment; the connection may already be gone after the first timeout.
      const timedOut = `redis ${escaped(server.url)}: (no connection is up: )?no answer within ${TIMEOUT_MS} ms`;
      const runtimeRoot = t.testdir({ config: { "rules.yaml": RULES } });
      const prometheusPort = await freePort();
      const daemons = new Map<FailureMode, DaemonProcess>();
      for (const mode of MODES) {
        const daemon = await startDaemon({
          ...outageEnv(server.url, mode, {
            timeoutMs: TIMEOUT_MS,
            failures: FAILURES,
            cooldownMs: COOLDOWN_MS,
          }),
          ...(mode === "local" ? { BACKEND_LOCAL_LIMIT_FRACTION: "0.5" } : {}),
          ...(mode === "allow"
            ? { USE_PROMETHEUS: "true", PROMETHEUS_ADDR: `127.0.0.1:${prometheusPort}` }
            : {}),
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
      const ask = (mode: FailureMode, body: object = request(mode)) =>
        askOnce(() => clients.get(mode)!.shouldRateLimit(body));

      // Everything from the first Redis write to the last GET stays inside one minute window.
      await stayInsideWindow(60, 25);
      for (const mode of MODES) {
        const { answer } = await ask(mode);
        t.match(answer, { overall_code: "OK" }, `${mode}: Redis answers before the outage`);
        t.strictSame(await outageStats(daemons.get(mode)!, mode), {
          breakerOpen: 0,
          failures: 0,
          redisErrors: 0,
        });
      }
      const localOnly = windowKey("outage", "limited", "local-only", 60);
      for (let i = 0; i < 2; i++) await ask("local", limitedOnly("local-only"));
      t.equal(await server.cli("GET", localOnly), "2", "2 counted in Redis before the outage");

      const answered = new Map<FailureMode, number>(MODES.map((mode) => [mode, 0]));
      redis.freeze();
      try {
        for (const mode of MODES) {
          const daemon = daemons.get(mode)!;
          await t.test(`${mode}: ${FAILURES} timeouts open the breaker`, async (t) => {
            for (let i = 1; i <= FAILURES; i++) {
              const { outcome, answer } = await ask(mode);
              t.strictSame(
                answer,
                failureAnswer(mode, i, `redis: no answer within ${TIMEOUT_MS} ms`),
                `#${i}`,
              );
              // The first call went out on a live connection; the driver may fail the next ones sooner
              // (reconnecting after the timeout), which the breaker counts all the same.
              if (i === 1) t.ok(outcome.ms >= TIMEOUT_MS - 20, `#1 waited: ${outcome.ms.toFixed(0)} ms`);
            }
            answered.set(mode, FAILURES);
            const [open] = await waitForBreakerLines(daemon, 1);
            t.match(
              open,
              new RegExp(
                `^counter store unavailable \\(${timedOut}\\), answering with failure mode ${mode}$`,
              ),
            );
            t.strictSame(await outageStats(daemon, mode), {
              breakerOpen: 1,
              failures: FAILURES,
              redisErrors: FAILURES,
            });
          });
          await t.test(`${mode}: while open, answered by the mode without waiting`, async (t) => {
            for (let i = 1; i <= FAST; i++) {
              const nth = FAILURES + i;
              const { outcome, answer } = await ask(mode);
              t.strictSame(answer, failureAnswer(mode, nth, BREAKER_OPEN), `#${nth}`);
              t.ok(outcome.ms < 100, `#${nth} answered in ${outcome.ms.toFixed(1)} ms`);
            }
            answered.set(mode, FAILURES + FAST);
            if (mode === "local") {
              // A descriptor first counted while the breaker is open: 5 of its 10 pass, the 6th does not.
              for (let i = 1; i <= 6; i++) {
                const { outcome } = await ask(mode, limitedOnly("local-only"));
                t.ok(outcome.ms < 100, `local-only #${i} answered in ${outcome.ms.toFixed(1)} ms`);
                t.strictSame(
                  outcome.response?.statuses.map((s) => [s.code, s.limit_remaining ?? 0]),
                  [[i <= 5 ? "OK" : "OVER_LIMIT", Math.max(0, 5 - i)]],
                  `local-only #${i}`,
                );
              }
              answered.set(mode, FAILURES + FAST + 6);
            }
            if (mode === "error" || mode === "allow") {
              const reply = await httpRequest(daemon.httpPort, "/json", {
                method: "POST",
                body: JSON.stringify(request(mode)),
              });
              answered.set(mode, answered.get(mode)! + 1);
              if (mode === "error") {
                t.strictSame(
                  { status: reply.status, body: reply.body },
                  { status: 400, body: "Bad Request\n" },
                );
              } else {
                t.equal(reply.status, 200, "/json status");
                const body = JSON.parse(reply.body) as { statuses: { durationUntilReset?: string }[] };
                for (const status of body.statuses) {
                  if (/^\d+s$/.test(status.durationUntilReset ?? "")) status.durationUntilReset = "window";
                }
                t.strictSame(body, {
                  overallCode: "OK",
                  statuses: [
                    {
                      code: "OK",
                      currentLimit: { requestsPerUnit: 10, unit: "MINUTE" },
                      limitRemaining: 9,
                      durationUntilReset: "window",
                    },
                    {
                      code: "OK",
                      currentLimit: { requestsPerUnit: 10, unit: "MINUTE" },
                      limitRemaining: 9,
                      durationUntilReset: "window",
                    },
                    { code: "OK", limitRemaining: UINT32_MAX },
                    { code: "OK" },
                  ],
                });
              }
            }
            t.strictSame(await outageStats(daemon, mode), {
              breakerOpen: 1,
              failures: answered.get(mode),
              redisErrors: answered.get(mode),
            });
            const health = await httpRequest(daemon.httpPort, "/healthcheck");
            if (mode !== "error") t.equal(health.status, 200, "/healthcheck stays 200");
          });
        }

        await t.test("the allow daemon's Prometheus metrics", async (t) => {
          const families = parsePrometheusText(
            (await httpRequest(daemons.get("allow")!.debugPort, "/metrics")).body,
          );
          t.equal(seriesValue(families, "ratelimit_backend_breaker_open"), 1);
          t.equal(
            seriesValue(families, "ratelimit_service_backend_failure", { mode: "allow" }),
            answered.get("allow"),
          );
          t.equal(
            seriesValue(families, "ratelimit_service_should_rate_limit_error", { err_type: "redis_error" }),
            answered.get("allow"),
            "the reference's redis_error series counts the same decisions",
          );
        });

        // Every breaker has been open for more than its cooldown: the next decision is the probe, which
        // fails against the frozen server and opens the breaker again for twice the cooldown. The probe's
        // decision waits at most 100 ms, then the mode answers it while the probe goes on to its timeout.
        await sleep(COOLDOWN_MS + 100);
        for (const mode of MODES) {
          await t.test(`${mode}: a failed probe doubles the cooldown`, async (t) => {
            const daemon = daemons.get(mode)!;
            const nth = answered.get(mode)! + 1;
            const { answer, outcome } = await ask(mode);
            answered.set(mode, nth);
            // The main request's own count (local mode): the timeouts, the fast ones and this probe.
            const probe = FAILURES + FAST + 1;
            t.strictSame(answer, failureAnswer(mode, probe, BREAKER_OPEN));
            t.ok(
              outcome.ms >= 90 && outcome.ms < TIMEOUT_MS,
              `the probe's decision took ${outcome.ms.toFixed(0)} ms`,
            );
            const lines = await waitForBreakerLines(daemon, 2);
            t.match(
              lines[1],
              new RegExp(
                `^counter store still unavailable after \\d+\\.\\d s \\(${timedOut}\\), next probe in ${((2 * COOLDOWN_MS) / 1000).toFixed(1)} s$`,
              ),
            );
            t.strictSame(await outageStats(daemon, mode), {
              breakerOpen: 1,
              failures: nth,
              redisErrors: nth,
            });
          });
        }

        await t.test("allow, deny and local log the decisions they answered, throttled", async (t) => {
          for (const mode of ["allow", "deny", "local"] as const) {
            const daemon = daemons.get(mode)!;
            const failed = () =>
              records(daemon).filter((r) => r["@message"].startsWith("counter store failed ("));
            const counted = () => failed().reduce((sum, r) => sum + occurrences(r["@message"]), 0);
            await pollUntil(
              `${mode}: the held lines written`,
              async () => (counted() === answered.get(mode) ? true : undefined),
              {
                timeoutMs: 3000,
              },
            ).catch(() => {});
            t.equal(counted(), answered.get(mode), `${mode}: one count per decision answered by the mode`);
            for (const r of failed()) {
              t.equal(r.level, "warning");
              t.match(
                withoutCount(r["@message"]),
                new RegExp(
                  `^counter store failed \\((${timedOut}|${escaped(BREAKER_OPEN)}|${escaped(PROBE_WAITED)})\\), answered with failure mode ${mode}$`,
                ),
              );
            }
            t.ok(failed().length < counted(), `${mode}: ${failed().length} lines for ${counted()} decisions`);
          }
        });
      } finally {
        redis.thaw();
      }

      for (const mode of MODES) {
        await t.test(
          `${mode}: after SIGCONT the next probe closes the breaker and Redis counts`,
          async (t) => {
            const daemon = daemons.get(mode)!;
            await pollUntil(
              `${mode}: recovered`,
              async () => {
                await ask(mode);
                return breakerLines(daemon).length === 3 ? true : undefined;
              },
              { timeoutMs: 4 * COOLDOWN_MS + 3000, intervalMs: 100 },
            );
            const lines = breakerLines(daemon);
            t.match(lines[2], /^counter store recovered after \d+\.\d s$/);
            t.equal((await outageStats(daemon, mode)).breakerOpen, 0, "gauge back to 0");
            const key = windowKey("outage", "limited", mode, 60);
            const before = Number(await server.cli("GET", key));
            const { outcome } = await ask(mode);
            t.equal(Number(await server.cli("GET", key)), before + 1, "the decision counted in Redis");
            t.equal(outcome.response?.statuses[0]?.limit_remaining ?? 0, Math.max(0, 10 - (before + 1)));
            t.equal(
              outcome.response?.statuses[0]?.current_limit?.requests_per_unit,
              10,
              "the full limit again",
            );
          },
        );
      }

      await t.test("local mode's counts were never written to Redis", async (t) => {
        t.equal(await server.cli("GET", localOnly), "2", "still the 2 counted before the outage");
        const { outcome } = await ask("local", limitedOnly("local-only"));
        t.strictSame(
          outcome.response?.statuses.map((s) => [s.code, s.limit_remaining]),
          [["OK", 7]],
          "Redis counts on from 2",
        );
        t.equal(await server.cli("GET", localOnly), "3");
      });
    },
  );
}
