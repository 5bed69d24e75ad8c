// The Dockerfile read line by line (no container engine runs here): the base image, the reference's binary
// names, the non-root user, the ports, and the HEALTHCHECK command run for real against a daemon started
// the way Envoy Gateway starts the image — /bin/ratelimit, UID/GID 65534 (when the test may switch users),
// a working directory it cannot write (as on a read-only root file system).
import { spawn } from "node:child_process";
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { makeTempDir, removeTempDir } from "../helpers/redis-process.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Lets another user reach the checkout: the daemon runs as UID 65534 from its dist/ and, under tap, with
 * tap's loader from its node_modules/. A clone made in `mktemp -d` (mode 0700) is out of that user's reach,
 * so each directory above the checkout that others cannot traverse gets o+x (traverse, not list) for the
 * test; the returned function restores every mode.
 */
function letOthersReach(path: string): () => void {
  const changed: [string, number][] = [];
  for (let dir = path; dir !== dirname(dir); dir = dirname(dir)) {
    const mode = statSync(dir).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      chmodSync(dir, mode | 0o001);
      changed.push([dir, mode]);
    }
  }
  return () => {
    for (const [dir, mode] of changed) chmodSync(dir, mode);
  };
}
const dockerfile = readFileSync(join(REPO, "Dockerfile"), "utf8");

/** The Dockerfile's instructions: comments dropped, continued lines joined, `[keyword, rest]`. */
const instructions = dockerfile
  .split("\n")
  .filter((line) => !line.startsWith("#"))
  .join("\n")
  .replace(/\\\n/g, " ")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => {
    const [, keyword, rest] = /^(\S+)\s+(.*)$/.exec(line.trim())!;
    return [keyword!, rest!.trim()] as const;
  });
const finalStage = instructions.slice(instructions.findLastIndex(([keyword]) => keyword === "FROM"));
const valuesOf = (keyword: string) => finalStage.filter(([k]) => k === keyword).map(([, rest]) => rest);

/** `ln -s <target> <link>` pairs of the final stage's RUN lines. */
const links = Object.fromEntries(
  valuesOf("RUN").flatMap((run) => [...run.matchAll(/ln -s (\S+) (\S+)/g)].map((m) => [m[2]!, m[1]!])),
);

/** `/app/dist/…` in the image is this checkout's `dist/…`. */
const onHost = (imagePath: string) => join(REPO, imagePath.replace(/^\/app\//, ""));

t.test("every stage on the current Node LTS, one Debian release", async (t) => {
  const bases = instructions.filter(([k]) => k === "FROM").map(([, rest]) => rest.split(" ")[0]);
  t.strictSame([...new Set(bases.filter((base) => base!.startsWith("node:")))], ["node:26-bookworm-slim"]);
  t.equal(finalStage[0]?.[1], "node:26-bookworm-slim", "the runtime image");
});

t.test("the reference's binary names are the compiled entry points", async (t) => {
  t.strictSame(links, {
    "/bin/ratelimit": "/app/dist/cmd/ratelimit.js",
    "/bin/ratelimit_client": "/app/dist/cmd/ratelimit-client.js",
    "/bin/ratelimit_config_check": "/app/dist/cmd/ratelimit-config-check.js",
  });
  for (const [link, target] of Object.entries(links)) {
    const file = onHost(target);
    t.doesNotThrow(() => accessSync(file, constants.X_OK), `${link}: ${target} is built and executable`);
    t.equal(readFileSync(file, "utf8").split("\n")[0], "#!/usr/bin/env node", `${link} runs with node`);
  }
});

t.test("non-root user, ports, a writable data directory", async (t) => {
  t.strictSame(valuesOf("USER"), ["65534:65534"], "nobody, as Envoy Gateway runs it");
  t.strictSame(valuesOf("EXPOSE"), ["8080 8081 6070"]);
  t.strictSame(valuesOf("WORKDIR"), ["/app"], "DATABASE_URL's default ./data/ratelimitd.db is /app/data");
  t.ok(
    valuesOf("RUN").some((run) => run.includes("mkdir data && chmod 1777 data")),
    "/app/data writable by any UID",
  );
});

/** The HEALTHCHECK's command (exec form), run on the host with `env`; resolves with its exit code. */
function healthcheck(env: Record<string, string>): Promise<number | null> {
  const command = JSON.parse(/CMD (\[.*\])$/.exec(valuesOf("HEALTHCHECK")[0] ?? "")?.[1] ?? "[]") as string[];
  const [program, ...args] = command;
  const child = spawn(program === "node" ? process.execPath : program!, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: "ignore",
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

t.test(
  "/bin/ratelimit as UID 65534 in a directory it cannot write; the HEALTHCHECK honours HOST and PORT",
  async (t) => {
    const dir = makeTempDir("container-image");
    t.teardown(() => removeTempDir(dir));
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, "data", "ratelimit", "config"), { recursive: true });
    writeFileSync(
      join(dir, "data", "ratelimit", "config", "rules.yaml"),
      "domain: image\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 5}\n",
    );
    mkdirSync(join(dir, "bin"));
    for (const [link, target] of Object.entries(links)) symlinkSync(onHost(target), join(dir, link));
    // The image's /app: read-only for the daemon, as under readOnlyRootFilesystem.
    mkdirSync(join(dir, "app"), { mode: 0o555 });
    chmodSync(join(dir, "app"), 0o555);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) t.teardown(letOthersReach(REPO.replace(/\/$/, "")));

    for (const host of ["", "::", "127.0.0.1"]) {
      const daemon = await startDaemon(
        {
          NODE_ENV: "production",
          ...(host === "" ? {} : { HOST: host }),
          PORT: "0",
          GRPC_PORT: "0",
          DEBUG_HOST: "127.0.0.1",
          DEBUG_PORT: "0",
          BACKEND_TYPE: "memory",
          USE_STATSD: "false",
          RUNTIME_ROOT: join(dir, "data"),
          RUNTIME_SUBDIRECTORY: "ratelimit",
          RUNTIME_WATCH_ROOT: "false",
          LOG_LEVEL: "info",
        },
        20_000,
        {
          baseEnv: {},
          cwd: join(dir, "app"),
          entry: join(dir, "bin", "ratelimit"),
          ...(asRoot ? { user: { uid: 65534, gid: 65534 } } : {}),
        },
      );
      const label = `HOST=${JSON.stringify(host)}`;
      const env = { ...(host === "" ? {} : { HOST: host }), PORT: String(daemon.httpPort) };
      t.equal(await healthcheck(env), 0, `${label}: HEALTHCHECK passes`);
      const decision = await httpRequest(daemon.httpPort, "/json", {
        body: JSON.stringify({ domain: "image", descriptors: [{ entries: [{ key: "k" }] }] }),
      });
      t.equal(decision.status, 200, `${label}: decides`);
      t.match(
        daemon.logs(),
        /level=warning msg="database sqlite:\.\/data\/ratelimitd\.db cannot be used, the users and migrations APIs are off: /,
        `${label}: the unwritable database is one warning`,
      );
      t.equal(await daemon.stop(), 0);
      t.equal(await healthcheck(env), 1, `${label}: HEALTHCHECK fails once the daemon is gone`);
    }
  },
);

t.test("/bin/ratelimit_config_check checks a rule directory", async (t) => {
  const dir = t.testdir({ config: { "a.yaml": "domain: d\ndescriptors: []\n" } });
  const child = spawn(
    process.execPath,
    [onHost(links["/bin/ratelimit_config_check"]!), "-config_dir", join(dir, "config")],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  const code = await new Promise((resolve) => child.once("exit", resolve));
  t.equal(code, 0);
  t.match(stdout, /all rate limit configs ok/);
});
