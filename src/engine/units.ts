/**
 * Rate-limit time units with the numbers of `RateLimitResponse.RateLimit.Unit` (WEEK = 7), their window
 * lengths, and their names. Windows are aligned to the Unix epoch: a MONTH is 30 days and a YEAR 365
 * days, not calendar periods (as the reference).
 */

/** Numeric unit as on the wire. */
export type UnitValue = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7;

export const UNIT_UNKNOWN = 0;
export const UNIT_SECOND = 1;

/** Unit names indexed by value, as the proto enum spells them. */
export const UNIT_NAMES = ["UNKNOWN", "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR", "WEEK"] as const;

const UNIT_SECONDS = [0, 1, 60, 3600, 86400, 2_592_000, 31_536_000, 604_800] as const;

/** Window length in seconds; 0 for UNKNOWN or any out-of-range value. */
export function unitSeconds(unit: number): number {
  return UNIT_SECONDS[unit] ?? 0;
}

/** Unit for a YAML `unit:` text (any case), or undefined when it names no unit. `unknown` maps to 0. */
export function unitFromName(name: string): UnitValue | undefined {
  const index = UNIT_NAMES.indexOf(name.toUpperCase() as (typeof UNIT_NAMES)[number]);
  return index < 0 ? undefined : (index as UnitValue);
}

/** Name of a unit value, `UNKNOWN` when out of range. */
export function unitName(unit: number): string {
  return UNIT_NAMES[unit] ?? "UNKNOWN";
}

/** Units a request-level override may carry: envoy.type.v3.RateLimitUnit SECOND … YEAR (no WEEK). */
export function isValidOverrideUnit(unit: number): boolean {
  return Number.isInteger(unit) && unit >= 1 && unit <= 6;
}
