// The container image's documented run line (README "Container image" and the Dockerfile's header) works:
// no container engine runs here, so the test lays out on the host what `docker run` would give the image —
// a temporary directory stands in for the container's root, the repository's folders are copied where the
// `-v` options mount them, the `-e` settings are passed with container paths moved under that root — then
// starts the built daemon in it and checks that the example rules load and decide.
import { cpSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { type DockerRunLine, parseDockerRunLine } from "../helpers/docker-run-line.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";
import { stayInsideWindow } from "../helpers/window-guard.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const readme = readFileSync(join(REPO, "README.md"), "utf8");
const dockerfile = readFileSync(join(REPO, "Dockerfile"), "utf8");
const containerSection = readme.slice(readme.indexOf("### Container image"));

const documented: Record<string, DockerRunLine> = {
  "README.md (Container image)": parseDockerRunLine(containerSection),
  "Dockerfile (header)": parseDockerRunLine(dockerfile.split("\nFROM ")[0]!, /^#\s*(Run:)?/),
};

t.test("the README and the Dockerfile's header document the same run line", async (t) => {
  const [readmeLine, dockerfileLine] = Object.values(documented);
  t.strictSame(dockerfileLine, readmeLine);
  t.strictSame(readmeLine, {
    ports: ["8080:8080", "8081:8081", "6070:6070"],
    volumes: [{ source: "$PWD/config/ratelimit", target: "/data/ratelimit" }],
    env: {
      RUNTIME_ROOT: "/data",
      RUNTIME_SUBDIRECTORY: "ratelimit",
      RUNTIME_WATCH_ROOT: "false",
      BACKEND_TYPE: "redis",
      REDIS_SOCKET_TYPE: "tcp",
      REDIS_URL: "redis:6379",
    },
    image: "ratelimitd",
  });
});

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  for (const [where, line] of Object.entries(documented)) {
    t.test(`${where}: the run line's layout loads the example rules and decides`, async (t) => {
      // The image's root: WORKDIR /app with its writable data/ (the users API's SQLite database).
      const root = t.testdir({ app: { data: {} } });
      for (const { source, target } of line.volumes) {
        const from = source.replace(/^\$PWD\//, REPO);
        mkdirSync(join(root, target), { recursive: true });
        cpSync(from, join(root, target), { recursive: true });
      }
      // The `redis` host of the documented REDIS_URL is this test's own server.
      const redis = await startRedis(t);
      const env: Record<string, string> = { NODE_ENV: "production" };
      for (const [name, value] of Object.entries(line.env)) {
        env[name] = value.startsWith("/") ? join(root, value) : value;
      }
      env.REDIS_URL = redis.url;
      // -p maps the image's ports; on the host each gets a free loopback port instead.
      Object.assign(env, { HOST: "127.0.0.1", PORT: "0", GRPC_HOST: "127.0.0.1", GRPC_PORT: "0" });
      Object.assign(env, { DEBUG_HOST: "127.0.0.1", DEBUG_PORT: "0" });
      const daemon = await startDaemon(env, 20_000, { cwd: join(root, "app"), baseEnv: {} });
      t.teardown(() => daemon.stop());

      const rlconfig = await httpRequest(daemon.debugPort, "/rlconfig");
      t.equal(rlconfig.status, 200);
      const expected =
        "rl.generic_key_default: unit=MINUTE requests_per_unit=20, shadow_mode: false, quota_mode: false";
      t.ok(rlconfig.body.split("\n").includes(expected), `/rlconfig lists ${expected}`);
      const ruleDir = join(REPO, "config/ratelimit/config");
      const domains = readdirSync(ruleDir).map(
        (file) => /^domain: (\S+)$/m.exec(readFileSync(join(ruleDir, file), "utf8"))?.[1],
      );
      const served = new Set(
        rlconfig.body
          .trim()
          .split("\n")
          .map((row) => row.split(".")[0]),
      );
      t.strictSame([...served].sort(), domains.sort(), "every example file's domain is served");
      t.notMatch(daemon.logs(), /level=error/, "no rule file fails to load");

      await stayInsideWindow(60);
      const body = JSON.stringify({
        domain: "rl",
        descriptors: [{ entries: [{ key: "generic_key", value: "default" }] }],
      });
      const reply = await httpRequest(daemon.httpPort, "/json", { method: "POST", body });
      t.equal(reply.status, 200);
      const decision = JSON.parse(reply.body);
      t.match(decision.statuses[0].durationUntilReset, /^\d+s$/);
      delete decision.statuses[0].durationUntilReset;
      t.strictSame(decision, {
        overallCode: "OK",
        statuses: [{ code: "OK", currentLimit: { requestsPerUnit: 20, unit: "MINUTE" }, limitRemaining: 19 }],
      });
    });
  }
}
