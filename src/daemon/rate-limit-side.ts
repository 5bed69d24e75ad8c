import { createCounterStore } from "../backends/create-counter-store.js";
import { GuardedCounterStore } from "../backends/guarded-counter-store.js";
import type { LocalOverLimitCache } from "../backends/local-over-limit-cache.js";
import type { RuleDocument } from "../config/rule-document.js";
import type { RuleCompiler, RuleSource, RuleUpdate } from "../config/rule-source.js";
import type { StoreStatus } from "../console/console-contract.js";
import type { CounterStore } from "../engine/counter-store.js";
import { DecisionEngine, type DecisionEngineOptions } from "../engine/decision-engine.js";
import type { RequestLimits } from "../engine/request-limits.js";
import { InstrumentedCounterStore } from "../observability/instrumented-counter-store.js";
import type { StatCounter } from "../observability/stat-metrics.js";
import type { StatsRegistry } from "../observability/stats-registry.js";
import { DecisionExplainer } from "../service/decision-explainer.js";
import type { HealthChecker } from "../service/health-checker.js";
import { RateLimitService, type ServiceCounters } from "../service/rate-limit-service.js";
import { UnknownDomainLog } from "../service/unknown-domain-log.js";
import type { Settings } from "../settings/load-settings.js";
import { clusterNodeBreakers, failureMode, guardedStore } from "./backend-outages.js";
import { counterStoreOptions } from "./counter-store-options.js";
import { localCacheWithGauges } from "./local-cache-gauges.js";
import type { ObservabilitySide } from "./observability-side.js";
import { createRuleSource, ruleCompiler } from "./rule-source.js";
import { NO_RULES_YET } from "./workers/relayed-rule-source.js";

/** Options of {@link RateLimitSide}. */
export interface RateLimitSideOptions {
  readonly settings: Settings;
  readonly observability: ObservabilitySide;
  /** Receives the `backend` and (HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED) `config` components. */
  readonly health: HealthChecker;
  /** Replaces the store BACKEND_TYPE names (tests, embedding). */
  readonly store?: CounterStore | undefined;
  readonly nowMs?: (() => number) | undefined;
  /** Receives the documents of every rule set the rule source compiled (the main thread's, to relay). */
  readonly onRulesCompiled?: ((documents: readonly RuleDocument[]) => void) | undefined;
  /**
   * A worker thread's rules (docs/workers.md): replaces the rule source CONFIG_TYPE names with the one
   * this builds over the thread's compiler; its rule sets are swapped in without counting or logging the
   * load again (the main thread did).
   */
  readonly relayedRules?: ((compile: RuleCompiler) => RuleSource) | undefined;
  /** WORKERS > 1 with BACKEND_FAILURE_MODE=local: the local limiter's counter table, shared by the workers. */
  readonly localTable?: SharedArrayBuffer | undefined;
  /** Counts the decisions asked of this thread (`ratelimit.workers.requests` of a worker). */
  readonly decisions?: StatCounter | undefined;
}

/**
 * The rate-limit side of the daemon: the counter store, the decision engine (with the local over-limit
 * cache), the service that joins them, and the rule source feeding the service.
 */
export class RateLimitSide {
  readonly service: RateLimitService;
  /** The per-request limits (MAX_DESCRIPTORS_PER_REQUEST, …) the transports check before decoding more. */
  readonly requestLimits: RequestLimits;
  /** `POST /explain`: the same engine settings and store, counting nothing. */
  readonly explainer: DecisionExplainer;
  /** The store's kind, failure mode, breaker state and calls in flight (the console's Overview). */
  readonly storeStatus: () => StoreStatus;
  /** Rule loads so far, successful and failed: the service's `config_load_success` and `config_load_error`. */
  readonly loadCounts: () => { readonly successes: number; readonly errors: number };
  readonly #settings: Settings;
  readonly #store: CounterStore;
  readonly #ruleSource: RuleSource;
  readonly #relayed: boolean;
  readonly #logger: ObservabilitySide["logger"];

  constructor(options: RateLimitSideOptions) {
    const { settings, observability } = options;
    const { stats, logger, throttledLog } = observability;
    this.#settings = settings;
    this.requestLimits = requestLimits(settings);
    const localCache =
      settings.localCacheSizeInBytes > 0
        ? localCacheWithGauges(settings.localCacheSizeInBytes, stats)
        : undefined;
    // Set only for a store BACKEND_TYPE names: a store passed in has no cluster nodes of ours to guard.
    const nodeBreakers = options.store ? undefined : clusterNodeBreakers(settings, observability);
    this.#store =
      options.store ??
      createCounterStore(counterStoreOptions(settings), { stats, logger, throttledLog, nodeBreakers });
    // Requests naming a domain no rule defines are said once per domain (the rules are read lazily).
    const unknownDomains = new UnknownDomainLog({
      log: throttledLog,
      knownDomains: () => this.service.rules?.domains.keys() ?? [],
    });
    const engineSettings = {
      ...engineOptions(settings, observability, localCache, this.requestLimits),
      stats: unknownDomains.watching(stats),
    };
    const engine = new DecisionEngine(engineSettings);
    // The backend span's events; wrapped only when tracing, so the hot path pays nothing otherwise.
    const traced = settings.tracingEnabled ? new InstrumentedCounterStore(this.#store) : this.#store;
    const store = guardedStore(traced, settings, observability, nodeBreakers);
    this.storeStatus = () => ({
      type: settings.backend,
      failureMode: settings.backendFailureMode,
      breaker: store instanceof GuardedCounterStore ? store.breakerState : "off",
      pending: store instanceof GuardedCounterStore ? store.pending : null,
    });
    const counters = serviceCounters(stats);
    this.loadCounts = () => ({
      successes: counters.configLoadSuccess.value,
      errors: counters.configLoadError.value,
    });
    this.service = new RateLimitService({
      engine,
      store,
      failureMode: failureMode(settings, observability, engine, engineSettings, logger, options.localTable),
      counters,
      logger,
      decisions: options.decisions,
      stopIncrementWhenOverLimit:
        settings.stopCacheKeyIncrementWhenOverlimit && this.#store.capabilities.readsWithoutCounting,
      ...(options.nowMs ? { nowMs: options.nowMs } : {}),
    });
    this.explainer = new DecisionExplainer({
      engineOptions: engineSettings,
      store,
      rules: () => this.service.rules,
      ...(options.nowMs ? { nowMs: options.nowMs } : {}),
    });
    this.service.onRulesChange(() => unknownDomains.reset());
    this.#registerHealth(options.health);
    this.#relayed = options.relayedRules !== undefined;
    this.#logger = logger;
    this.#ruleSource =
      options.relayedRules === undefined
        ? createRuleSource(settings, stats, logger, this.#store, options.onRulesCompiled)
        : options.relayedRules(ruleCompiler(settings, stats, logger, this.#store));
  }

  /** Connects the store, then waits for the first rules (unless FORCE_START_WITHOUT_INITIAL_CONFIG). */
  async start(): Promise<void> {
    await this.#store.start();
    await this.#loadFirstRules();
  }

  /** Stops watching for rule changes. */
  stopRuleSource(): Promise<void> {
    return this.#ruleSource.stop();
  }

  /** Closes the store's connections. */
  closeStore(): Promise<void> {
    return this.#store.close();
  }

  #registerHealth(health: HealthChecker): void {
    health.register("backend", false);
    health.register("sigterm", true);
    // Outside mode error the service answers without the store, so losing it is not unhealthy.
    this.#store.onHealthChange((healthy) =>
      health.set("backend", healthy || this.#settings.backendFailureMode !== "error"),
    );
    if (this.#settings.healthyWithAtLeastOneConfigLoaded) {
      health.register("config", false);
      this.service.onRulesChange((rules) => health.set("config", rules.domains.size > 0));
    }
  }

  /** Waits for the first load outcome (success or failure) unless FORCE_START_WITHOUT_INITIAL_CONFIG. */
  #loadFirstRules(): Promise<void> {
    return new Promise((resolve) => {
      this.#ruleSource.start((update: RuleUpdate) => {
        if (!this.#relayed) this.service.applyRuleUpdate(update);
        else if (update.ok) this.service.adoptRules(update.rules);
        else if (update.error !== NO_RULES_YET) {
          this.#logger.error(`a worker thread could not compile the loaded rules: ${update.error.message}`);
        }
        resolve();
      });
      if (this.#settings.forceStartWithoutInitialConfig) resolve();
    });
  }
}

function requestLimits(settings: Settings): RequestLimits {
  return {
    maxDescriptors: settings.maxDescriptorsPerRequest,
    maxEntries: settings.maxEntriesPerDescriptor,
    maxEntryBytes: settings.maxDescriptorEntryBytes,
  };
}

function engineOptions(
  settings: Settings,
  { stats, logger }: ObservabilitySide,
  localCache: LocalOverLimitCache | undefined,
  limits: RequestLimits,
): DecisionEngineOptions {
  return {
    nearLimitRatio: settings.nearLimitRatio,
    cacheKeyPrefix: settings.cacheKeyPrefix,
    expirationJitterMaxSeconds: settings.expirationJitterMaxSeconds,
    shadowMode: settings.shadowMode,
    quotaMode: settings.quotaMode,
    responseHeaders: settings.limitResponseHeadersEnabled
      ? {
          limit: settings.limitLimitHeader,
          remaining: settings.limitRemainingHeader,
          reset: settings.limitResetHeader,
        }
      : undefined,
    responseHeadersFormat: settings.limitResponseHeadersFormat,
    dynamicMetadata: settings.responseDynamicMetadata,
    localCache,
    stats,
    random: Math.random,
    debug: logger.debugEnabled ? (line) => logger.debug(line) : undefined,
    requestLimits: limits,
  };
}

/** The service's own counters, under the reference's `ratelimit.service` names; the console reads them. */
function serviceCounters(stats: StatsRegistry): Record<keyof ServiceCounters, StatCounter> {
  const scope = "ratelimit.service";
  return {
    configLoadSuccess: stats.counter(`${scope}.config_load_success`),
    configLoadError: stats.counter(`${scope}.config_load_error`),
    backendError: stats.counter(`${scope}.call.should_rate_limit.redis_error`),
    serviceError: stats.counter(`${scope}.call.should_rate_limit.service_error`),
  };
}
