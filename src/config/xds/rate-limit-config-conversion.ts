import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { JsonObject } from "../../engine/json-value.js";
import { unitFromName, unitName } from "../../engine/units.js";
import {
  type RateLimitConfig,
  RateLimitConfigSchema,
  type RateLimitDescriptor,
  type RateLimitDescriptorSchema,
  type RateLimitPolicy,
  type RateLimitPolicySchema,
} from "../../gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import type { DescriptorDocument, RateLimitDocument, RuleDocument } from "../rule-document.js";

/** The xDS resource type of rate-limit rules. */
export const RATE_LIMIT_CONFIG_TYPE_URL = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig";

/**
 * An xDS `RateLimitConfig` in the YAML model (reference `config_xds.go`): the resource name stands in for
 * the file name in errors, the unit becomes its enum name (`UNKNOWN` for unlimited rules), metadata stays
 * JSON. `value_to_metric` and `share_threshold` do not exist in the proto. The extension fields (numbered
 * 1000 and up) are read only when set: a zero value or an empty `rate_limits` is "not written", so an
 * upstream resource converts exactly as before.
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
  const rateLimits = descriptor.rateLimits;
  return {
    key: descriptor.key,
    value: descriptor.value,
    rateLimit: policy && limitDocument(policy),
    ...(rateLimits.length === 0 ? {} : { rateLimits: rateLimits.map(limitDocument) }),
    descriptors: descriptor.descriptors.map(descriptorDocument),
    shadowMode: descriptor.shadowMode,
    quotaMode: descriptor.quotaMode,
    detailedMetric: descriptor.detailedMetric,
    valueToMetric: false,
    shareThreshold: false,
    metadata: descriptor.metadata as JsonObject | undefined,
  };
}

function limitDocument(policy: RateLimitPolicy): RateLimitDocument {
  return {
    requestsPerUnit: policy.requestsPerUnit,
    unit: unitName(policy.unit),
    unlimited: policy.unlimited,
    name: policy.name,
    replaces: policy.replaces.map((replace) => replace.name),
    ...(policy.algorithm === "" ? {} : { algorithm: policy.algorithm }),
    ...(policy.burst === 0 ? {} : { burst: policy.burst }),
    ...(policy.unitMultiplier === 0 ? {} : { unitMultiplier: policy.unitMultiplier }),
    ...(policy.reservation === undefined
      ? {}
      : {
          reservation: {
            // 0 is proto3's "not set": validation then says the estimate is missing.
            estimate: policy.reservation.estimate === 0 ? undefined : policy.reservation.estimate,
            ttl: policy.reservation.ttl,
            requestIdKey: policy.reservation.requestIdKey,
          },
        }),
  };
}

/**
 * The other way, for the management server: a parsed YAML file as a `RateLimitConfig` named `name`.
 * Returns the settings the proto cannot carry (`value_to_metric`, `share_threshold`, a `burst` or
 * `unit_multiplier` that is no uint32 above 0, an empty `rate_limits`) so the caller can warn.
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
    if (descriptor.rateLimits?.length === 0) dropped.push(`${here}: rate_limits (empty)`);
    return {
      key: descriptor.key,
      value: descriptor.value,
      rateLimit: policy && limitPolicy(policy, `${here}: rate_limit`, dropped),
      rateLimits: descriptor.rateLimits?.map((each, index) =>
        limitPolicy(each, `${here}: rate_limits[${index}]`, dropped),
      ),
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

function limitPolicy(
  policy: RateLimitDocument,
  where: string,
  dropped: string[],
): MessageInitShape<typeof RateLimitPolicySchema> {
  // 0 would read back as "not set"; the client would then accept what the YAML checker refuses.
  const uint32 = (value: number | undefined, key: string) => {
    if (value === undefined) return 0;
    if (Number.isInteger(value) && value >= 1 && value <= 4_294_967_295) return value;
    dropped.push(`${where}.${key} ${value}`);
    return 0;
  };
  if (policy.algorithm === "") dropped.push(`${where}.algorithm ''`);
  return {
    requestsPerUnit: policy.requestsPerUnit,
    // An unknown unit name travels as UNKNOWN, which the client rejects (as it would the YAML).
    unit: unitFromName(policy.unit) ?? 0,
    unlimited: policy.unlimited,
    name: policy.name,
    replaces: policy.replaces.map((name) => ({ name })),
    algorithm: policy.algorithm ?? "",
    burst: uint32(policy.burst, "burst"),
    unitMultiplier: uint32(policy.unitMultiplier, "unit_multiplier"),
    reservation: policy.reservation && {
      estimate: uint32(policy.reservation.estimate, "reservation.estimate"),
      ttl: policy.reservation.ttl,
      requestIdKey: policy.reservation.requestIdKey,
    },
  };
}
