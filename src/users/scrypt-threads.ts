import type { ScryptOptions } from "node:crypto";
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import type { ScryptReply, ScryptRequest } from "./scrypt-protocol.js";

interface Job {
  readonly request: ScryptRequest;
  readonly resolve: (key: Buffer) => void;
  readonly reject: (error: Error) => void;
}

interface Thread {
  readonly worker: Worker;
  job?: Job;
}

/**
 * scrypt on a few dedicated low-priority worker threads (see scrypt-worker.ts) rather than libuv's shared
 * thread pool: at most `threads` keys are derived at once, the rest wait in order. Threads start on first
 * use and never keep the process alive; a thread that dies fails its job and is replaced by the next one.
 */
export class ScryptThreads {
  readonly #size: number;
  readonly #threads: Thread[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(threads: number) {
    this.#size = Math.max(1, threads);
  }

  derive(password: string, salt: Buffer, keyBytes: number, options: ScryptOptions): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new Error("password hashing has been stopped"));
    return new Promise((resolve, reject) => {
      this.#queue.push({
        request: { id: this.#nextId++, password, salt, keyBytes, options },
        resolve,
        reject,
      });
      this.#dispatch();
    });
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
      thread.job = job;
      thread.worker.ref();
      thread.worker.postMessage(job.request);
    }
  }

  #spawn(): Thread | undefined {
    if (this.#threads.length >= this.#size) return undefined;
    const thread: Thread = { worker: new Worker(workerEntry()) };
    thread.worker.unref();
    thread.worker.on("message", (reply: ScryptReply) => {
      const job = thread.job;
      thread.job = undefined;
      thread.worker.unref();
      if (job !== undefined) {
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

/**
 * The worker's module: the compiled `.js` beside this file; under a TypeScript loader (tests run the
 * sources) the `.ts` one, which the worker loads through the same loader.
 */
function workerEntry(): URL {
  const compiled = new URL("./scrypt-worker.js", import.meta.url);
  return existsSync(compiled) ? compiled : new URL("./scrypt-worker.ts", import.meta.url);
}
