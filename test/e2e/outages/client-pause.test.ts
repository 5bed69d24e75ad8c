// `CLIENT PAUSE <ms> ALL` (Redis ≥ 6.2): the server holds every client's commands until the pause ends, as
// a long fork or a stuck AOF rewrite would (docs/outages.md). Four daemons on that
// Redis: error and deny mode, deny under SHADOW_MODE=true, and allow mode with the breaker turned off
// (BACKEND_BREAKER_FAILURES=0). With a breaker it opens after BACKEND_BREAKER_FAILURES timeouts, decisions
// are answered at once while it is open, and once the pause has expired the next probe closes it and Redis
// counts again; without one each failed call is answered by the mode and nothing opens.
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
  type FailureMode,
  outageStats,
  stopAtTeardown,
  waitForBreakerLines,
  windowKey,
} from "./outage-harness.js";

const TIMEOUT_MS = 300;
const FAILURES = 3;
const COOLDOWN_MS = 500;
const FAST = 5;
const PAUSE_MS = 6000;
const BREAKER_OPEN = "redis: unavailable (circuit breaker open)";

/** One daemon: its failure mode and what else differs; `name` is also its descriptors' value. */
interface Variant {
  readonly name: string;
  readonly mode: FailureMode;
  readonly env: Record<string, string>;
  /** The breaker is on (BACKEND_BREAKER_FAILURES=3) or off (0). */
  readonly breaker: boolean;
}
const VARIANTS: readonly Variant[] = [
  { name: "error", mode: "error", env: {}, breaker: true },
  { name: "deny", mode: "deny", env: {}, breaker: true },
  { name: "deny-shadow", mode: "deny", env: { SHADOW_MODE: "true" }, breaker: true },
  { name: "allow-unguarded", mode: "allow", env: { BACKEND_BREAKER_FAILURES: "0" }, breaker: false },
];

/** The failure mode's answer; SHADOW_MODE=true keeps the descriptors' codes and turns the overall to OK. */
const expected = (variant: Variant, detail: string) => {
  const answer = failureAnswer(variant.mode, 0, detail) as object;
  return variant.env.SHADOW_MODE ? { ...answer, overall_code: "OK" } : answer;
};

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test("CLIENT PAUSE ALL: the breaker opens, answers at once, closes after the pause", async (t) => {
    const server = await startRedis(t);
    const runtimeRoot = t.testdir({ config: { "rules.yaml": RULES } });
    const daemons = new Map<string, DaemonProcess>();
    for (const variant of VARIANTS) {
      const daemon = await startDaemon({
        ...outageEnv(server.url, variant.mode, {
          timeoutMs: TIMEOUT_MS,
          failures: FAILURES,
          cooldownMs: COOLDOWN_MS,
        }),
        ...variant.env,
        RUNTIME_ROOT: runtimeRoot,
      });
      stopAtTeardown(t, daemon);
      daemons.set(variant.name, daemon);
    }
    const clients = new Map(
      VARIANTS.map((v) => [v.name, envoyRlsClient(`127.0.0.1:${daemons.get(v.name)!.grpcPort}`)] as const),
    );
    t.teardown(() => {
      for (const client of clients.values()) client.close();
    });
    const ask = (name: string) => askOnce(() => clients.get(name)!.shouldRateLimit(request(name)));

    await stayInsideWindow(60, 25);
    for (const { name } of VARIANTS)
      t.match((await ask(name)).answer, { overall_code: "OK" }, `${name}: before`);

    // redis-cli's own reply comes before the pause takes hold; every later command waits for its end.
    t.equal(await server.cli("CLIENT", "PAUSE", String(PAUSE_MS), "ALL"), "OK");
    const pauseEnds = performance.now() + PAUSE_MS;
    for (const variant of VARIANTS.filter((v) => v.breaker)) {
      const { name, mode } = variant;
      const daemon = daemons.get(name)!;
      await t.test(`${name}: ${FAILURES} timeouts open the breaker, then answers at once`, async (t) => {
        for (let i = 1; i <= FAILURES; i++) {
          const { outcome, answer } = await ask(name);
          t.strictSame(answer, expected(variant, `redis: no answer within ${TIMEOUT_MS} ms`), `#${i}`);
          if (i === 1) t.ok(outcome.ms >= TIMEOUT_MS - 20, `#1 waited: ${outcome.ms.toFixed(0)} ms`);
        }
        const [open] = await waitForBreakerLines(daemon, 1);
        t.match(
          open,
          new RegExp(`^counter store unavailable \\((.+)\\), answering with failure mode ${mode}$`),
        );
        for (let i = 1; i <= FAST; i++) {
          const { outcome, answer } = await ask(name);
          t.strictSame(answer, expected(variant, BREAKER_OPEN), `#${FAILURES + i}`);
          t.ok(outcome.ms < 100, `#${FAILURES + i} answered in ${outcome.ms.toFixed(1)} ms`);
        }
        let answered = FAILURES + FAST;
        if (name === "deny") {
          const reply = await httpRequest(daemon.httpPort, "/json", {
            method: "POST",
            body: JSON.stringify(request(name)),
          });
          answered++;
          t.equal(reply.status, 429, "/json: 429 for OVER_LIMIT");
          t.match(JSON.parse(reply.body), {
            overallCode: "OVER_LIMIT",
            statuses: [
              { code: "OVER_LIMIT", currentLimit: { requestsPerUnit: 10, unit: "MINUTE" } },
              { code: "OK" },
            ],
          });
        }
        t.strictSame(await outageStats(daemon, mode), {
          breakerOpen: 1,
          failures: answered,
          redisErrors: answered,
        });
      });
    }
    await t.test("allow without a breaker: answered by the mode, the gauge stays 0", async (t) => {
      const variant = VARIANTS.find((v) => !v.breaker)!;
      const daemon = daemons.get(variant.name)!;
      for (let i = 1; i <= 4; i++) {
        const { outcome, answer } = await ask(variant.name);
        t.strictSame(answer, expected(variant, ""), `#${i}`);
        // The first call times out on the live connection, which is then dropped; the next ones fail at once
        // while no connection is up (docs/backends.md "What clients see, what the log says").
        if (i === 1) t.ok(outcome.ms >= TIMEOUT_MS - 20, `#1 waited: ${outcome.ms.toFixed(0)} ms`);
      }
      t.strictSame(breakerLines(daemon), [], "no breaker transitions");
      t.strictSame(await outageStats(daemon, "allow"), { breakerOpen: 0, failures: 4, redisErrors: 4 });
    });
    t.ok(performance.now() < pauseEnds, "all of it within the pause");

    for (const variant of VARIANTS) {
      const { name, mode } = variant;
      await t.test(`${name}: after the pause, Redis counts again`, async (t) => {
        const daemon = daemons.get(name)!;
        const key = windowKey("outage", "limited", name, 60);
        if (variant.breaker) {
          await pollUntil(
            `${name}: recovered`,
            async () => {
              await ask(name);
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
        } else {
          // Without a breaker the first decision after the pause is Redis's own again.
          await pollUntil(
            "the pause over",
            async () => ((await server.cli("GET", key)) !== "" ? true : undefined),
            {
              timeoutMs: PAUSE_MS + 3000,
              intervalMs: 100,
            },
          );
        }
        const before = Number(await server.cli("GET", key));
        const { outcome } = await ask(name);
        t.equal(Number(await server.cli("GET", key)), before + 1, "the decision counted in Redis");
        t.equal(outcome.response?.statuses[0]?.limit_remaining ?? 0, Math.max(0, 10 - (before + 1)));
      });
    }
  });
}
