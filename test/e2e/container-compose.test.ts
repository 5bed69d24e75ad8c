// compose.yaml (docs/containers.md, "Compose"): ratelimitd, Redis and a Prometheus statsd exporter, with the
// reference's setting names. No container engine runs here, so the test reads the file with js-yaml and
// checks the services, images, published ports and environment the page promises — each variable one that
// ratelimitd reads — then runs the ratelimitd service's settings on the host: the rules mounted where the
// volume puts them, its own redis-server for `redis:6379`, and a TCP listener standing in for the exporter,
// which must receive a decision's stats in statsd's format.
import { cpSync, readFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as yaml from "js-yaml";
import t, { type Test } from "tap";
import { SETTINGS_TABLE } from "../../src/settings/settings-table.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { requireBinaries, startRedis } from "../helpers/redis-servers.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

interface ComposeService {
  readonly image?: string;
  readonly build?: string;
  readonly command?: readonly string[];
  readonly depends_on?: readonly string[];
  readonly ports?: readonly string[];
  readonly volumes?: readonly string[];
  readonly environment?: Readonly<Record<string, string>>;
}

const compose = yaml.load(readFileSync(join(REPO, "compose.yaml"), "utf8")) as {
  services: Record<string, ComposeService>;
};
const ratelimitd = compose.services.ratelimitd!;

t.test("the three services, their images and the ports they publish", async (t) => {
  t.strictSame(Object.keys(compose.services), ["redis", "statsd-exporter", "ratelimitd"]);
  t.strictSame(compose.services.redis, {
    image: "redis:7-alpine",
    command: ["redis-server", "--save", "", "--appendonly", "no"],
  });
  t.strictSame(compose.services["statsd-exporter"], {
    image: "prom/statsd-exporter:v0.28.0",
    ports: ["127.0.0.1:9102:9102"],
  });
  t.equal(ratelimitd.build, ".", "built from the Dockerfile");
  t.equal(ratelimitd.image, "ratelimitd");
  t.strictSame(ratelimitd.depends_on, ["redis", "statsd-exporter"]);
  t.strictSame(
    ratelimitd.ports,
    ["8080:8080", "8081:8081", "127.0.0.1:6070:6070"],
    "HTTP and gRPC for clients; the debug port, which has no authentication, on loopback only",
  );
  t.strictSame(ratelimitd.volumes, ["./config/ratelimit:/data/ratelimit:ro"]);
});

t.test("ratelimitd's environment: the reference's names, each a setting ratelimitd reads", async (t) => {
  t.strictSame(ratelimitd.environment, {
    BACKEND_TYPE: "redis",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_URL: "redis:6379",
    RUNTIME_ROOT: "/data",
    RUNTIME_SUBDIRECTORY: "ratelimit",
    RUNTIME_WATCH_ROOT: "false",
    USE_STATSD: "true",
    STATSD_HOST: "statsd-exporter",
    STATSD_PORT: "9125",
    LOG_LEVEL: "info",
  });
  const read = new Set(Object.values(SETTINGS_TABLE).map((spec) => spec.env));
  t.strictSame(
    Object.keys(ratelimitd.environment ?? {}).filter((name) => !read.has(name)),
    [],
  );
  const page = readFileSync(join(REPO, "docs/containers.md"), "utf8");
  for (const [name, value] of Object.entries(ratelimitd.environment ?? {})) {
    t.ok(page.includes(`\`${name}=${value}\``), `docs/containers.md names ${name}=${value}`);
  }
});

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  t.test(
    "the ratelimitd service's settings, on the host: rules loaded, counters in Redis, stats sent",
    async (t) => {
      // The container's root: the volume's target under it, the image's writable /app/data.
      const root = t.testdir({ app: { data: {} } });
      const [source = "", target = ""] = (ratelimitd.volumes ?? [])[0]!.split(":");
      cpSync(join(REPO, source), join(root, target), { recursive: true });
      const redis = await startRedis(t);
      const statsd = await statsdStandIn(t);
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries(ratelimitd.environment ?? {})) {
        env[name] = value.startsWith("/") ? join(root, value) : value;
      }
      // Service names become this test's servers; published ports become free loopback ports.
      Object.assign(env, {
        REDIS_URL: redis.url,
        STATSD_HOST: "127.0.0.1",
        STATSD_PORT: String(statsd.port),
      });
      Object.assign(env, { HOST: "127.0.0.1", PORT: "0", GRPC_HOST: "127.0.0.1", GRPC_PORT: "0" });
      Object.assign(env, { DEBUG_HOST: "127.0.0.1", DEBUG_PORT: "0" });
      // The default flush is every 10 s; the test needs the first one sooner.
      env.STATS_FLUSH_INTERVAL = "100ms";
      const daemon = await startDaemon(env, 20_000, { cwd: join(root, "app"), baseEnv: {} });
      t.teardown(() => daemon.stop());

      const body = JSON.stringify({
        domain: "api",
        descriptors: [{ entries: [{ key: "plan", value: "free" }] }],
      });
      const reply = await httpRequest(daemon.httpPort, "/json", { method: "POST", body });
      t.equal(reply.status, 200);
      t.equal(JSON.parse(reply.body).statuses[0].limitRemaining, 999);
      t.match(
        await redis.cli("--scan", "--pattern", "api_plan_free_*"),
        /^api_plan_free_\d+$/,
        "counted in Redis",
      );
      const line = "ratelimit.service.rate_limit.api.plan_free.total_hits:1|c";
      await statsd.waitFor(line);
      t.pass(`the exporter stand-in received ${line}`);
    },
  );
}

/** A TCP listener that collects statsd lines, as statsd_exporter's TCP listener on 9125 would. */
async function statsdStandIn(t: Test): Promise<{ port: number; waitFor(line: string): Promise<void> }> {
  let received = "";
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return {
    port: address.port,
    async waitFor(line) {
      for (let i = 0; i < 100 && !received.split("\n").includes(line); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (!received.split("\n").includes(line)) throw new Error(`statsd lines received:\n${received}`);
    },
  };
}
