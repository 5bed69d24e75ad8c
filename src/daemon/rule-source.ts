import { buildRuleSetInSlices } from "../config/build-rule-set.js";
import { FileRuleSource } from "../config/file/file-rule-source.js";
import type { RuleDocument } from "../config/rule-document.js";
import type { RuleCompiler, RuleSource } from "../config/rule-source.js";
import { refuseUnsupportedAlgorithms } from "../config/supported-algorithms.js";
import { XdsRuleSource } from "../config/xds/xds-rule-source.js";
import type { CounterStore } from "../engine/counter-store.js";
import type { Logger } from "../observability/logger.js";
import type { StatsRegistry } from "../observability/stats-registry.js";
import type { Settings } from "../settings/load-settings.js";

/**
 * Where the rules come from (CONFIG_TYPE): an xDS management server, or the runtime directory's files. A
 * rule set asking `store` for an algorithm it cannot count is refused as a whole. `onCompiled` receives
 * the documents of every rule set that compiled (the worker threads compile the same, docs/workers.md).
 */
export function createRuleSource(
  settings: Settings,
  stats: StatsRegistry,
  logger: Logger,
  store: Pick<CounterStore, "name" | "capabilities">,
  onCompiled?: (documents: readonly RuleDocument[]) => void,
): RuleSource {
  const compileOnly = ruleCompiler(settings, stats, logger, store);
  const compile: RuleCompiler =
    onCompiled === undefined
      ? compileOnly
      : async (documents, signal) => {
          const rules = await compileOnly(documents, signal);
          onCompiled(documents);
          return rules;
        };
  return settings.configType === "GRPC_XDS_SOTW"
    ? xdsRuleSource(settings, compile, logger)
    : fileRuleSource(settings, compile, logger);
}

/** Validates and compiles rule documents with the settings' limits, for `store`'s algorithms. */
export function ruleCompiler(
  settings: Settings,
  stats: StatsRegistry,
  logger: Logger,
  store: Pick<CounterStore, "name" | "capabilities">,
): RuleCompiler {
  return async (documents, signal) =>
    refuseUnsupportedAlgorithms(
      await buildRuleSetInSlices(documents, {
        mergeDomainConfig: settings.mergeDomainConfig,
        maxDescriptors: settings.configMaxDescriptors,
        signal,
        statsFor: (key) => stats.pinnedRuleStats(key),
        debug: logger.debugEnabled ? (line) => logger.debug(line) : undefined,
      }),
      store.capabilities,
      store.name,
    );
}

function xdsRuleSource(settings: Settings, compile: RuleCompiler, logger: Logger): XdsRuleSource {
  return new XdsRuleSource({
    serverUrl: settings.xdsServerUrl,
    nodeId: settings.xdsNodeId,
    nodeMetadata: settings.xdsNodeMetadataMap,
    tls: settings.xdsServerUseTls
      ? {
          caFile: settings.xdsServerTlsCacert,
          certFile: settings.xdsClientTlsCert,
          keyFile: settings.xdsClientTlsKey,
          serverName: settings.xdsServerTlsSan,
        }
      : undefined,
    headers: settings.xdsClientAdditionalHeaders,
    maxReceiveBytes: settings.xdsMaxMessageSizeBytes,
    connectRetryIntervalMs: settings.xdsServerConnectRetryIntervalMs,
    backoff: {
      initialMs: settings.xdsBackoffInitialIntervalMs,
      maxMs: settings.xdsBackoffMaxIntervalMs,
      factor: settings.xdsBackoffRandomFactor,
      jitter: settings.xdsBackoffJitter,
    },
    compile,
    log: logger,
  });
}

function fileRuleSource(settings: Settings, compile: RuleCompiler, logger: Logger): FileRuleSource {
  const layout = {
    runtimeRoot: settings.runtimeRoot,
    runtimeSubdirectory: settings.runtimeSubdirectory,
    runtimeAppDirectory: settings.runtimeAppDirectory,
    watchRoot: settings.runtimeWatchRoot,
    ignoreDotfiles: settings.runtimeIgnoreDotfiles,
  };
  return new FileRuleSource({
    layout,
    compile,
    maxDescriptors: settings.configMaxDescriptors,
    onReloading: () => logger.debug("got runtime update and reloading config"),
    // A missing or empty rule directory: said at start and on every reload while it lasts.
    warn: (line) => logger.warn(line),
    onReloadQueued: () => logger.debug("rule files changed during a reload: reloading again after it"),
  });
}
