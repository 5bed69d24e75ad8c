import type { SlidingOperation } from "../engine/algorithms/counter-operation.js";
import type {
  CounterIncrement,
  CounterStore,
  HealthListener,
  StoreCapabilities,
  StoreSpanDescription,
} from "../engine/counter-store.js";
import { BackendUnavailableError, InvalidArgumentError } from "../errors.js";
import type { Admission, CircuitBreaker } from "./circuit-breaker.js";
import type { NodeBreakers } from "./node-breakers.js";

/** What guards a remote store: its breaker (absent = none) and the bound on calls in flight. */
export interface StoreGuardOptions {
  readonly breaker: CircuitBreaker | undefined;
  /**
   * A Redis Cluster's breakers, one per primary, which the store itself consults (docs/outages.md "Redis
   * Cluster"); here only for {@link GuardedCounterStore.breakerState}. Given instead of `breaker`.
   */
  readonly nodeBreakers?: NodeBreakers | undefined;
  /** BACKEND_MAX_PENDING: calls waiting on the store at once; more are refused at once. */
  readonly maxPending: number;
  /** How long a probe's decision waits for the store before the failure mode answers it; 100 ms by default. */
  readonly probeWaitMs?: number;
}

/**
 * A remote counter store (Redis, memcached) behind one circuit breaker and one bound on pending calls —
 * the same for every backend (docs/outages.md). A call the breaker or the bound
 * refuses fails at once with a {@link BackendUnavailableError} and never reaches the store; a call that
 * fails for the backend's sake (an error or a timeout) counts towards opening the breaker. Everything
 * else passes through.
 */
export class GuardedCounterStore implements CounterStore {
  readonly #store: CounterStore;
  readonly #breaker: CircuitBreaker | undefined;
  readonly #nodeBreakers: NodeBreakers | undefined;
  readonly #maxPending: number;
  readonly #probeWaitMs: number;
  #pending = 0;
  #openError: BackendUnavailableError | undefined;

  constructor(store: CounterStore, options: StoreGuardOptions) {
    this.#store = store;
    this.#breaker = options.breaker;
    this.#nodeBreakers = options.nodeBreakers;
    this.#maxPending = options.maxPending;
    this.#probeWaitMs = options.probeWaitMs ?? 100;
  }

  get name(): string {
    return this.#store.name;
  }

  get capabilities(): StoreCapabilities {
    return this.#store.capabilities;
  }

  /** The breaker's state (a cluster's: its worst node's); `off` when BACKEND_BREAKER_FAILURES=0. */
  get breakerState(): "closed" | "open" | "probing" | "off" {
    return this.#breaker?.state ?? this.#nodeBreakers?.state ?? "off";
  }

  /** Calls waiting on the store now. */
  get pending(): number {
    return this.#pending;
  }

  increment(increments: readonly CounterIncrement[]): number[] | Promise<number[]> {
    const admission = this.#admit();
    return this.#guard(admission, () => this.#store.increment(increments));
  }

  read(increments: readonly CounterIncrement[]): number[] | Promise<number[]> {
    const admission = this.#admit();
    return this.#guard(admission, () => this.#store.read(increments));
  }

  /** Refused hits go back only while the breaker is closed: an open one means the store is away. */
  release(operations: readonly SlidingOperation[]): void {
    if (this.#breaker?.isOpen !== true) this.#store.release(operations);
  }

  traceSpan(increments: readonly CounterIncrement[]): StoreSpanDescription {
    return this.#store.traceSpan(increments);
  }

  start(): Promise<void> {
    return this.#store.start();
  }

  onHealthChange(listener: HealthListener): void {
    this.#store.onHealthChange(listener);
  }

  close(): Promise<void> {
    return this.#store.close();
  }

  #admit(): Admission {
    const admission = this.#breaker?.admit() ?? "call";
    if (admission === "refused") {
      // One error for every refusal: an open breaker may refuse thousands of calls a second.
      this.#openError ??= new BackendUnavailableError(this.#store.name, "breaker_open", "");
      throw this.#openError;
    }
    if (this.#pending >= this.#maxPending) {
      this.#breaker?.undecided(admission);
      throw new BackendUnavailableError(
        this.#store.name,
        "pending_full",
        `${this.#pending} calls waiting, BACKEND_MAX_PENDING=${this.#maxPending}`,
      );
    }
    return admission;
  }

  #guard(admission: Admission, call: () => number[] | Promise<number[]>): number[] | Promise<number[]> {
    let result: number[] | Promise<number[]>;
    try {
      result = call();
    } catch (error) {
      this.#settle(admission, error);
      throw error;
    }
    if (Array.isArray(result)) {
      this.#settle(admission, undefined);
      return result;
    }
    this.#pending++;
    // Watched beside the caller, who awaits the store's own promise: no extra hop on the hot path. The
    // watcher handles a failure itself, so it leaves no unhandled rejection behind.
    result.then(
      () => {
        this.#pending--;
        this.#settle(admission, undefined);
      },
      (error: unknown) => {
        this.#pending--;
        this.#settle(admission, error);
      },
    );
    return admission === "probe" ? this.#boundedProbe(result) : result;
  }

  /**
   * A probe's decision waits at most `probeWaitMs` for the store: past that it fails like a refused call
   * (the failure mode answers it), while the probe itself goes on and its outcome still opens or closes the
   * breaker. A store still frozen thus holds no decision for its whole timeout.
   */
  #boundedProbe(settled: Promise<number[]>): Promise<number[]> {
    // Handled here too: once the timer has answered, nobody else awaits the probe's own failure.
    settled.catch(() => {});
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(
          new BackendUnavailableError(
            this.#store.name,
            "breaker_open",
            `its probe has had no answer for ${this.#probeWaitMs} ms`,
          ),
        );
      }, this.#probeWaitMs);
      settled.then(
        (values) => {
          clearTimeout(timer);
          resolve(values);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  #settle(admission: Admission, error: unknown): void {
    const breaker = this.#breaker;
    if (breaker === undefined) return;
    if (error === undefined) breaker.succeeded(admission);
    // A store refusing the request itself (memcached: a key it cannot hold) says nothing about the backend.
    else if (error instanceof InvalidArgumentError) breaker.undecided(admission);
    else breaker.failed(admission, error);
  }
}
