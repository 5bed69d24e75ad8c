import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { buildRuleSet } from "../config/build-rule-set.js";
import type { RuleDocument } from "../config/rule-document.js";
import { parseRuleYaml } from "../config/yaml/parse-rule-yaml.js";
import { messageOf } from "../errors.js";
import { StatsRegistry } from "../observability/stats-registry.js";

/**
 * The reference's `ratelimit_config_check`: loads every entry of `directory` (name order, no extension
 * filter, not recursive) as rules and prints its messages. YAML errors are reported like every other error
 * (the reference crashes on them). An empty directory is a warning. Returns the exit code: 0 valid or
 * empty, 1 invalid or unreadable.
 */
export async function checkRuleDirectory(
  directory: string,
  mergeDomainConfigs: boolean,
  print: (line: string) => void,
) {
  print("checking rate limit configs...");
  print(`loading config directory: ${directory}`);
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    print(`error opening directory ${directory}: ${goFileError("open", directory, error)}`);
    return 1;
  }
  if (entries.length === 0) {
    // The reference says "all rate limit configs ok" here; a directory with nothing in it is more likely
    // the wrong one than a valid configuration.
    print(`warning: no config files in ${directory}: nothing to check`);
    return 0;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const documents: RuleDocument[] = [];
  for (const entry of entries) {
    const path = join(directory, entry.name);
    print(`opening config file: ${path}`);
    let content: string;
    try {
      content = await readFile(path, "utf8");
    } catch (error) {
      print(`error reading file ${path}: ${goFileError("read", path, error)}`);
      return 1;
    }
    try {
      documents.push(parseRuleYaml(path, content));
    } catch (error) {
      print(`error loading rate limit configs: ${messageOf(error)}`);
      return 1;
    }
  }
  try {
    const stats = new StatsRegistry({ maxDynamicKeys: 1 });
    buildRuleSet(documents, {
      mergeDomainConfig: mergeDomainConfigs,
      statsFor: (key) => stats.pinnedRuleStats(key),
    });
  } catch (error) {
    print(`error loading rate limit configs: ${messageOf(error)}`);
    return 1;
  }
  print("all rate limit configs ok");
  return 0;
}

/** Go's wording for common file errors (`open x: no such file or directory`). */
function goFileError(operation: string, path: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === "ENOENT"
      ? "no such file or directory"
      : code === "EISDIR"
        ? "is a directory"
        : code === "EACCES"
          ? "permission denied"
          : code === "ENOTDIR"
            ? "not a directory"
            : messageOf(error);
  return `${operation} ${path}: ${reason}`;
}
