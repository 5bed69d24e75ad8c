// Rule files that would stall or hang the daemon: an alias bomb ("billion laughs", 3.7 KB expanding to 9^9
// descriptors) is refused at once by the daemon — old rules kept, decisions and health unaffected, SIGTERM
// honoured — and by ratelimit-config-check; a large legitimate file loads (parsed on a worker thread and
// compiled in slices: bench/hostile/large-rules-reload.mjs measures decisions during such a reload).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { httpRequest } from "../helpers/http-request.js";
import { reloadCounts, rulesDump, rulesYaml, waitForLog, waitForReload } from "../helpers/rules-dir.js";
import { runCommand } from "../helpers/run-command.js";
import { config, eventually, rlconfig, startManagementServer, xdsEnv } from "../helpers/xds-fixtures.js";

const BOMB = readFileSync(
  fileURLToPath(new URL("../fixtures/config/alias-bomb.yaml", import.meta.url)),
  "utf8",
);

t.test(
  "an alias bomb written over a rule file: refused, old rules answer, health OK, SIGTERM stops",
  async (t) => {
    const root = t.testdir({ config: { "base.yaml": rulesYaml("base", 5) } });
    const daemon = await startDaemon({ RUNTIME_ROOT: root });
    const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
    t.teardown(() => client.close());
    writeFileSync(join(root, "config", "bomb.yaml"), BOMB);
    await waitForReload(daemon.debugPort, { counts: { success: 1, error: 1 }, rules: rulesDump("base", 5) });
    await waitForLog(
      daemon.logs,
      /level=error msg="Error loading new configuration: bomb\.yaml: error loading config file: yaml: document contains excessive aliasing"/,
    );
    const decision = await client.shouldRateLimit({
      domain: "base",
      descriptors: [{ entries: [{ key: "k", value: "v" }] }],
    });
    t.equal(decision.statuses[0]?.limit_remaining, 4, "the old rules decide");
    t.equal((await httpRequest(daemon.httpPort, "/healthcheck")).status, 200);
    t.equal(await daemon.stop("SIGTERM"), 0, "SIGTERM stops the daemon");
  },
);

t.test("ratelimit-config-check ends with the error on an alias bomb", async (t) => {
  const dir = t.testdir({ "bomb.yaml": BOMB });
  const result = await runCommand("ratelimit-config-check", ["-config_dir", dir]);
  t.equal(result.code, 1);
  t.equal(
    result.stdout,
    "checking rate limit configs...\n" +
      `loading config directory: ${dir}\n` +
      `opening config file: ${join(dir, "bomb.yaml")}\n` +
      `error loading rate limit configs: ${join(dir, "bomb.yaml")}: error loading config file: yaml: document contains excessive aliasing\n`,
  );
});

/** A rules file of `count` descriptors `header_<i>` limited to (i mod 1000) + 2 per minute. */
function largeRulesYaml(count: number): string {
  const lines = ["domain: big", "descriptors:"];
  for (let i = 0; i < count; i++) {
    lines.push(
      `  - key: header_${i}`,
      `    value: some-long-value-for-descriptor-number-${i}`,
      "    rate_limit:",
      "      unit: minute",
      `      requests_per_unit: ${(i % 1000) + 2}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

t.test(
  "a 100,000-descriptor file (15 MB) loads, and every descriptor answers with its own limit",
  async (t) => {
    const root = t.testdir({ config: { "big.yaml": largeRulesYaml(100_000) } });
    const daemon = await startDaemon({ RUNTIME_ROOT: root }, 60_000);
    const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
    t.teardown(async () => {
      client.close();
      await daemon.stop();
    });
    t.strictSame(await reloadCounts(daemon.debugPort), { success: 1, error: 0 });
    for (const i of [0, 1, 54_321, 99_999]) {
      const decision = await client.shouldRateLimit({
        domain: "big",
        descriptors: [
          { entries: [{ key: `header_${i}`, value: `some-long-value-for-descriptor-number-${i}` }] },
        ],
      });
      t.strictSame(
        decision.statuses[0]?.current_limit,
        { requests_per_unit: (i % 1000) + 2, unit: "MINUTE" },
        `descriptor ${i}`,
      );
    }
  },
);

t.test("CONFIG_MAX_DESCRIPTORS: files holding more in all are refused, the old rules kept", async (t) => {
  const root = t.testdir({ config: { "base.yaml": rulesYaml("base", 5) } });
  const daemon = await startDaemon({ RUNTIME_ROOT: root, CONFIG_MAX_DESCRIPTORS: "3" });
  t.teardown(() => daemon.stop());
  writeFileSync(join(root, "config", "more.yaml"), largeRulesYaml(3));
  await waitForReload(daemon.debugPort, { counts: { success: 1, error: 1 }, rules: rulesDump("base", 5) });
  await waitForLog(
    daemon.logs,
    /level=error msg="Error loading new configuration: more\.yaml: too many descriptors: a rule set may hold at most 3"/,
  );
  t.equal((await httpRequest(daemon.httpPort, "/healthcheck")).status, 200);
});

t.test(
  "CONFIG_MAX_DESCRIPTORS applies to xDS: a larger snapshot is NACKed, the old rules kept",
  async (t) => {
    const { server, port } = await startManagementServer(t);
    server.setSnapshot("v1", [config("small", "foo", "k1", "v1", 3)]);
    const daemon = await startDaemon(xdsEnv(port, { CONFIG_MAX_DESCRIPTORS: "2" }));
    t.teardown(() => daemon.stop());
    const v1 = "foo.k1_v1: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false\n";
    t.equal(await rlconfig(daemon.debugPort), v1);
    // One descriptor per resource: the third takes the rule set past 2.
    server.setSnapshot("v2", [
      config("small", "foo", "k1", "v1", 3),
      config("more", "bar", "k1", "v1", 3),
      config("most", "baz", "k1", "v1", 3),
    ]);
    await eventually("NACK", () => server.received.at(-1)?.errorMessage !== undefined);
    t.strictSame(
      [server.received.at(-1)?.versionInfo, server.received.at(-1)?.errorMessage],
      ["v1", "most: too many descriptors: a rule set may hold at most 2"],
    );
    t.equal(await rlconfig(daemon.debugPort), v1, "old rules kept");
  },
);

t.test("SIGTERM while a 200,000-descriptor file loads stops the daemon; nothing is applied", async (t) => {
  const root = t.testdir({ config: { "big.yaml": largeRulesYaml(200_000) } });
  // Listening before the first load ends, so that the signal comes while it runs.
  const daemon = await startDaemon({ RUNTIME_ROOT: root, FORCE_START_WITHOUT_INITIAL_CONFIG: "true" });
  t.equal(await daemon.stop("SIGTERM"), 0);
  t.match(daemon.logs(), /received SIGTERM/);
  t.notMatch(daemon.logs(), /Successfully loaded new configuration|Error loading new configuration/);
});
