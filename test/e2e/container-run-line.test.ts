// The container image's documented run lines (docs/containers.md and the Dockerfile's header) work: no
// container engine runs here, so the test checks that both document the same commands — a network, a Redis
// container named `redis` on it, ratelimitd on it too — then lays out on the host what `docker run` would give
// the image: a temporary directory stands in for the container's root, the repository's folders are copied
// where the `-v` options mount them, the `-e` settings are passed with container paths moved under that root,
// then the built daemon starts in it and the test checks that the example rules load and decide.
import { cpSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { type DockerRunLine, dockerCommands, parseDockerRunLine } from "../helpers/docker-run-line.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";
import { stayInsideWindow } from "../helpers/window-guard.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const page = readFileSync(join(REPO, "docs/containers.md"), "utf8");
const dockerfile = readFileSync(join(REPO, "Dockerfile"), "utf8");
const imageSection = page.slice(page.indexOf("## The image"), page.indexOf("## Compose"));
const DOCKERFILE_COMMENT = /^#\s*(Run[^:]*:)?/;
const dockerfileHeader = dockerfile.split("\nFROM ")[0]!;

const documented: Record<string, DockerRunLine> = {
  "docs/containers.md (The image)": parseDockerRunLine(imageSection),
  "Dockerfile (header)": parseDockerRunLine(dockerfileHeader, "ratelimitd", DOCKERFILE_COMMENT),
};

t.test("docs/containers.md and the Dockerfile's header document the same commands", async (t) => {
  const commands = (text: string, prefix?: RegExp) =>
    dockerCommands(text, prefix).filter((words) => words[0] !== "build");
  t.strictSame(commands(dockerfileHeader, DOCKERFILE_COMMENT), commands(imageSection));
  t.strictSame(commands(imageSection), [
    ["network", "create", "ratelimitd"],
    ["run", "-d", "--name", "redis", "--network", "ratelimitd", "redis:7-alpine"],
    [
      "run",
      ...["--network", "ratelimitd", "-p", "8080:8080", "-p", "8081:8081", "-p", "127.0.0.1:6070:6070"],
      ...["-v", "$PWD/config/ratelimit:/data/ratelimit"],
      ...[
        "-e",
        "RUNTIME_ROOT=/data",
        "-e",
        "RUNTIME_SUBDIRECTORY=ratelimit",
        "-e",
        "RUNTIME_WATCH_ROOT=false",
      ],
      ...[
        "-e",
        "BACKEND_TYPE=redis",
        "-e",
        "REDIS_SOCKET_TYPE=tcp",
        "-e",
        "REDIS_URL=redis:6379",
        "ratelimitd",
      ],
    ],
  ]);
  const [readmeLine, dockerfileLine] = Object.values(documented);
  t.strictSame(dockerfileLine, readmeLine);
  t.strictSame(readmeLine, {
    name: undefined,
    network: "ratelimitd",
    detached: false,
    ports: ["8080:8080", "8081:8081", "127.0.0.1:6070:6070"],
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
    args: [],
  });
  const redis = parseDockerRunLine(imageSection, "redis:7-alpine");
  t.equal(redis.name, "redis", "the Redis container is the `redis` of REDIS_URL=redis:6379");
  t.equal(redis.network, readmeLine?.network, "on the same network");
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
      // The `redis` host of the documented REDIS_URL (the container named redis) is this test's own server.
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
