/**
 * The daemons the "explain is exact" tests run against: the memory backend; a real `redis-server` (never a
 * shared one) whose keys are read with redis-cli, with the local over-limit cache on so that explains of
 * locally cached over-limit keys are covered too; and a real `memcached` (fixed windows only), read with
 * its own text protocol.
 */
import type { Test } from "tap";
import { type DaemonProcess, startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { startMemcached } from "../helpers/memcached-process.js";
import { startRedis } from "../helpers/redis-servers.js";
import type { ExplainRun, Scenario, StoreView } from "./explain-exact-harness.js";
import { explainScenarios } from "./explain-exact-harness.js";

// Every key with its value and PTTL, in one call: what the store holds at one instant.
const SNAPSHOT =
  "local out = {} for _, key in ipairs(redis.call('KEYS', '*')) do " +
  "out[#out + 1] = key; out[#out + 1] = redis.call('GET', key) or ''; out[#out + 1] = redis.call('PTTL', key) " +
  "end return out";

/** Runs `scenarios` on a memory-backend daemon loaded with `rules`. */
export async function onMemory(t: Test, rules: string, scenarios: readonly Scenario[]): Promise<void> {
  const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "rules.yaml": rules } }) });
  t.teardown(() => daemon.stop());
  showLogsOnFailure(t, daemon);
  await answerNames(t, { daemon, localCache: false }, rules, "memory");
  explainScenarios(t, { daemon, localCache: false }, scenarios);
}

/** Runs `scenarios` on a Redis-backed daemon loaded with `rules`, keys prefixed, local cache on. */
export async function onRedis(t: Test, rules: string, scenarios: readonly Scenario[]): Promise<void> {
  const server = await startRedis(t);
  const daemon = await startDaemon({
    BACKEND_TYPE: "redis",
    REDIS_SOCKET_TYPE: "tcp",
    REDIS_URL: server.url,
    REDIS_POOL_SIZE: "2",
    CACHE_KEY_PREFIX: "pfx:",
    LOCAL_CACHE_SIZE_IN_BYTES: "1048576",
    RUNTIME_ROOT: t.testdir({ config: { "rules.yaml": rules } }),
  });
  t.teardown(() => daemon.stop());
  showLogsOnFailure(t, daemon);
  const store: StoreView = {
    snapshot: async () => {
      const keys = new Map<string, { value: string; pttlMs: number }>();
      const out = await server.cli("EVAL", SNAPSHOT, "0");
      if (out === "") return keys;
      const lines = out.split("\n");
      for (let i = 0; i + 2 < lines.length; i += 3) {
        keys.set(lines[i]!, { value: lines[i + 1]!, pttlMs: Number(lines[i + 2]) });
      }
      return keys;
    },
  };
  await answerNames(t, { daemon, store, localCache: true }, rules, "redis");
  explainScenarios(t, { daemon, store, localCache: true }, scenarios);
}

/** Runs `scenarios` (fixed windows only: the memcache backend refuses other algorithms) on memcached. */
export async function onMemcached(t: Test, rules: string, scenarios: readonly Scenario[]): Promise<void> {
  const server = await startMemcached(t);
  const daemon = await startDaemon({
    BACKEND_TYPE: "memcache",
    MEMCACHE_HOST_PORT: server.url,
    RUNTIME_ROOT: t.testdir({ config: { "rules.yaml": rules } }),
  });
  t.teardown(() => daemon.stop());
  showLogsOnFailure(t, daemon);
  // `lru_crawler metadump` lists keys asynchronously, so a snapshot reads the keys explains named.
  const known = new Set<string>();
  const store: StoreView = {
    learn: (keys) => {
      for (const key of keys) known.add(key);
    },
    snapshot: async () => {
      const keys = new Map<string, { value: string; pttlMs: number }>();
      for (const key of known) {
        const value = await server.valueOf(key);
        if (value !== undefined)
          keys.set(key, { value: value.trim(), pttlMs: (await server.ttlOf(key)) * 1000 });
      }
      return keys;
    },
  };
  await answerNames(t, { daemon, store, localCache: false }, rules, "memcache");
  explainScenarios(t, { daemon, store, localCache: false }, scenarios);
}

/** A failed run shows the end of what the daemon logged (a crash, a backend error). */
function showLogsOnFailure(t: Test, daemon: DaemonProcess): void {
  t.teardown(() => {
    if (!t.passing())
      t.comment(`daemon exit ${daemon.child.exitCode}; its log:\n${daemon.logs().slice(-4000)}`);
  });
}

/** The answer names its store and its rule source (EXPLAIN-SHAPE, issue 17 §E5). */
async function answerNames(t: Test, run: ExplainRun, rules: string, store: string): Promise<void> {
  const domain = /^domain: (\S+)$/m.exec(rules)![1]!;
  t.test(`the answer names the store (${store}) and the rule source (file)`, async (t) => {
    const reply = await httpRequest(run.daemon.debugPort, "/explain", {
      method: "POST",
      body: JSON.stringify({ domain, descriptors: [{ entries: [{ key: "none", value: "x" }] }] }),
    });
    t.equal(reply.status, 200, reply.body.slice(0, 300));
    const answer = JSON.parse(reply.body) as { store?: string; rules?: { source?: string } };
    t.equal(answer.store, store);
    t.equal(answer.rules?.source, "file");
  });
}
