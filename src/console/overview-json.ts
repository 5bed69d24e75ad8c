import { createHash } from "node:crypto";
import type { RuleSet } from "../engine/rule-set.js";
import type { RuleLoadOutcome } from "../service/rate-limit-service.js";
import type { Overview, OverviewRules, SinkName, StoreStatus } from "./console-contract.js";
import { countRules } from "./rules-json.js";

/** What the Overview page reads, each a cheap look at state the daemon keeps anyway. */
export interface OverviewSources {
  /** The daemon's version: package.json's, read once when the console is made (daemon-version.ts). */
  readonly version: string;
  readonly startedAtMs: number;
  readonly nowMs: () => number;
  readonly health: () => Overview["health"];
  readonly store: () => StoreStatus;
  readonly rules: () => RuleSet | undefined;
  readonly lastLoad: () => RuleLoadOutcome | undefined;
  readonly loadCounts: () => { readonly successes: number; readonly errors: number };
  /** The rule directory (CONFIG_TYPE=FILE) or the xDS server (GRPC_XDS_SOTW). */
  readonly ruleSource: { readonly kind: OverviewRules["source"]; readonly location: string };
  readonly database: () => Overview["management"];
  readonly sinks: Readonly<Record<SinkName, boolean>>;
}

/** `GET /console/api/overview`. */
export function overviewJson(sources: OverviewSources): Overview {
  const rules = sources.rules();
  const last = sources.lastLoad();
  const counts = sources.loadCounts();
  const memory = process.memoryUsage();
  const nowMs = sources.nowMs();
  return {
    version: sources.version,
    nowMs,
    startedAtMs: sources.startedAtMs,
    health: sources.health(),
    store: sources.store(),
    rules: {
      source: sources.ruleSource.kind,
      location: sources.ruleSource.location,
      version: ruleVersion(rules),
      files:
        rules?.origin?.kind === "file"
          ? [...rules.origin.files].map(([name, file]) => ({ name, path: file.path, sha256: file.sha256 }))
          : [],
      loadedAtMs: rules?.origin?.loadedAtMs ?? null,
      domains: rules?.domains.size ?? 0,
      rules: countRules(rules),
      lastLoad:
        last === undefined
          ? null
          : { atMs: last.atMs, ok: last.error === undefined, error: last.error ?? null },
      loadSuccesses: counts.successes,
      loadErrors: counts.errors,
    },
    management: sources.database(),
    sinks: sources.sinks,
    process: {
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      uptimeSeconds: Math.floor((nowMs - sources.startedAtMs) / 1000),
    },
  };
}

/** xDS: the snapshot's version; files: the first 12 hex digits of a SHA-256 over each file's name and hash. */
function ruleVersion(rules: RuleSet | undefined): string | null {
  const origin = rules?.origin;
  if (origin === undefined) return null;
  if (origin.kind === "xds") return origin.version;
  const hash = createHash("sha256");
  for (const [name, file] of [...origin.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    hash.update(`${name}\0${file.sha256}\n`);
  return hash.digest("hex").slice(0, 12);
}
