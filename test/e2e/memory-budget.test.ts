// MEMORY_MAX_BYTES against the built daemon: distinct values under a value-less rule fill the budget, the
// least recently used counter is evicted (its window restarts from 0), and /stats and the log say so.
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import t from "tap";
import { RateLimitService } from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import { startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { waitForLog } from "../helpers/rules-dir.js";
import { stayInsideWindow } from "../helpers/window-guard.js";

const RULES = "domain: mem\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n";
const dir = t.testdir({ config: { "rules.yaml": RULES } });
const BUDGET = 16 * 1024 * 1024;
const daemon = await startDaemon({ RUNTIME_ROOT: dir, MEMORY_MAX_BYTES: String(BUDGET) });
t.teardown(() => daemon.stop());
const client = createClient(
  RateLimitService,
  createGrpcTransport({ baseUrl: `http://127.0.0.1:${daemon.grpcPort}` }),
);

/** An 8000-byte value, distinct for each `n`. */
const value = (n: number) => String(n).padStart(8000, "0");
// Each counter is `mem_k_<value>_<window start, 10 digits>`: 8017 characters, plus 248 bytes of overhead.
const ENTRY_BYTES = 248 + "mem_k_".length + 8000 + "_".length + 10;
const CAPACITY = Math.floor(BUDGET / ENTRY_BYTES);

async function memoryStats(): Promise<Record<string, number>> {
  const stats = (await httpRequest(daemon.debugPort, "/stats")).body;
  return Object.fromEntries(
    [...stats.matchAll(/^ratelimit\.memory\.(\w+): (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]),
  );
}

t.test(
  "the least recently used counter is evicted beyond MEMORY_MAX_BYTES and restarts from 0",
  async (t) => {
    t.strictSame([ENTRY_BYTES, CAPACITY], [8265, 2029]);
    await stayInsideWindow(3600, 30);
    const ask = async (from: number, count: number) =>
      client.shouldRateLimit({
        domain: "mem",
        descriptors: Array.from({ length: count }, (_, i) => ({
          entries: [{ key: "k", value: value(from + i) }],
        })),
      });
    await ask(0, 1);
    t.equal((await ask(0, 1)).statuses[0]!.limitRemaining, 3, "counter 0 at 2 of 5");
    for (let from = 1; from <= 2100; from += 250) await ask(from, Math.min(250, 2101 - from));
    t.strictSame(await memoryStats(), {
      bytes: CAPACITY * ENTRY_BYTES,
      evictions: 2101 - CAPACITY,
      keys: CAPACITY,
      max_bytes: BUDGET,
    });
    t.equal((await ask(0, 1)).statuses[0]!.limitRemaining, 4, "counter 0 was evicted: its window restarted");
    t.equal((await ask(2100, 1)).statuses[0]!.limitRemaining, 3, "the most recent counter kept its count");
    t.equal((await memoryStats()).evictions, 2101 - CAPACITY + 1);
    await waitForLog(
      daemon.logs,
      /level=warning msg="memory: 1 counter evicted since start, least recently used first, to stay within MEMORY_MAX_BYTES=16777216: each starts its window again from 0"/,
    );
  },
);
