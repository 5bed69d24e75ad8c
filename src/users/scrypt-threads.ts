import type { ScryptOptions } from "node:crypto";
import { Worker } from "node:worker_threads";
import { OverloadedError } from "../errors.js";
import { workerEntry } from "../worker-entry.js";
import type { ScryptReply, ScryptRequest } from "./scrypt-protocol.js";
import { USER_ERROR_TEXT } from "./user.js";

interface Job {
  readonly request: ScryptRequest;
  /** When it was handed to a thread (performance.now()), for the duration estimate. */
  startedMs?: number;
  readonly resolve: (key: Buffer) => void;
  readonly reject: (error: Error) => void;
}

interface Thread {
  readonly worker: Worker;
  job?: Job;
}

/** Options of {@link ScryptThreads}. */
export interface ScryptThreadsOptions {
  /** Keys derived at once, one per thread. */
  readonly threads: number;
  /** Keys that may wait for a thread; more are refused with an {@link OverloadedError}. Default: no bound. */
  readonly maxQueued?: number;
}

/** What a key is assumed to take before any has been measured (ln=15 on a slow core). */
const INITIAL_ESTIMATE_MS = 100;

/**
 * scrypt on a few dedicated low-priority worker threads (see scrypt-worker.ts) rather than libuv's shared
 * thread pool: at most `threads` keys are derived at once, up to `maxQueued` more wait in order, and beyond
 * that a key is refused at once — so a flood of requests is shed in microseconds instead of queueing for
 * minutes. Threads start on first use and never keep the process alive; a thread that dies fails its job
 * and is replaced by the next one.
 */
export class ScryptThreads {
  readonly #size: number;
  readonly #maxQueued: number;
  readonly #threads: Thread[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;
  /** Moving average of a key's duration on a thread, in ms, for the time-to-retry estimate. */
  #meanMs = INITIAL_ESTIMATE_MS;

  constructor(options: ScryptThreadsOptions) {
    this.#size = Math.max(1, options.threads);
    this.#maxQueued = options.maxQueued ?? Number.POSITIVE_INFINITY;
  }

  /**
   * Derives a key on a thread. `unbounded` jobs may wait beyond `maxQueued` (work the daemon itself needs,
   * such as the administrator bootstrap); others are refused with an {@link OverloadedError} when it is full.
   */
  derive(
    password: string,
    salt: Buffer,
    keyBytes: number,
    options: ScryptOptions,
    unbounded = false,
  ): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new Error("password hashing has been stopped"));
    const idle = this.#threads.length < this.#size || this.#threads.some((t) => t.job === undefined);
    if (!unbounded && !idle && this.#queue.length >= this.#maxQueued) {
      return Promise.reject(new OverloadedError(USER_ERROR_TEXT.busy, this.#secondsToDrain()));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({
        request: { id: this.#nextId++, password, salt, keyBytes, options },
        resolve,
        reject,
      });
      this.#dispatch();
    });
  }

  /** Whole seconds (at least 1) until the keys waiting and running now are likely done. */
  #secondsToDrain(): number {
    const pending = this.#queue.length + this.#threads.filter((t) => t.job !== undefined).length;
    return Math.max(1, Math.ceil((pending * this.#meanMs) / this.#size / 1000));
  }

  /** Stops every thread; jobs still waiting or running fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const stopped = new Error("password hashing has been stopped");
    for (const job of this.#queue.splice(0)) job.reject(stopped);
    await Promise.all(this.#threads.map((thread) => thread.worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const thread = this.#threads.find((t) => t.job === undefined) ?? this.#spawn();
      if (thread === undefined) return;
      const job = this.#queue.shift() as Job;
      job.startedMs = performance.now();
      thread.job = job;
      thread.worker.ref();
      thread.worker.postMessage(job.request);
    }
  }

  #spawn(): Thread | undefined {
    if (this.#threads.length >= this.#size) return undefined;
    const thread: Thread = { worker: new Worker(workerEntry("scrypt-worker", import.meta.url)) };
    thread.worker.unref();
    thread.worker.on("message", (reply: ScryptReply) => {
      const job = thread.job;
      thread.job = undefined;
      thread.worker.unref();
      if (job !== undefined) {
        if (job.startedMs !== undefined)
          this.#meanMs += (performance.now() - job.startedMs - this.#meanMs) / 8;
        if ("key" in reply)
          job.resolve(Buffer.from(reply.key.buffer, reply.key.byteOffset, reply.key.byteLength));
        else job.reject(new Error(reply.error));
      }
      this.#dispatch();
    });
    const fail = (error: Error) => {
      const index = this.#threads.indexOf(thread);
      if (index === -1) return;
      this.#threads.splice(index, 1);
      thread.job?.reject(error);
      thread.job = undefined;
      if (!this.#closed) this.#dispatch();
    };
    thread.worker.on("error", fail);
    thread.worker.on("exit", (code) => fail(new Error(`a password hashing thread exited (code ${code})`)));
    this.#threads.push(thread);
    return thread;
  }
}
