/** Delay before retry `failures` (1 for the first retry): `baseMs` × 2^(failures − 1), at most `maxMs`. */
export function retryDelayMs(failures: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, failures - 1));
}
