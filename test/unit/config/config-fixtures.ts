// Helpers for the config unit tests: fixtures live in test/fixtures/config/, named after their scenario.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildRuleSet } from "../../../src/config/build-rule-set.js";
import type { RuleDocument } from "../../../src/config/rule-document.js";
import { parseRuleYaml } from "../../../src/config/yaml/parse-rule-yaml.js";
import type { RuleSet } from "../../../src/engine/rule-set.js";
import { ConfigError } from "../../../src/errors.js";
import { StatsRegistry } from "../../../src/observability/stats-registry.js";

export const FIXTURE_DIR = fileURLToPath(new URL("../../fixtures/config/", import.meta.url));

/** The text of a fixture file. */
export function fixtureText(name: string): string {
  return readFileSync(FIXTURE_DIR + name, "utf8");
}

/** A fixture parsed under its own file name, as the reference names errors (`duplicate-key.yaml: …`). */
export function parseFixture(name: string): RuleDocument {
  return parseRuleYaml(name, fixtureText(name));
}

/** A rule compiler as the daemon builds one: one stats registry, pinned stats per configured rule. */
export function compileRules(documents: readonly RuleDocument[], mergeDomainConfig = false): RuleSet {
  const registry = new StatsRegistry({ maxDynamicKeys: 100 });
  return buildRuleSet(documents, { mergeDomainConfig, statsFor: (key) => registry.pinnedRuleStats(key) });
}

/** Parses and builds the named fixtures, in order. */
export function buildFixtures(names: readonly string[], mergeDomainConfig = false): RuleSet {
  return compileRules(names.map(parseFixture), mergeDomainConfig);
}

/**
 * The full message of the ConfigError `run` throws. Anything else (no error, another error type) is
 * returned as a description that can never equal an expected message.
 */
export function configErrorMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    return `<not a ConfigError: ${String(error)}>`;
  }
  return "<no error thrown>";
}
