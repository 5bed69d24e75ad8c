import type { LimitOutcome } from "./limit-outcome.js";

/**
 * Which of a descriptor's limits (`rate_limits`) its status reports: the one closest to refusing — the
 * least `remaining`, on a tie the longest `resetSeconds`, on a tie of both the first. The descriptor is
 * OVER_LIMIT when any of its limits is over; the chosen limit gives `current_limit`, `limit_remaining`
 * and `duration_until_reset`. Returns -1 for an empty list.
 */
export function closestToRefusing(
  outcomes: readonly Pick<LimitOutcome, "remaining" | "resetSeconds">[],
): number {
  let chosen = -1;
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i]!;
    const best = outcomes[chosen];
    if (
      best === undefined ||
      outcome.remaining < best.remaining ||
      (outcome.remaining === best.remaining && outcome.resetSeconds > best.resetSeconds)
    ) {
      chosen = i;
    }
  }
  return chosen;
}
