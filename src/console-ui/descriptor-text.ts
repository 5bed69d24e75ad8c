import type { DecisionEntry } from "../console/console-contract";

/** A parse: the descriptors, or the first malformed line's message. */
export type ParsedDescriptors = { ok: true; descriptors: DecisionEntry[][] } | { ok: false; error: string };

/**
 * Parses descriptors as typed in the console: one per line, entries `key=value` separated by commas.
 * Every entry needs `=` (a value may be empty after it); blank lines are skipped.
 */
export function parseDescriptors(text: string): ParsedDescriptors {
  const descriptors: DecisionEntry[][] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const parsed = parseEntries(line);
    if (typeof parsed === "string") return { ok: false, error: `Line ${i + 1}: ${parsed}` };
    descriptors.push(parsed);
  }
  if (descriptors.length === 0) return { ok: false, error: "Enter at least one descriptor (key=value)." };
  return { ok: true, descriptors };
}

/** One descriptor's entries from `key=value, key2=value2`, or what is wrong with it. */
export function parseEntries(line: string): DecisionEntry[] | string {
  const entries: DecisionEntry[] = [];
  for (const part of line.split(",")) {
    const text = part.trim();
    const at = text.indexOf("=");
    if (at <= 0) return `"${text}" is not key=value`;
    const key = text.slice(0, at).trim();
    if (key === "") return `"${text}" has no key`;
    entries.push({ key, value: text.slice(at + 1).trim() });
  }
  return entries;
}

/** Entries as the console shows them: `key=value, key2=value2`. */
export function entriesText(entries: readonly DecisionEntry[]): string {
  return entries.map((entry) => `${entry.key}=${entry.value}`).join(", ");
}
