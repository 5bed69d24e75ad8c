/**
 * When an explain and the decision after it may answer different resets although nothing was counted: a
 * status's `durationUntilReset` is whole seconds, so it changes at instants that have nothing to do with the
 * explain. Fixed and sliding windows compute it from `floor(now / 1000)` (src/service/rate-limit-service.ts),
 * so it changes on every whole second; a token bucket's is `ceil((TAT − now) / 1 s)`
 * (src/engine/algorithms/token-bucket.ts), so it changes once a second at the sub-second phase of the
 * decision that last started the bucket from full. The guard keeps each explain-then-decide step clear of
 * those instants, so the comparison can be exact.
 */

/** How long one step (stats, explain, store snapshot, explain, decision) may take, at most. */
const STEP_BUDGET_MS = 300;
/** Clock readings of the test and of the daemon (or Redis `TIME`) are not taken at the same instant. */
const SLACK_MS = 3;
const GIVE_UP_MS = 3_000;

export class PhaseGuard {
  /** Sub-second arcs [from, to] (ms within a second, from ≤ to, may exceed 999) a bucket phase lies in. */
  readonly #arcs: { from: number; to: number }[] = [];

  /** Waits (at most 3 s) until the next {@link STEP_BUDGET_MS} hold no instant where a reset changes. */
  async waitForRoom(): Promise<void> {
    const deadline = Date.now() + GIVE_UP_MS;
    while (Date.now() < deadline) {
      const now = Date.now();
      if (!this.crossed(now, now + STEP_BUDGET_MS)) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Records a decision made between `startedMs` and `endedMs` that put a bucket's phase somewhere in it. */
  addPhase(startedMs: number, endedMs: number): void {
    const from = (startedMs % 1000) - SLACK_MS;
    this.#arcs.push({ from, to: from + (endedMs - startedMs) + 2 * SLACK_MS });
  }

  /** Whether a reset may have changed between `startedMs` and `endedMs` (epoch ms). */
  crossed(startedMs: number, endedMs: number): boolean {
    if (endedMs - startedMs >= 1000) return true;
    for (let ms = startedMs - SLACK_MS; ms <= endedMs + SLACK_MS; ms++) {
      const phase = ms % 1000;
      if (phase === 0) return true;
      for (const { from, to } of this.#arcs) {
        if ((phase >= from && phase <= to) || (phase + 1000 >= from && phase + 1000 <= to)) return true;
        if (phase - 1000 >= from && phase - 1000 <= to) return true;
      }
    }
    return false;
  }
}
