import { InvalidArgumentError } from "../errors.js";
import type { DecisionDescriptor } from "./decision-request.js";
import { isValidOverrideUnit, unitName } from "./units.js";

/**
 * Checks what the reference would crash on or mis-count (an override unit outside SECOND…YEAR, an addend
 * beyond 2^53) before anything is counted, and returns the descriptor's hits: its own hits_addend when set
 * (even 0), else max(1, request hits_addend).
 */
export function validatedHits(descriptor: DecisionDescriptor, requestHits: number, index: number): number {
  if (descriptor.limit && !isValidOverrideUnit(descriptor.limit.unit)) {
    const unit = descriptor.limit.unit;
    throw new InvalidArgumentError(
      `descriptor ${index}: rate limit override has invalid unit ${unitName(unit)} (${unit})`,
    );
  }
  const own = descriptor.hitsAddend;
  if (own === undefined) return Math.max(1, requestHits);
  const hits = Number(own);
  if (!Number.isSafeInteger(hits) || hits < 0) {
    throw new InvalidArgumentError(`descriptor ${index}: hits_addend ${own} is out of range`);
  }
  return hits;
}
