#!/usr/bin/env node
/**
 * ratelimit-config-check: validates a directory of rule files offline, as the reference's
 * `ratelimit_config_check`. Exit code 0 when valid (or empty, with a warning), 1 when not, 2 on bad flags
 * (`-config_dir` missing included).
 *   ratelimit-config-check -config_dir config/ratelimit/config
 */
import { dropOutputOnceClosed } from "../src/cli/closed-output.js";
import { checkRuleDirectory } from "../src/cli/config-check.js";
import { type FlagSpec, parseGoFlags, usageText } from "../src/cli/go-flags.js";

const specs: FlagSpec[] = [
  { name: "config_dir", usage: "path to directory containing rate limit configs" },
  {
    name: "merge_domain_configs",
    usage: "whether to merge configurations referencing the same domain",
    boolean: true,
  },
];

dropOutputOnceClosed();
const parsed = parseGoFlags(process.argv.slice(2), specs);
// The reference goes on with an empty -config_dir and fails on `open :`; without it there is nothing to check.
if (!parsed.ok || parsed.values.config_dir === "") {
  if (parsed.ok) process.stderr.write("-config_dir is required\n");
  else if (!parsed.help) process.stderr.write(`${parsed.message}\n`);
  process.stderr.write(usageText("ratelimit-config-check", specs));
  process.exit(parsed.ok || !parsed.help ? 2 : 0);
}
process.exitCode = await checkRuleDirectory(
  parsed.values.config_dir as string,
  parsed.values.merge_domain_configs as boolean,
  (line) => console.log(line),
);
