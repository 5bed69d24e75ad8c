import { messageOf } from "../errors.js";
import type { StoreThrottledLog } from "./store-context.js";

/** What an {@link OutageLog} reports about, and where. */
export interface OutageLogOptions {
  /** The deployment or node as lines name it: `redis redis://*****@10.0.0.7:6379`, `memcache 10.0.0.8:11211`. */
  readonly name: string;
  readonly log: StoreThrottledLog;
  /** A monotonic clock in ms, for the outage's length; `performance.now` by default. */
  readonly nowMs?: () => number;
}

/**
 * The warn lines of one backend deployment (or memcached node) losing its last connection and getting one
 * back: `<name>: connection lost: <reason>`, then `<name>: reconnected after 4.2 s`. Both go through the
 * shared throttled log under one kind, so a flapping deployment writes at most a line a second and
 * the last line written is its current state.
 */
export class OutageLog {
  readonly #options: OutageLogOptions;
  readonly #kind: string;
  readonly #nowMs: () => number;
  /** `new` until it first connects (start-up has its own lines); then `up` or `down` (since when). */
  #state: "new" | "up" | "down" = "new";
  #downSinceMs = 0;
  #everConnected = false;

  constructor(options: OutageLogOptions) {
    this.#options = options;
    this.#kind = `${options.name} connection`;
    this.#nowMs = options.nowMs ?? (() => performance.now());
  }

  /**
   * The last connection is gone, or (before any) a first attempt failed; `reason` says why. Logged once per
   * outage, and not before a first connection (start-up logs its own retries).
   */
  lost(reason: unknown): void {
    if (this.#state === "down") return;
    const wasUp = this.#state === "up";
    this.#state = "down";
    this.#downSinceMs = this.#nowMs();
    if (wasUp)
      this.#options.log.warn(this.#kind, `${this.#options.name}: connection lost: ${messageOf(reason)}`);
  }

  /** A connection is up again; `detail` is appended (`(primary 10.0.0.9:6379)`). Logged when it ends an outage. */
  connected(detail = ""): void {
    const state = this.#state;
    // A memcached node down since start-up never had a connection to get back.
    const verb = this.#everConnected ? "reconnected" : "connected";
    this.#state = "up";
    this.#everConnected = true;
    if (state !== "down") return;
    const seconds = ((this.#nowMs() - this.#downSinceMs) / 1000).toFixed(1);
    this.#options.log.warn(this.#kind, `${this.#options.name}: ${verb} after ${seconds} s${detail}`);
  }
}
