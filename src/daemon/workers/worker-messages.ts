import type { MessagePort } from "node:worker_threads";
import type { RuleDocument } from "../../config/rule-document.js";
import type { ForwardedStats } from "../../observability/forwarded-stats.js";

/** What the main thread gives a worker thread at start (docs/workers.md). */
export interface DecisionThreadData {
  /** 1-based, stable across replacements: the `worker` label of `ratelimit.workers.requests`. */
  readonly index: number;
  /**
   * The environment the main thread's settings came from, when the embedder gave it; else the worker reads
   * the process's (Node gives every worker a copy).
   */
  readonly env: Readonly<Record<string, string | undefined>> | undefined;
  /** The ports to share; 0 for the first worker when the settings ask for any free port. */
  readonly ports: { readonly grpc: number; readonly http: number };
  /** The memory backend's shared counter table (BACKEND_TYPE=memory), else undefined. */
  readonly table: SharedArrayBuffer | undefined;
  /** The failed-login throttle's shared counter table. */
  readonly authTable: SharedArrayBuffer;
  /** BACKEND_FAILURE_MODE=local's shared counter table, else undefined. */
  readonly localTable: SharedArrayBuffer | undefined;
  /** Where the users/migrations database's statements go (the main thread's connection). */
  readonly database: MessagePort;
  readonly dialect: "sqlite" | "postgres";
  /** The documents of the rules loaded so far; undefined when none are. */
  readonly rules: readonly RuleDocument[] | undefined;
}

/** Main thread → worker. */
export type ToWorker =
  | { readonly type: "rules"; readonly documents: readonly RuleDocument[] }
  /** SIGTERM: fail health checks at once, as the main thread does. */
  | { readonly type: "unhealthy" }
  /** Stop accepting, let requests in flight finish within `graceMs`, report the last stats, exit. */
  | { readonly type: "stop"; readonly graceMs: number };

/** Worker → main thread. */
export type FromWorker =
  | { readonly type: "listening"; readonly grpc: number; readonly http: number }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "stats"; readonly stats: ForwardedStats }
  | { readonly type: "wake-migrations" }
  | { readonly type: "stopped" };

/**
 * The decisions each worker was asked for, tagged `worker` (its index): counted by the worker, summed in
 * the main thread like every other stat; `/metrics` shows one series per worker (balance, docs/workers.md).
 */
export const WORKER_REQUESTS = "ratelimit.workers.requests";
