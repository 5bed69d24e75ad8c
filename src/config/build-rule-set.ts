import type { RateLimitRule, RuleLevel, RuleNode, RuleSet, RuleStats } from "../engine/rule-set.js";
import { unitFromName, unitName } from "../engine/units.js";
import { compileWildcard } from "../engine/wildcard.js";
import { ConfigError } from "../errors.js";
import type { DescriptorDocument, RuleDocument } from "./rule-document.js";

export interface BuildRuleSetOptions {
  /** MERGE_DOMAIN_CONFIG: a later document with a known domain adds its top-level descriptors to it. */
  readonly mergeDomainConfig: boolean;
  /** Stats for a configured rule's key; these live as long as the process (they are few). */
  readonly statsFor: (fullKey: string) => RuleStats;
  readonly debug?: ((line: string) => void) | undefined;
}

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
  const domains = new Map<string, MutableLevel>();
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
    addDescriptors(level, `${document.domain}.`, document.descriptors, document.name, options);
  }
  return { domains };
}

function addDescriptors(
  level: MutableLevel,
  parentKey: string,
  descriptors: readonly DescriptorDocument[],
  source: string,
  options: BuildRuleSetOptions,
): void {
  for (const descriptor of descriptors) {
    if (descriptor.key === "") throw new ConfigError(source, "descriptor has empty key");
    const composite = descriptor.value === "" ? descriptor.key : `${descriptor.key}_${descriptor.value}`;
    const fullKey = parentKey + composite;
    if (level.exact.has(composite)) {
      throw new ConfigError(source, `duplicate descriptor composite key '${fullKey}'`);
    }
    const limit = descriptor.rateLimit ? compileLimit(descriptor, fullKey, source, options) : undefined;
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
      addDescriptors(childLevel, `${fullKey}.`, descriptor.descriptors, source, options);
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
    };
    level.exact.set(composite, node);
    if (node.wildcard) level.wildcards.push(node);
  }
}

function compileLimit(
  descriptor: DescriptorDocument,
  fullKey: string,
  source: string,
  options: BuildRuleSetOptions,
): RateLimitRule {
  const policy = descriptor.rateLimit!;
  const unit = unitFromName(policy.unit);
  const validUnit = unit !== undefined && unit !== 0;
  if (policy.unlimited && validUnit) {
    throw new ConfigError(source, "should not specify rate limit unit when unlimited");
  }
  if (!policy.unlimited && !validUnit)
    throw new ConfigError(source, `invalid rate limit unit '${policy.unit}'`);
  for (const replaced of policy.replaces) {
    if (replaced === "") throw new ConfigError(source, "should not have an empty replaces entry");
    if (replaced === policy.name)
      throw new ConfigError(source, "replaces should not contain name of same descriptor");
  }
  return {
    requestsPerUnit: policy.requestsPerUnit,
    unit: validUnit ? unit : 0,
    name: policy.name,
    replaces: policy.replaces,
    unlimited: policy.unlimited,
    shadowMode: descriptor.shadowMode,
    quotaMode: descriptor.quotaMode,
    detailedMetric: descriptor.detailedMetric,
    fullKey,
    stats: options.statsFor(fullKey),
    metadata: descriptor.metadata,
  };
}

function limitDebugText(limit: RateLimitRule): string {
  return (
    ` ratelimit={requests_per_unit=${limit.requestsPerUnit}, unit=${unitName(limit.unit)}, ` +
    `unlimited=${limit.unlimited}, shadow_mode=${limit.shadowMode}, quota_mode=${limit.quotaMode}}`
  );
}
