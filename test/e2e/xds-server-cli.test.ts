// ratelimit-xds-server (docs/rules.md): the in-repo management server serves a directory of YAML rule
// files over ADS, one resource per file, and pushes a new version when they change; a daemon on
// CONFIG_TYPE=GRPC_XDS_SOTW follows it, and NACKs an invalid version with the reason (old rules kept).
import { spawn } from "node:child_process";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import t from "tap";
import { distEntry, startDaemon } from "../helpers/daemon-process.js";
import { eventually, rlconfig, xdsEnv } from "../helpers/xds-fixtures.js";

const rules = (domain: string, limit: number, unit = "minute") =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit: { unit: ${unit}, requests_per_unit: ${limit} }\n`;
const dump = (domain: string, limit: number) =>
  `${domain}.k: unit=MINUTE requests_per_unit=${limit}, shadow_mode: false, quota_mode: false\n`;

t.test("serves a directory, pushes changes, and logs the daemon's ACKs and NACKs", async (t) => {
  const dir = t.testdir({ "a.yaml": rules("a", 4), "b.yaml": rules("b", 5), ".hidden.yaml": "not: rules" });
  const server = spawn(
    process.execPath,
    [distEntry("ratelimit-xds-server"), "-config_dir", dir, "-port", "0"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  t.teardown(() => server.kill("SIGKILL"));
  let logs = "";
  server.stderr.on("data", (chunk: Buffer) => (logs += chunk));
  await eventually("listening", () => /listening on 127\.0\.0\.1:\d+/.test(logs));
  t.match(logs, /serving version 1: a\.yaml, b\.yaml\n/, "one resource per file, dotfiles skipped");
  const port = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(logs)![1]);

  const daemon = await startDaemon(xdsEnv(port));
  t.teardown(() => daemon.stop());
  t.equal(await rlconfig(daemon.debugPort), dump("a", 4) + dump("b", 5), "the daemon has both files' rules");
  await eventually("ACK logged", () => logs.includes("node default ACKed version 1\n"));

  writeFileSync(join(dir, "a.yaml"), rules("a", 9));
  await eventually(
    "version 2 active",
    async () => (await rlconfig(daemon.debugPort)) === dump("a", 9) + dump("b", 5),
  );
  await eventually("ACK of version 2 logged", () => logs.includes("node default ACKed version 2\n"));

  writeFileSync(join(dir, "b.yaml"), rules("a", 1));
  await eventually("NACK logged", () => / NACKed nonce \d+: /.test(logs));
  t.match(logs, /node default NACKed nonce \d+: b\.yaml: duplicate domain 'a' in config file\n/);
  t.equal(await rlconfig(daemon.debugPort), dump("a", 9) + dump("b", 5), "the daemon kept its rules");
});

t.test("a missing -config_dir is said, and served once it appears", async (t) => {
  const base = t.testdir({ staging: { "a.yaml": rules("a", 3) } });
  // Its parent is missing too: the directory can only be noticed by looking for it again.
  const dir = join(base, "deploy", "rules");
  const server = spawn(
    process.execPath,
    [distEntry("ratelimit-xds-server"), "-config_dir", dir, "-port", "0"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  t.teardown(() => server.kill("SIGKILL"));
  let logs = "";
  server.stderr.on("data", (chunk: Buffer) => (logs += chunk));
  await eventually("listening", () => /listening on 127\.0\.0\.1:\d+/.test(logs));
  t.match(
    logs,
    `not publishing: config directory ${dir} does not exist; publishing again once it is created\n`,
  );
  const port = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(logs)![1]);

  mkdirSync(join(base, "deploy"));
  renameSync(join(base, "staging"), dir);
  await eventually("version 1 served", () => logs.includes("serving version 1: a.yaml\n"));
  const daemon = await startDaemon(xdsEnv(port));
  t.teardown(() => daemon.stop());
  t.equal(await rlconfig(daemon.debugPort), dump("a", 3), "the daemon has the rules that appeared");
});
