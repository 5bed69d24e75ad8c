/**
 * The near-limit threshold `floor(float32(L) × float32(ratio))`, computed in float32 as the reference's Go
 * code does, so that e.g. L = 15, ratio 0.8 gives 12 and L = 10 gives 8.
 */
export function nearLimitThreshold(requestsPerUnit: number, ratio: number): number {
  return Math.floor(Math.fround(Math.fround(requestsPerUnit) * Math.fround(ratio)));
}
