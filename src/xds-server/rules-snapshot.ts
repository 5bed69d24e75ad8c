import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { configFromRuleDocument } from "../config/xds/rate-limit-config-conversion.js";
import { parseRuleYaml } from "../config/yaml/parse-rule-yaml.js";
import type { RateLimitConfig } from "../gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";

/**
 * The YAML files of `directory` (not recursive, name order, dotfiles skipped) as xDS resources, one per file,
 * named after it. Rules are only parsed here — validation is the client's job, so a server can push an
 * invalid set and watch it being NACKed. Throws on a YAML syntax error. `warnings` lists what the proto
 * cannot carry.
 */
export async function rulesSnapshotFrom(
  directory: string,
): Promise<{ resources: RateLimitConfig[]; warnings: string[] }> {
  const names = (await readdir(directory, { withFileTypes: true }))
    .filter((entry) => entry.isFile() && !entry.name.startsWith("."))
    .map((entry) => entry.name)
    .sort();
  const resources: RateLimitConfig[] = [];
  const warnings: string[] = [];
  for (const name of names) {
    const document = parseRuleYaml(name, await readFile(join(directory, name), "utf8"));
    const { config, dropped } = configFromRuleDocument(document);
    resources.push(config);
    for (const what of dropped) warnings.push(`${name}: ${what} cannot be sent over xDS and is dropped`);
  }
  return { resources, warnings };
}
