import type { WildcardPattern } from "./rule-set.js";

/** Compiles a `key_value` pattern containing `*` (each `*` matches zero or more characters). */
export function compileWildcard(pattern: string): WildcardPattern {
  const segments = pattern.split("*");
  let fixedLength = 0;
  for (const segment of segments) fixedLength += segment.length;
  return { segments, fixedLength };
}

/**
 * Whether `text` (a request's `key_value`) matches: first segment as prefix, last as suffix, the middle
 * ones in order between them without overlapping.
 */
export function wildcardMatches(pattern: WildcardPattern, text: string): boolean {
  const { segments } = pattern;
  if (pattern.fixedLength > text.length) return false;
  const first = segments[0]!;
  const last = segments[segments.length - 1]!;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  let position = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < segments.length - 1; i++) {
    const segment = segments[i]!;
    const found = text.indexOf(segment, position);
    if (found < 0 || found + segment.length > end) return false;
    position = found + segment.length;
  }
  return true;
}
