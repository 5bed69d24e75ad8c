// Self-test of the PostgreSQL test helpers: the tests bring their own throwaway PostgreSQL (as they bring
// their own redis-server), found where Debian installs it, run unprivileged, one per test process and gone
// when it ends; TEST_POSTGRES_URL replaces it; missing binaries fail under CI=true and skip elsewhere.
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import t from "tap";
import { createPostgresSchema, unusable } from "../helpers/postgres-schema.js";
import { findPostgresBinDir, startPostgres, testPostgres } from "../helpers/postgres-server.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/postgres/schema-server.ts", import.meta.url));
const binDir = findPostgresBinDir(process.env.PATH ?? "");

/** Runs the fixture as a test process of its own (tap's TypeScript loader, as here) with `env`. */
async function runChild(
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; port?: number; dataDir?: string }> {
  const loader = process.execArgv.filter((arg) => arg.includes("@tapjs/typescript"));
  const child = spawn(process.execPath, [...loader, FIXTURE], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  const line = /^SERVER (.*)$/m.exec(stderr)?.[1];
  return { code, ...(line === undefined ? {} : JSON.parse(line)) };
}

/** Whether something accepts connections at `url`; resolves the connection error's code when not. */
async function connectError(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on("error", () => {});
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const makeExecutable = (path: string) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "#!/bin/sh\n");
  chmodSync(path, 0o755);
};

t.test(
  "findPostgresBinDir: initdb on PATH (symlinks followed), else the newest Debian version",
  async (t) => {
    const root = t.testdir({ lib: {}, path: {}, empty: {} });
    const lib = join(root, "lib");
    for (const version of ["9.6", "13"]) {
      makeExecutable(join(lib, version, "bin", "initdb"));
      makeExecutable(join(lib, version, "bin", "postgres"));
    }
    makeExecutable(join(lib, "15", "bin", "initdb")); // no postgres beside it: not usable
    mkdirSync(join(lib, "16"));
    t.equal(findPostgresBinDir("", lib), join(lib, "13", "bin"), "13 > 9.6 as numbers; 15 and 16 incomplete");
    symlinkSync(join(lib, "9.6", "bin", "initdb"), join(root, "path", "initdb"));
    t.equal(findPostgresBinDir(join(root, "path"), lib), join(realpathSync(lib), "9.6", "bin"), "PATH first");
    t.equal(findPostgresBinDir(join(root, "empty"), join(root, "empty")), undefined);
    t.equal(findPostgresBinDir("", join(root, "missing")), undefined);
  },
);

t.test("testPostgres: TEST_POSTGRES_URL wins; without binaries, a problem naming the package", async (t) => {
  const empty = t.testdir({});
  t.strictSame(await testPostgres({ TEST_POSTGRES_URL: "postgres://u@h:1/d", PATH: "" }, empty), {
    url: "postgres://u@h:1/d",
  });
  t.strictSame(await testPostgres({ PATH: "" }, empty), {
    problem: `PostgreSQL's initdb and postgres are neither on PATH nor in ${empty}/<version>/bin (Debian: apt-get install -y postgresql), and TEST_POSTGRES_URL is not set`,
  });
});

t.test("unusable: fails under CI=true, skips loudly elsewhere", async (t) => {
  const calls: string[] = [];
  const hooks = {
    skip: (name: string) => calls.push(`skip: ${name}`),
    fail: (message: string) => calls.push(`fail: ${message}`),
  };
  t.equal(unusable(hooks, "an example problem", { CI: "true" }), undefined);
  t.equal(unusable(hooks, "an example problem", {}), undefined);
  t.strictSame(calls, [
    "fail: an example problem; CI=true, so this is a failure",
    "skip: SKIPPED: an example problem",
  ]);
});

if (binDir === undefined) {
  unusable(t, "PostgreSQL's initdb and postgres not found (Debian: apt-get install -y postgresql)");
} else {
  t.test("a test process gets its own throwaway server, gone when the process ends", async (t) => {
    const { TEST_POSTGRES_URL: _ignored, ...env } = process.env;
    const child = await runChild(env);
    t.equal(child.code, 0, "the child's test passed");
    t.not(child.port, 5432, "not the machine's PostgreSQL");
    const tmp = realpathSync(tmpdir());
    t.match(child.dataDir, new RegExp(`^${tmp}/ratelimitd-postgres-[A-Za-z0-9]{6}/data$`));
    t.equal(existsSync(dirname(child.dataDir ?? "/")), false, "its directory is deleted");
    const url = `postgres://postgres@127.0.0.1:${child.port}/postgres`;
    t.equal(await connectError(url), "ECONNREFUSED", "its server is stopped");
  });

  t.test("TEST_POSTGRES_URL: the tests use that server instead, and leave it running", async (t) => {
    const server = await startPostgres(binDir);
    t.teardown(() => server.stop());
    const child = await runChild({ ...process.env, TEST_POSTGRES_URL: server.url });
    t.strictSame(child, { code: 0, port: server.port, dataDir: server.dataDir });
    t.equal(await connectError(server.url), undefined, "still accepting connections");
    if (process.getuid?.() === 0) {
      const postgresUser = /^postgres:x:(\d+):/m.exec(readFileSync("/etc/passwd", "utf8"))?.[1];
      t.equal(statSync(server.dataDir).uid, Number(postgresUser ?? 65534), "under root, owned by postgres");
    }
    await server.stop();
    t.equal(existsSync(dirname(server.dataDir)), false);
    t.equal(await connectError(server.url), "ECONNREFUSED");
  });

  const shared = process.env.TEST_POSTGRES_URL ? "TEST_POSTGRES_URL is set: no throwaway server here" : false;
  t.test(
    "the schemas of one test process share its server; durability is off",
    { skip: shared },
    async (t) => {
      const a = await createPostgresSchema(t);
      const b = await createPostgresSchema(t);
      if (a === undefined || b === undefined) return;
      t.equal(a.serverUrl, b.serverUrl);
      t.not(a.name, b.name);
      const settings = await a.query("SELECT current_user AS u, current_setting('fsync') AS fsync");
      t.strictSame(settings, [{ u: "postgres", fsync: "off" }]);
    },
  );
}
