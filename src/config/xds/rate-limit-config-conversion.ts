import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { JsonObject } from "../../engine/json-value.js";
import { unitFromName, unitName } from "../../engine/units.js";
import {
  type RateLimitConfig,
  RateLimitConfigSchema,
  type RateLimitDescriptor,
  type RateLimitDescriptorSchema,
} from "../../gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import type { DescriptorDocument, RuleDocument } from "../rule-document.js";

/** The xDS resource type of rate-limit rules. */
export const RATE_LIMIT_CONFIG_TYPE_URL = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig";

/**
 * An xDS `RateLimitConfig` in the YAML model (reference `config_xds.go`): the resource name stands in for
 * the file name in errors, the unit becomes its enum name (`UNKNOWN` for unlimited rules), metadata stays
 * JSON. `value_to_metric` and `share_threshold` do not exist in the proto.
 */
export function ruleDocumentFromConfig(config: RateLimitConfig): RuleDocument {
  return {
    name: config.name,
    domain: config.domain,
    descriptors: config.descriptors.map(descriptorDocument),
  };
}

function descriptorDocument(descriptor: RateLimitDescriptor): DescriptorDocument {
  const policy = descriptor.rateLimit;
  return {
    key: descriptor.key,
    value: descriptor.value,
    rateLimit: policy && {
      requestsPerUnit: policy.requestsPerUnit,
      unit: unitName(policy.unit),
      unlimited: policy.unlimited,
      name: policy.name,
      replaces: policy.replaces.map((replace) => replace.name),
    },
    descriptors: descriptor.descriptors.map(descriptorDocument),
    shadowMode: descriptor.shadowMode,
    quotaMode: descriptor.quotaMode,
    detailedMetric: descriptor.detailedMetric,
    valueToMetric: false,
    shareThreshold: false,
    metadata: descriptor.metadata as JsonObject | undefined,
  };
}

/**
 * The other way, for the management server: a parsed YAML file as a `RateLimitConfig` named `name`.
 * Returns the settings the proto cannot carry (`value_to_metric`, `share_threshold`) so the caller can warn.
 */
export function configFromRuleDocument(document: RuleDocument): {
  config: RateLimitConfig;
  dropped: string[];
} {
  const dropped: string[] = [];
  const convert = (
    descriptor: DescriptorDocument,
    path: string,
  ): MessageInitShape<typeof RateLimitDescriptorSchema> => {
    const here = `${path}.${descriptor.value === "" ? descriptor.key : `${descriptor.key}_${descriptor.value}`}`;
    if (descriptor.valueToMetric) dropped.push(`${here}: value_to_metric`);
    if (descriptor.shareThreshold) dropped.push(`${here}: share_threshold`);
    const policy = descriptor.rateLimit;
    return {
      key: descriptor.key,
      value: descriptor.value,
      rateLimit: policy && {
        requestsPerUnit: policy.requestsPerUnit,
        // An unknown unit name travels as UNKNOWN, which the client rejects (as it would the YAML).
        unit: unitFromName(policy.unit) ?? 0,
        unlimited: policy.unlimited,
        name: policy.name,
        replaces: policy.replaces.map((name) => ({ name })),
      },
      descriptors: descriptor.descriptors.map((child) => convert(child, here)),
      shadowMode: descriptor.shadowMode,
      quotaMode: descriptor.quotaMode,
      detailedMetric: descriptor.detailedMetric,
      metadata: descriptor.metadata,
    };
  };
  const config = create(RateLimitConfigSchema, {
    name: document.name,
    domain: document.domain,
    descriptors: document.descriptors.map((d) => convert(d, document.domain)),
  });
  return { config, dropped };
}
