/**
 * Every `rate_limit.algorithm`, by the name the rules give it. Adding an algorithm is a module beside this
 * file, its name in {@link LimitAlgorithm} and one line here (the compiler refuses either without the
 * other); the names the rules accept and the stores that count every algorithm follow from this table.
 * An algorithm planning a new kind of store operation also adds that kind to counter-operation.ts, and the
 * compiler then names each store's switch that must run it.
 */
import type { Algorithm } from "./algorithm.js";
import type { LimitAlgorithm } from "./algorithm-limit.js";
import { fixedWindow } from "./fixed-window.js";
import { slidingWindow } from "./sliding-window.js";
import { tokenBucket } from "./token-bucket.js";

const ALGORITHMS = {
  // The default (a rule without `algorithm`) comes first.
  fixed_window: fixedWindow,
  sliding_window: slidingWindow,
  token_bucket: tokenBucket,
} satisfies Record<LimitAlgorithm, Algorithm>;

/** Every value `rate_limit.algorithm` accepts, the default first. */
export const LIMIT_ALGORITHMS: readonly LimitAlgorithm[] = Object.freeze(
  Object.keys(ALGORITHMS) as LimitAlgorithm[],
);

/** The algorithm registered as `name`. */
export function algorithmNamed(name: LimitAlgorithm): Algorithm {
  return ALGORITHMS[name];
}
