import { type BreakerTransition, CircuitBreaker } from "../backends/circuit-breaker.js";
import { GuardedCounterStore } from "../backends/guarded-counter-store.js";
import { MemoryStore } from "../backends/memory/memory-store.js";
import { SharedMemoryStore } from "../backends/memory/shared-memory-store.js";
import { NodeBreakers } from "../backends/node-breakers.js";
import type { CounterStore } from "../engine/counter-store.js";
import { DecisionEngine, type DecisionEngineOptions } from "../engine/decision-engine.js";
import { restatingEngineStats } from "../engine/scaled-rule-set.js";
import { messageOf } from "../errors.js";
import type { Logger } from "../observability/logger.js";
import type { StatsRegistry } from "../observability/stats-registry.js";
import { FailureMode } from "../service/failure-mode.js";
import { LocalLimiter } from "../service/local-limiter.js";
import type { Settings } from "../settings/load-settings.js";
import type { ObservabilitySide } from "./observability-side.js";

/**
 * A remote store behind the circuit breaker (BACKEND_BREAKER_*, none when BACKEND_BREAKER_FAILURES=0) and
 * BACKEND_MAX_PENDING, with the `ratelimit.backend.breaker_open` gauge and a warn line per transition; the
 * memory store as it is. With `nodeBreakers` (a Redis Cluster guarded node by node) the store has no
 * breaker of its own, and the untagged gauge is 1 while any node's is open. docs/outages.md.
 */
export function guardedStore(
  store: CounterStore,
  settings: Settings,
  observability: ObservabilitySide,
  nodeBreakers?: NodeBreakers,
) {
  if (!store.capabilities.remote) return store;
  const { stats, logger } = observability;
  const mode = settings.backendFailureMode;
  const breaker =
    settings.backendBreakerFailures > 0 && nodeBreakers === undefined
      ? new CircuitBreaker({
          ...breakerOptions(settings),
          onTransition: (transition) => logger.warn(transitionLine(transition, mode)),
        })
      : undefined;
  const anyOpen = nodeBreakers
    ? () => (nodeBreakers.anyOpen ? 1 : 0)
    : () => (breaker?.isOpen === true ? 1 : 0);
  stats.gauge("ratelimit.backend.breaker_open", undefined, anyOpen);
  return new GuardedCounterStore(store, { breaker, nodeBreakers, maxPending: settings.backendMaxPending });
}

/**
 * One circuit breaker per Redis Cluster primary, when BACKEND_TYPE=redis has only cluster deployments and
 * the breaker is on (docs/outages.md "Redis Cluster"): each with its `ratelimit.backend.breaker_open`
 * gauge tagged `node` (`127.0.0.1:7001`) and its warn lines naming the node. Undefined otherwise: single
 * and sentinel deployments keep one breaker for the store.
 */
export function clusterNodeBreakers(
  settings: Settings,
  { stats, logger }: Pick<ObservabilitySide, "stats" | "logger">,
): NodeBreakers | undefined {
  const clusterOnly =
    settings.backend === "redis" &&
    settings.redisType === "cluster" &&
    (!settings.redisPerSecond || settings.redisPerSecondType === "cluster");
  if (!clusterOnly || settings.backendBreakerFailures === 0) return undefined;
  const mode = settings.backendFailureMode;
  const breakers: NodeBreakers = new NodeBreakers((node) => {
    stats.gauge("ratelimit.backend.breaker_open", { node }, () => (breakers.isOpen(node) ? 1 : 0));
    return new CircuitBreaker({
      ...breakerOptions(settings),
      onTransition: (transition) => logger.warn(nodeTransitionLine(node, transition, mode)),
    });
  });
  return breakers;
}

function breakerOptions(settings: Settings) {
  return {
    failures: settings.backendBreakerFailures,
    cooldownMs: settings.backendBreakerCooldownMs,
    maxCooldownMs: settings.backendBreakerMaxCooldownMs,
  };
}

/** The warn line of a cluster node's breaker transition: the store-wide line, naming the node. */
export function nodeTransitionLine(node: string, transition: BreakerTransition, mode: string): string {
  return transitionLine(transition, mode)
    .replace(/^counter store /, `counter store node ${node} `)
    .replace(/, answering with failure mode /, ", answering its slots with failure mode ");
}

/** The warn line of a breaker transition. */
export function transitionLine(transition: BreakerTransition, mode: string): string {
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  switch (transition.to) {
    case "open":
      return `counter store unavailable (${messageOf(transition.cause)}), answering with failure mode ${mode}`;
    case "still_open":
      return `counter store still unavailable after ${seconds(transition.outageMs)} s (${messageOf(transition.cause)}), next probe in ${seconds(transition.nextProbeMs)} s`;
    case "closed":
      return `counter store recovered after ${seconds(transition.outageMs)} s`;
  }
}

/**
 * BACKEND_FAILURE_MODE with its `ratelimit.service.backend_failure.<mode>` counter and, for mode local, a
 * limiter of its own: the service's engine settings without the local over-limit cache, an in-process
 * store within MEMORY_MAX_BYTES, limits scaled by BACKEND_LOCAL_LIMIT_FRACTION.
 */
export function failureMode(
  settings: Settings,
  { stats, throttledLog }: Pick<ObservabilitySide, "stats" | "throttledLog">,
  engine: DecisionEngine,
  engineOptions: DecisionEngineOptions,
  logger: Pick<Logger, "warn">,
  sharedTable?: SharedArrayBuffer,
): FailureMode {
  const mode = settings.backendFailureMode;
  const local =
    mode === "local"
      ? new LocalLimiter({
          engine: new DecisionEngine({
            ...engineOptions,
            localCache: undefined,
            stats: restatingEngineStats(engineOptions.stats),
            debug: undefined,
          }),
          store: localStore(settings, stats, logger, sharedTable),
          fraction: settings.backendLocalLimitFraction,
        })
      : undefined;
  return new FailureMode({
    mode,
    engine,
    local,
    answered: stats.counter(`ratelimit.service.backend_failure.${mode}`),
    log: throttledLog,
  });
}

/**
 * Mode local's counters: in this thread, or with WORKERS > 1 in `sharedTable`, which every worker shares
 * (docs/workers.md), so that the replica as a whole allows its fraction of each limit.
 */
function localStore(
  settings: Settings,
  stats: StatsRegistry,
  logger: Pick<Logger, "warn">,
  sharedTable: SharedArrayBuffer | undefined,
): CounterStore {
  const evictions = stats.counter("ratelimit.backend.local.evictions");
  if (sharedTable !== undefined) {
    return new SharedMemoryStore({ table: sharedTable, reports: { evictions, log: logger } });
  }
  const store = new MemoryStore({
    maxBytes: settings.memoryMaxBytes,
    reports: { evictions, log: logger },
  });
  // Only its sweeper starts; the timer is unref'd and the store has nothing to close.
  void store.start();
  return store;
}
