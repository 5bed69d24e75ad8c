/**
 * Limits for the algorithm tests, and a seeded random source so that every property run is repeatable.
 * Not a test file (no `.test.ts`).
 */
import type { AlgorithmLimit, LimitAlgorithm } from "../../../../src/engine/algorithms/algorithm-limit.js";
import { type UnitValue, unitFromName, unitSeconds } from "../../../../src/engine/units.js";

/** A limit as the rule loader will build it: window = unit × multiplier, burst defaulting to the rate. */
export function limitOf(
  algorithm: LimitAlgorithm,
  requestsPerUnit: number,
  unit: string,
  options: { unitMultiplier?: number; burst?: number } = {},
): AlgorithmLimit {
  const unitValue = unitFromName(unit) as UnitValue;
  const unitMultiplier = options.unitMultiplier ?? 1;
  return {
    algorithm,
    requestsPerUnit,
    unit: unitValue,
    unitMultiplier,
    windowSeconds: unitSeconds(unitValue) * unitMultiplier,
    burst: options.burst ?? requestsPerUnit,
  };
}

/** mulberry32: a small, fast, seeded PRNG giving floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [low, high], from `random`. */
export function between(random: () => number, low: number, high: number): number {
  return low + Math.floor(random() * (high - low + 1));
}

/** 2026-05-28T10:00:00Z in ms: a clock of today's magnitude (TAT doubles near 1.78 × 10¹⁵ µs). */
export const NOW_MS = 1_779_962_400_000;
