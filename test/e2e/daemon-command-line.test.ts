// `ratelimitd`'s own command line: --help prints the usage and exits 0 instead of starting the daemon with
// the reference's defaults (which would retry a Redis socket for ever); any other argument exits 2.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import t from "tap";
import { distEntry } from "../helpers/daemon-process.js";

const SETTINGS_PAGE = fileURLToPath(new URL("../../docs/settings.md", import.meta.url));

/**
 * Runs `ratelimitd` with only PATH in its environment (the reference's defaults). A daemon that started
 * instead of exiting is killed after 15 s, so the test fails with code null rather than timing out.
 */
function ratelimitd(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [distEntry("ratelimitd"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "" },
  });
  const guard = setTimeout(() => child.kill("SIGKILL"), 15_000);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    }),
  );
}

t.test("-h, -help and --help print the usage on stdout and exit 0", async (t) => {
  for (const flag of ["-h", "-help", "--help"]) {
    const run = await ratelimitd([flag]);
    t.equal(run.code, 0, flag);
    t.equal(run.stderr, "", `${flag}: nothing on stderr (no daemon log)`);
    const lines = run.stdout.split("\n");
    t.equal(lines[0], "Usage: ratelimitd [-h | --help]");
    t.ok(
      lines.includes(
        "It takes no arguments: every setting is an environment variable, with the reference's names and",
      ),
      "says where settings come from",
    );
    t.ok(lines.includes("Most used settings, with their defaults:"));
    const settings = lines.filter((line) => /^ {2}[A-Z_]+=/.test(line)).map((line) => line.trim());
    t.strictSame(
      settings,
      [
        "BACKEND_TYPE=redis",
        "REDIS_SOCKET_TYPE=unix",
        "REDIS_URL=/var/run/nutcracker/ratelimit.sock",
        "MEMCACHE_HOST_PORT=",
        "CONFIG_TYPE=FILE",
        "RUNTIME_ROOT=/srv/runtime_data/current",
        "RUNTIME_SUBDIRECTORY=",
        "RUNTIME_APPDIRECTORY=config",
        "RUNTIME_WATCH_ROOT=true",
        "PORT=8080",
        "GRPC_PORT=8081",
        "DEBUG_PORT=6070",
        "LOG_LEVEL=warn",
        "LOG_FORMAT=text",
        "USE_STATSD=true",
        "DATABASE_URL=sqlite:./data/ratelimitd.db",
      ],
      "the most used settings with their defaults",
    );
    t.equal(
      lines[lines.indexOf("  BACKEND_TYPE=redis") + 1],
      "      redis or kvstore, memcache or altcache, memory (in-process)",
      "each with its meaning",
    );
    t.equal(
      lines.at(-2),
      `Every setting, with its default and meaning: ${SETTINGS_PAGE}`,
      "where the full table is",
    );
  }
});

t.test("help wins wherever it is on the line", async (t) => {
  const run = await ratelimitd(["extra", "--help"]);
  t.equal(run.code, 0);
  t.match(run.stdout, /^Usage: ratelimitd \[-h \| --help\]\n/);
});

t.test("any other argument exits 2 with a clear message, before anything starts", async (t) => {
  const cases: [string[], string][] = [
    [
      ["serve"],
      'ratelimitd: unexpected argument "serve"\n' +
        "ratelimitd takes no arguments: its settings are environment variables (ratelimitd --help lists the most used).\n",
    ],
    [
      ["--port=9090"],
      'ratelimitd: unexpected argument "--port=9090"\n' +
        "ratelimitd takes no arguments: set the environment variable instead, e.g. PORT=9090 ratelimitd\n",
    ],
    [
      ["-grpc-port", "1"],
      'ratelimitd: unexpected argument "-grpc-port"\n' +
        "ratelimitd takes no arguments: set the environment variable instead, e.g. GRPC_PORT=<value> ratelimitd\n",
    ],
    [
      ["BACKEND_TYPE=memory"],
      'ratelimitd: unexpected argument "BACKEND_TYPE=memory"\n' +
        "ratelimitd takes no arguments: set the environment variable instead, e.g. BACKEND_TYPE=memory ratelimitd\n",
    ],
  ];
  for (const [args, stderr] of cases) {
    const run = await ratelimitd(args);
    t.equal(run.code, 2, args.join(" "));
    t.equal(run.stderr, stderr);
    t.equal(run.stdout, "");
  }
});
