import type {
  CounterIncrement,
  CounterStore,
  HealthListener,
  StoreCapabilities,
  StoreSpanDescription,
} from "../engine/counter-store.js";
import { type BackendCallEvent, backendEnd, backendStart, publishAround } from "./request-channels.js";

/**
 * A counter store that publishes every `increment` call on {@link backendStart}/{@link backendEnd}, for the
 * backend span. The daemon wraps its store in one only when tracing is on, so the hot path pays nothing
 * otherwise. Reads (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT) are not traced, as in the reference.
 */
export class InstrumentedCounterStore implements CounterStore {
  /** The wrapped store's span description, bound once rather than per call. */
  readonly #describeSpan = (increments: readonly CounterIncrement[]) => this.store.traceSpan(increments);

  constructor(private readonly store: CounterStore) {}

  get name(): string {
    return this.store.name;
  }

  get capabilities(): StoreCapabilities {
    return this.store.capabilities;
  }

  traceSpan(increments: readonly CounterIncrement[]): StoreSpanDescription {
    return this.store.traceSpan(increments);
  }

  increment(increments: readonly CounterIncrement[]): number[] | Promise<number[]> {
    if (!backendStart.hasSubscribers) return this.store.increment(increments);
    const event: BackendCallEvent = { store: this.store.name, increments, describeSpan: this.#describeSpan };
    return publishAround(backendStart, backendEnd, event, () => this.store.increment(increments));
  }

  read(increments: readonly CounterIncrement[]): number[] | Promise<number[]> {
    return this.store.read(increments);
  }

  release(operations: Parameters<CounterStore["release"]>[0]): void {
    this.store.release(operations);
  }

  start(): Promise<void> {
    return this.store.start();
  }

  onHealthChange(listener: HealthListener): void {
    this.store.onHealthChange(listener);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
