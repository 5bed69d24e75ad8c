import type { RateLimitRule, RuleLevel, RuleNode, RuleSet, RuleStats } from "../engine/rule-set.js";
import { unitName } from "../engine/units.js";
import { compileWildcard } from "../engine/wildcard.js";
import { ConfigError } from "../errors.js";
import { compileDescriptorLimit } from "./compile-limit.js";
import { reservationText } from "./dump-rule-set.js";
import type { DescriptorDocument, RuleDocument } from "./rule-document.js";

export interface BuildRuleSetOptions {
  /** MERGE_DOMAIN_CONFIG: a later document with a known domain adds its top-level descriptors to it. */
  readonly mergeDomainConfig: boolean;
  /** Stats for a configured rule's key; these live as long as the process (they are few). */
  readonly statsFor: (fullKey: string) => RuleStats;
  readonly debug?: ((line: string) => void) | undefined;
  /** The most descriptors the rule set may hold (default {@link MAX_RULE_SET_DESCRIPTORS}). */
  readonly maxDescriptors?: number;
  /** Ends {@link buildRuleSetInSlices} between two slices, rejecting with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * The most descriptors (nested ones included) one rule set may hold unless CONFIG_MAX_DESCRIPTORS says
 * otherwise. A million descriptors are about 150 MB of YAML and take about 1.7 GB of heap once compiled
 * with their stats; anything beyond is a mistake or an attack, refused before it can exhaust memory.
 */
export const MAX_RULE_SET_DESCRIPTORS = 1_000_000;

/** The error of a rule set that would hold more than `maxDescriptors`, against the file that crossed it. */
export function tooManyDescriptors(source: string, maxDescriptors: number): ConfigError {
  return new ConfigError(source, `too many descriptors: a rule set may hold at most ${maxDescriptors}`);
}

/** Descriptors compiled between two yields of {@link buildRuleSetInSlices}: 2–4 ms of work, stats included. */
export const DESCRIPTORS_PER_SLICE = 250;

interface MutableLevel {
  exact: Map<string, RuleNode>;
  wildcards: RuleNode[];
}

/**
 * Validates and compiles documents into one immutable {@link RuleSet}, in document order. The first problem
 * throws a {@link ConfigError} with the reference's message, prefixed with the document's name; nothing
 * of a failed build is ever used.
 */
export function buildRuleSet(documents: readonly RuleDocument[], options: BuildRuleSetOptions): RuleSet {
  const steps = compileSteps(documents, options);
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}

/**
 * {@link buildRuleSet} in slices of a few milliseconds, yielding to the event loop between them, so that a
 * rule set of hundreds of thousands of descriptors never stalls decisions while it compiles.
 */
export async function buildRuleSetInSlices(
  documents: readonly RuleDocument[],
  options: BuildRuleSetOptions,
): Promise<RuleSet> {
  const steps = compileSteps(documents, options);
  let step = steps.next();
  while (!step.done) {
    await new Promise((resolve) => setImmediate(resolve));
    options.signal?.throwIfAborted();
    step = steps.next();
  }
  return step.value;
}

/** Counts compiled descriptors; the compile steps pause after every slice. */
interface Progress {
  descriptors: number;
  /** The domain of the document being compiled. */
  domain: string;
  /** Per domain, the reservations' request_id_keys seen so far. */
  readonly requestIdKeys: Map<string, Set<string>>;
  /** Per domain and request_id_key, the first rule that named it, and its document. */
  readonly requestIdOwners: Map<string, { readonly fullKey: string; readonly source: string }>;
}

function* compileSteps(
  documents: readonly RuleDocument[],
  options: BuildRuleSetOptions,
): Generator<void, RuleSet, void> {
  const domains = new Map<string, MutableLevel>();
  const progress: Progress = {
    descriptors: 0,
    domain: "",
    requestIdKeys: new Map(),
    requestIdOwners: new Map(),
  };
  for (const document of documents) {
    if (document.domain === "") throw new ConfigError(document.name, "config file cannot have empty domain");
    let level = domains.get(document.domain);
    if (level !== undefined) {
      if (!options.mergeDomainConfig) {
        throw new ConfigError(document.name, `duplicate domain '${document.domain}' in config file`);
      }
      options.debug?.(`patching domain: ${document.domain}`);
    } else {
      options.debug?.(`loading domain: ${document.domain}`);
      level = { exact: new Map(), wildcards: [] };
      domains.set(document.domain, level);
    }
    progress.domain = document.domain;
    yield* addDescriptors(
      level,
      `${document.domain}.`,
      document.descriptors,
      document.name,
      options,
      progress,
      [],
    );
  }
  if (progress.requestIdKeys.size === 0) return { domains };
  for (const [domain, keys] of progress.requestIdKeys) {
    refuseRequestIdKeyInRules(domain, domains.get(domain)!, keys, progress.requestIdOwners);
  }
  return { domains, requestIdKeys: progress.requestIdKeys };
}

/**
 * Request-id entries are taken out of every descriptor of their domain before matching
 * (src/engine/request-ids.ts), so a descriptor of the domain keyed like one could never match: refused,
 * naming the reservation's rule and that descriptor.
 */
function refuseRequestIdKeyInRules(
  domain: string,
  level: RuleLevel,
  keys: ReadonlySet<string>,
  owners: ReadonlyMap<string, { readonly fullKey: string; readonly source: string }>,
): void {
  for (const node of level.exact.values()) {
    if (keys.has(node.key)) {
      const owner = owners.get(`${domain}\u0000${node.key}`)!;
      throw new ConfigError(
        owner.source,
        `reservation of '${owner.fullKey}': request_id_key '${node.key}' is also the key of descriptor ` +
          `'${node.fullKey}'; request-id entries are taken out of every descriptor of domain '${domain}' ` +
          "before matching, so that descriptor could never match",
      );
    }
    if (node.children !== undefined) refuseRequestIdKeyInRules(domain, node.children, keys, owners);
  }
}

function* addDescriptors(
  level: MutableLevel,
  parentKey: string,
  descriptors: readonly DescriptorDocument[],
  source: string,
  options: BuildRuleSetOptions,
  progress: Progress,
  /** The keys of the descriptors above this level (a reservation's request_id_key may be none of them). */
  parentKeys: readonly string[],
): Generator<void, void, void> {
  for (const descriptor of descriptors) {
    progress.descriptors++;
    const maxDescriptors = options.maxDescriptors ?? MAX_RULE_SET_DESCRIPTORS;
    if (progress.descriptors > maxDescriptors) throw tooManyDescriptors(source, maxDescriptors);
    if (progress.descriptors % DESCRIPTORS_PER_SLICE === 0) yield;
    if (descriptor.key === "") throw new ConfigError(source, "descriptor has empty key");
    const composite = descriptor.value === "" ? descriptor.key : `${descriptor.key}_${descriptor.value}`;
    const fullKey = parentKey + composite;
    if (level.exact.has(composite)) {
      throw new ConfigError(source, `duplicate descriptor composite key '${fullKey}'`);
    }
    const pathKeys = [...parentKeys, descriptor.key];
    const limit = compileDescriptorLimit(descriptor, fullKey, source, options.statsFor, pathKeys);
    if (limit !== undefined) noteRequestIdKeys(progress, limit, source);
    if (descriptor.shareThreshold && !composite.includes("*")) {
      throw new ConfigError(
        source,
        `share_threshold can only be used with wildcard values (containing '*'), but found key '${composite}'`,
      );
    }
    options.debug?.(`loading descriptor: key=${fullKey}${limit ? limitDebugText(limit) : ""}`);
    let children: RuleLevel | undefined;
    if (descriptor.descriptors.length > 0) {
      const childLevel: MutableLevel = { exact: new Map(), wildcards: [] };
      yield* addDescriptors(
        childLevel,
        `${fullKey}.`,
        descriptor.descriptors,
        source,
        options,
        progress,
        pathKeys,
      );
      children = childLevel;
    }
    const node: RuleNode = {
      key: descriptor.key,
      value: descriptor.value,
      composite,
      fullKey,
      limit,
      children,
      valueToMetric: descriptor.valueToMetric,
      shareThreshold: descriptor.shareThreshold,
      wildcard: composite.includes("*") ? compileWildcard(composite) : undefined,
      source,
    };
    level.exact.set(composite, node);
    if (node.wildcard) level.wildcards.push(node);
  }
}

/** Records the request_id_keys of `limit`'s reservations under its domain. */
function noteRequestIdKeys(progress: Progress, limit: RateLimitRule, source: string): void {
  const domain = progress.domain;
  for (const each of [limit, ...(limit.stacked ?? [])]) {
    const key = each.reservation?.requestIdKey;
    if (key === undefined) continue;
    let keys = progress.requestIdKeys.get(domain);
    if (keys === undefined) {
      keys = new Set();
      progress.requestIdKeys.set(domain, keys);
    }
    keys.add(key);
    const owner = `${domain}\u0000${key}`;
    if (!progress.requestIdOwners.has(owner))
      progress.requestIdOwners.set(owner, { fullKey: each.fullKey, source });
  }
}

function limitDebugText(limit: RateLimitRule): string {
  const extensions =
    limit.algorithm === undefined
      ? ""
      : `, algorithm=${limit.algorithm}, burst=${limit.burst}, unit_multiplier=${limit.unitMultiplier}` +
        (limit.reservation === undefined ? "" : `, reservation=${reservationText(limit.reservation)}`);
  const text =
    ` ratelimit={requests_per_unit=${limit.requestsPerUnit}, unit=${unitName(limit.unit)}, ` +
    `unlimited=${limit.unlimited}, shadow_mode=${limit.shadowMode}, quota_mode=${limit.quotaMode}${extensions}}`;
  return text + (limit.stacked ?? []).map(limitDebugText).join("");
}
