// The DogStatsD sink (docs/production.md "Metrics: Prometheus and DogStatsD"): exact datagram lines for counters, gauges
// and timers with tags, and the reference's mogrifiers (first match wins, `$n` in the name and tag values).
import t from "tap";
import {
  type DogStatsdMogrifier,
  DogStatsdSink,
  mogrify,
} from "../../../src/observability/dogstatsd-sink.js";
import { Logger } from "../../../src/observability/logger.js";
import { startUdpListener } from "../../helpers/udp-listener.js";

const HITS: DogStatsdMogrifier = {
  pattern: /^ratelimit\.service\.rate_limit\.([^.]+)\.(.*)\.([^.]+)$/,
  rename: "ratelimit.service.rate_limit.$3",
  tags: { domain: "$1", descriptor: "$2" },
};
const SERVER: DogStatsdMogrifier = {
  pattern: /^ratelimit_server\.(\w+)\.(\w+)$/,
  rename: "ratelimit.server.$2",
  tags: { method: "$1", missing: "$9" },
};

t.test("mogrify: the first matching mogrifier renames and tags", async (t) => {
  t.strictSame(mogrify("ratelimit.service.rate_limit.mongo_cps.database_users.total_hits", [SERVER, HITS]), {
    name: "ratelimit.service.rate_limit.total_hits",
    tags: ["domain:mongo_cps", "descriptor:database_users"],
  });
  t.strictSame(mogrify("ratelimit_server.ShouldRateLimit.total_requests", [SERVER, HITS]), {
    name: "ratelimit.server.total_requests",
    tags: ["method:ShouldRateLimit", "missing:"],
  });
  t.strictSame(mogrify("ratelimit.service.config_load_success", [SERVER, HITS]), {
    name: "ratelimit.service.config_load_success",
    tags: [],
  });
});

t.test("datagram lines: deltas, gauges, timers with their rate, tags after EXTRA_TAGS", async (t) => {
  const listener = await startUdpListener();
  t.teardown(() => listener.close());
  const sink = new DogStatsdSink({
    host: "127.0.0.1",
    port: listener.port,
    extraTags: { env: "prod" },
    mogrifiers: [HITS],
    logger: new Logger({ level: "warn", format: "text", write: () => {} }),
  });
  sink.send({
    counters: [
      { name: "ratelimit.service.rate_limit.d.k_v.over_limit", tags: undefined, delta: 3 },
      { name: "ratelimit.service.config_load_success", tags: { source: "file|x,y" }, delta: 1 },
    ],
    gauges: [{ name: "ratelimit.redis_pool.cx_active", tags: undefined, value: 4 }],
    timers: [
      { name: "ratelimit_server.Check.response_time", tags: undefined, samples: [1.5, 2], sampleRate: 1 },
      {
        name: "ratelimit_server.ShouldRateLimit.response_time",
        tags: undefined,
        samples: [3],
        sampleRate: 0.25,
      },
    ],
  });
  await sink.close();
  const lines = await listener.waitFor("six lines", (lines) => (lines.length >= 6 ? [...lines] : undefined));
  t.strictSame(lines, [
    "ratelimit.service.rate_limit.over_limit:3|c|#env:prod,domain:d,descriptor:k_v",
    "ratelimit.service.config_load_success:1|c|#env:prod,source:file_x_y",
    "ratelimit.redis_pool.cx_active:4|g|#env:prod",
    "ratelimit_server.Check.response_time:1.5|ms|#env:prod",
    "ratelimit_server.Check.response_time:2|ms|#env:prod",
    "ratelimit_server.ShouldRateLimit.response_time:3|ms|@0.25|#env:prod",
  ]);
});
