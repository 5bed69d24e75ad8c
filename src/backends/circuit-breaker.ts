/** How a {@link CircuitBreaker} opens and probes (BACKEND_BREAKER_*). */
export interface CircuitBreakerOptions {
  /** Consecutive failed calls that open it; 0 = never opens. */
  readonly failures: number;
  /** How long it stays open before one probe, at first. */
  readonly cooldownMs: number;
  /** The longest the cooldown grows to, doubling per failed probe. */
  readonly maxCooldownMs: number;
  /** A monotonic clock in ms (`performance.now` by default); injectable for tests. */
  readonly nowMs?: () => number;
  /** Told of every change of state. */
  readonly onTransition?: (transition: BreakerTransition) => void;
}

/** A change of a breaker's state, with what the log line says about it. */
export type BreakerTransition =
  | { readonly to: "open"; readonly cause: unknown }
  | {
      readonly to: "still_open";
      readonly cause: unknown;
      readonly outageMs: number;
      readonly nextProbeMs: number;
    }
  | { readonly to: "closed"; readonly outageMs: number };

/** What {@link CircuitBreaker.admit} lets through: nothing, an ordinary call, or the one probe. */
export type Admission = "refused" | "call" | "probe";

/**
 * A circuit breaker in front of a counter store (docs/outages.md), free of I/O: the
 * caller asks {@link admit} before each call and reports its outcome. Closed, it counts consecutive
 * failures and opens at `failures`. Open, it refuses every call until the cooldown has passed, then admits
 * exactly one probe (refusing the rest meanwhile): a probe that succeeds closes it, one that fails opens it
 * again for twice the cooldown, up to `maxCooldownMs`. Outcomes of calls admitted before it opened do not
 * change an open breaker: only the probe decides.
 */
export class CircuitBreaker {
  readonly #options: CircuitBreakerOptions;
  readonly #nowMs: () => number;
  #state: "closed" | "open" | "probing" = "closed";
  #consecutiveFailures = 0;
  #cooldownMs: number;
  #openedAtMs = 0;
  #probeAtMs = 0;

  constructor(options: CircuitBreakerOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? (() => performance.now());
    this.#cooldownMs = options.cooldownMs;
  }

  /** Whether calls are being refused (open, or open with its probe out). */
  /** `closed`, `open` (refusing), or `probing` (one call is finding out whether the store is back). */
  get state(): "closed" | "open" | "probing" {
    return this.#state;
  }

  get isOpen(): boolean {
    return this.#state !== "closed";
  }

  /** Whether a call may go to the store now, and whether it is the probe. */
  admit(): Admission {
    if (this.#state === "closed") return "call";
    if (this.#state === "probing" || this.#nowMs() < this.#probeAtMs) return "refused";
    this.#state = "probing";
    return "probe";
  }

  /** The call admitted as `admission` got its answer. */
  succeeded(admission: Admission): void {
    if (admission === "probe") {
      const outageMs = this.#nowMs() - this.#openedAtMs;
      this.#state = "closed";
      this.#consecutiveFailures = 0;
      this.#cooldownMs = this.#options.cooldownMs;
      this.#options.onTransition?.({ to: "closed", outageMs });
    } else if (this.#state === "closed") {
      this.#consecutiveFailures = 0;
    }
  }

  /** The call admitted as `admission` failed (an error or a timeout of the backend) with `cause`. */
  failed(admission: Admission, cause: unknown): void {
    if (admission === "probe") {
      this.#cooldownMs = Math.min(this.#cooldownMs * 2, this.#options.maxCooldownMs);
      this.#reopen();
      this.#options.onTransition?.({
        to: "still_open",
        cause,
        outageMs: this.#nowMs() - this.#openedAtMs,
        nextProbeMs: this.#cooldownMs,
      });
      return;
    }
    if (this.#state !== "closed" || this.#options.failures === 0) return;
    this.#consecutiveFailures++;
    if (this.#consecutiveFailures < this.#options.failures) return;
    this.#openedAtMs = this.#nowMs();
    this.#reopen();
    this.#options.onTransition?.({ to: "open", cause });
  }

  /**
   * The call admitted as `admission` ended without telling whether the backend works (the request itself
   * was refused): a probe's turn passes to the next call.
   */
  undecided(admission: Admission): void {
    if (admission === "probe" && this.#state === "probing") this.#state = "open";
  }

  #reopen(): void {
    this.#state = "open";
    this.#probeAtMs = this.#nowMs() + this.#cooldownMs;
  }
}
