import { goQuoteBytes } from "../config/yaml/go-format.js";
import type { FlagValues } from "./go-flags.js";
import { parseDescriptorFlag } from "./rate-limit-client.js";

/**
 * The reference client's flags, sorted by name as Go's `flag.VisitAll` visits them. ratelimitd's own
 * extras (`-hits_addend`, `-timeout`, `-json`, `-explain`, `-debug_addr`) are left out so that the output stays the reference's.
 */
const ECHOED_FLAGS = [
  "descriptors",
  "dial_string",
  "domain",
  "grpc-cert-file",
  "grpc-key-file",
  "grpc-server-ca-file",
  "grpc-use-tls",
  "oltp-protocol",
];

/** The reference client's first output lines: `Flag: --<name>=<value as Go's %q>`, one per flag. */
export function clientFlagEcho(values: FlagValues): string[] {
  return ECHOED_FLAGS.map(
    (name) => `Flag: --${name}=${goQuoteBytes(Buffer.from(flagText(values[name]!), "utf8"))}`,
  );
}

/** A flag's `String()`: each descriptor as `[ <key=k, value=v>  <key=k2, value=v2> ] `, none as "". */
function flagText(value: string | string[] | boolean): string {
  if (!Array.isArray(value)) return String(value);
  const descriptor = (text: string) =>
    `[${parseDescriptorFlag(text)!
      .map(([key, entryValue]) => ` <key=${key}, value=${entryValue}> `)
      .join("")}] `;
  return value.map(descriptor).join("");
}
