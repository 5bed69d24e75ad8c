import { connect as netConnect, type Socket } from "node:net";
import { type ConnectionOptions, connect as tlsConnect } from "node:tls";
import type { FixedOperation } from "../../engine/algorithms/counter-operation.js";
import type { CounterIncrement } from "../../engine/counter-store.js";
import { DetailedFailure, replyReason } from "../client-reason.js";
import { encodeCommand } from "./resp-commands.js";
import { RespError, RespProtocolError, type RespReply, RespReplyReader } from "./resp-reply-reader.js";
import { RespWriter } from "./resp-writer.js";

/** Where a connection goes: a TCP endpoint or a unix socket. */
export type RespTarget = { readonly host: string; readonly port: number } | { readonly path: string };

/** How one connection reaches and authenticates to its Redis. */
export interface RespConnectionOptions {
  /** Asked before every (re)connect: fixed for a single Redis, the current primary for a sentinel group. */
  readonly locate: () => Promise<RespTarget>;
  /** TLS options (CA, client certificate, hostname check); undefined for a plain connection. */
  readonly tls: ConnectionOptions | undefined;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** Bound on connecting and on every reply (REDIS_TIMEOUT). */
  readonly timeoutMs: number;
  /** Run after AUTH on every new connection; rejecting refuses the server (sentinel: it is not the primary). */
  readonly verify?: (connection: RespConnection) => Promise<void>;
  /** Reconnect by itself after losing the connection (false for one-shot probes). */
  readonly reconnect: boolean;
  /** Called when the connection becomes usable (true) or stops being usable (false, with the reason). */
  readonly onStateChange?: (ready: boolean, reason: Error | undefined) => void;
}

/**
 * Called once with the counters a batch of commands produced, or the first error reply / failure (its
 * message is for the log; `clientReasonOf` gives what clients may see).
 */
export type CounterCallback = (error: Error | undefined, values: number[]) => void;

/** Called once with every reply of a batch as read, or the failure that ended it (then `replies` is partial). */
export type RawCallback = (error: Error | undefined, replies: RespReply[]) => void;

/** A Redis error reply as a failure: the reply's text, for the log and (redirections aside) for clients. */
function replyFailure(reply: string): DetailedFailure {
  return new DetailedFailure(reply, replyReason(reply));
}

/** Replies a batch expects; every `stride`-th one (from the first) is a counter to keep. */
class Waiter {
  received = 0;
  error: Error | undefined;
  readonly values: number[] = [];
  readonly raw: RespReply[] | undefined;

  constructor(
    readonly expected: number,
    readonly stride: number,
    readonly deadline: number,
    readonly done: CounterCallback,
    keepRaw: boolean,
  ) {
    this.raw = keepRaw ? [] : undefined;
  }

  /** An integer reply (INCRBY, EXPIRE): kept when it is a counter, with no other check. */
  acceptInteger(value: number): void {
    const index = this.received++;
    if (this.raw !== undefined) this.raw.push(value);
    else if (index % this.stride === 0) this.values.push(value);
  }

  accept(reply: RespReply): void {
    const index = this.received++;
    if (this.raw !== undefined) {
      this.raw.push(reply);
      return;
    }
    if (reply instanceof RespError) {
      this.error ??= replyFailure(reply.message);
      return;
    }
    if (index % this.stride !== 0) return;
    const value = typeof reply === "number" ? reply : reply === null ? 0 : Number(reply);
    if (Number.isNaN(value)) {
      this.error ??= new DetailedFailure(
        `unexpected reply ${JSON.stringify(reply)} for a counter`,
        "unexpected reply for a counter",
      );
    }
    this.values.push(value);
  }
}

/** The read buffer of a plain connection: replies to a turn's commands fit many times over. */
const READ_BUFFER_BYTES = 32 * 1024;

/** Reconnect delay after a lost connection: quick at first, never more than 2 s. */
const reconnectDelayMs = (attempt: number) => Math.min(100 * attempt, 2000);

/**
 * One connection to one Redis, speaking just what the counters need. Commands queued during one event-loop
 * turn leave in one socket write at the end of the turn (each caller's commands stay together and in
 * order, so every request still gets its answer in one round trip, with no added wait). Replies are matched
 * to callers in order. If the oldest caller has no answer within `timeoutMs`, every waiting caller fails
 * and the connection is replaced: later replies could no longer be matched.
 */
export class RespConnection {
  readonly #options: RespConnectionOptions;
  readonly #reader = new RespReplyReader(
    (reply) => this.#onReply(reply),
    (value) => this.#onInteger(value),
  );
  #socket: Socket | undefined;
  #ready = false;
  #closing = false;
  #dropAfterReply: string | undefined;
  #queue: Waiter[] = [];
  #head = 0;
  readonly #out = new RespWriter();
  #flushScheduled = false;
  /** The deadline of every caller queued in this event-loop turn: the clock is read once a turn. */
  #turnDeadline = 0;
  #timer: NodeJS.Timeout | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #attempt = 0;
  #lastError: Error | undefined;
  #target: RespTarget | undefined;
  /** Where a plain socket's bytes arrive. */
  readonly #readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  /** Called once the socket is gone after close(). */
  #whenGone: (() => void)[] = [];

  constructor(options: RespConnectionOptions) {
    this.#options = options;
  }

  /** Whether commands can be sent now. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Where the connection goes (or last went): for sentinel groups, the primary the sentinels named. */
  get target(): RespTarget | undefined {
    return this.#target;
  }

  /** Why the connection last failed, if it did. */
  get lastError(): Error | undefined {
    return this.#lastError;
  }

  /**
   * Connects (locate, connect, AUTH, verify). Resolves when ready; rejects on failure, after which a
   * reconnecting connection keeps trying in the background.
   */
  async open(): Promise<void> {
    try {
      await this.#connect();
    } catch (error) {
      this.#lost(error as Error);
      throw error;
    }
  }

  /**
   * Queues commands (already encoded) that produce `replies` replies; `done` gets every `stride`-th one as a
   * number. Only call while `ready`.
   */
  send(commands: string, replies: number, stride: number, done: CounterCallback): void {
    this.#scheduleFlush();
    this.#enqueue(new Waiter(replies, stride, this.#turnDeadline, done, false));
    this.#out.text(commands);
  }

  /**
   * Queues `INCRBY key hits` + `EXPIRE key ttl` per operation, written straight into the outgoing bytes;
   * `done` gets each INCRBY's count. Only call while `ready`.
   */
  sendIncrements(operations: readonly FixedOperation[], done: CounterCallback): void {
    this.#scheduleFlush();
    this.#enqueue(new Waiter(operations.length * 2, 2, this.#turnDeadline, done, false));
    this.#out.increments(operations);
  }

  /** Queues `GET key` per increment; `done` gets each count (absent = 0). Only call while `ready`. */
  sendReads(increments: readonly CounterIncrement[], done: CounterCallback): void {
    this.#scheduleFlush();
    this.#enqueue(new Waiter(increments.length, 1, this.#turnDeadline, done, false));
    this.#out.reads(increments);
  }

  /**
   * Like `send`, but `done` gets every reply as read (error replies included, as `RespError`), for
   * requests whose replies are not all counters (sliding windows, token buckets). Only call while `ready`.
   */
  sendRaw(commands: string, replies: number, done: RawCallback): void {
    this.#scheduleFlush();
    const waiter: Waiter = new Waiter(
      replies,
      1,
      this.#turnDeadline,
      (error) => done(error, waiter.raw!),
      true,
    );
    this.#enqueue(waiter);
    this.#out.text(commands);
  }

  /** What is queued now leaves at the end of this event-loop turn, in one write. */
  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    this.#turnDeadline = performance.now() + this.#options.timeoutMs;
    setImmediate(this.#flush);
  }

  /** Sends one command at once and resolves with its reply (error replies reject). */
  command(args: readonly string[]): Promise<RespReply> {
    return new Promise((resolve, reject) => {
      const waiter = new Waiter(
        1,
        1,
        performance.now() + this.#options.timeoutMs,
        (error) => {
          const reply = waiter.raw?.[0];
          if (error !== undefined) reject(error);
          else if (reply instanceof RespError) reject(replyFailure(reply.message));
          else resolve(reply ?? null);
        },
        true,
      );
      this.#enqueue(waiter);
      // Through the same buffer as queued commands, so replies keep the order of the bytes sent.
      this.#out.text(encodeCommand(args));
      this.#flush();
    });
  }

  /**
   * Stops reconnecting; lets commands in flight get their answers (within the timeout), then ends the
   * connection (hard after a second). Resolves once the socket is gone.
   */
  close(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    const socket = this.#socket;
    if (socket === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      this.#whenGone.push(resolve);
      const hard = setTimeout(() => socket.destroy(), this.#options.timeoutMs + 1000);
      hard.unref();
      this.#whenGone.push(() => clearTimeout(hard));
      if (this.#pending() === 0) socket.end();
    });
  }

  async #connect(): Promise<void> {
    const target = await this.#options.locate();
    const socket = await this.#dial(target);
    this.#target = target;
    this.#socket = socket;
    this.#reader.reset();
    // A plain connection reads into #readBuffer (onread, see #dial); TLS sockets emit their chunks.
    if (this.#options.tls) socket.on("data", (chunk: Buffer) => this.#received(socket, chunk));
    socket.on("error", (error: Error) => (this.#lastError = error));
    socket.on("close", () =>
      this.#lost(this.#lastError ?? new DetailedFailure("connection closed by Redis", "connection closed")),
    );
    const { username, password } = this.#options;
    if (password !== undefined) {
      await this.command(username !== undefined ? ["AUTH", username, password] : ["AUTH", password]);
    }
    await this.#options.verify?.(this);
    if (this.#closing) throw new DetailedFailure("closed while connecting", "connection closed");
    this.#ready = true;
    this.#attempt = 0;
    this.#lastError = undefined;
    this.#options.onStateChange?.(true, undefined);
  }

  /** Parses what arrived; bytes that are not RESP end the connection. */
  #received(socket: Socket, chunk: Buffer): void {
    try {
      this.#reader.feed(chunk);
    } catch (error) {
      if (!(error instanceof RespProtocolError)) throw error;
      socket.destroy(new DetailedFailure(error.message, "protocol error", { cause: error }));
    }
  }

  /**
   * Opens the socket, bounded by the timeout. A plain socket reads straight into this connection's one
   * buffer (net's `onread`): no Buffer and no stream event per chunk. The reader keeps nothing of it past
   * the call (it copies an incomplete tail).
   */
  #dial(target: RespTarget): Promise<Socket> {
    const { tls, timeoutMs } = this.#options;
    return new Promise((resolve, reject) => {
      const where = "path" in target ? { path: target.path } : { host: target.host, port: target.port };
      const socket: Socket = tls
        ? tlsConnect({ ...where, ...tls })
        : netConnect({
            ...where,
            onread: {
              buffer: this.#readBuffer,
              callback: (bytes: number, buffer: Uint8Array) => {
                this.#received(socket, (buffer as Buffer).subarray(0, bytes));
                return true;
              },
            },
          });
      const timer = setTimeout(() => {
        socket.destroy();
        const text = `connect to ${describeTarget(target)} timed out after ${timeoutMs} ms`;
        reject(new DetailedFailure(text, "connect timed out"));
      }, timeoutMs);
      const failed = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      socket.once("error", failed);
      socket.once(tls ? "secureConnect" : "connect", () => {
        clearTimeout(timer);
        socket.off("error", failed);
        socket.setNoDelay(true);
        resolve(socket);
      });
    });
  }

  #enqueue(waiter: Waiter): void {
    this.#queue.push(waiter);
    if (this.#timer === undefined) this.#armTimer(this.#options.timeoutMs);
  }

  readonly #flush = (): void => {
    this.#flushScheduled = false;
    if (!this.#out.pending) return;
    const batch = this.#out.take();
    this.#socket?.write(batch);
  };

  #onInteger(value: number): void {
    const waiter = this.#queue[this.#head];
    if (waiter === undefined) {
      this.#socket?.destroy(new DetailedFailure("Redis sent a reply nobody asked for", "protocol error"));
      return;
    }
    waiter.acceptInteger(value);
    if (waiter.received === waiter.expected) this.#complete(waiter);
  }

  #onReply(reply: RespReply): void {
    const waiter = this.#queue[this.#head];
    if (waiter === undefined) {
      this.#socket?.destroy(new DetailedFailure("Redis sent a reply nobody asked for", "protocol error"));
      return;
    }
    // A primary demoted by a failover refuses writes: find the new one (sentinel) on a new connection.
    if (reply instanceof RespError && reply.message.startsWith("READONLY"))
      this.#dropAfterReply = reply.message;
    waiter.accept(reply);
    if (waiter.received === waiter.expected) this.#complete(waiter);
  }

  /** The oldest caller has all its replies: answer it, then act on what the replies said. */
  #complete(waiter: Waiter): void {
    this.#queue[this.#head++] = undefined as unknown as Waiter;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    waiter.done(waiter.error, waiter.values);
    if (this.#dropAfterReply !== undefined) {
      const reason = this.#dropAfterReply;
      this.#dropAfterReply = undefined;
      this.#socket?.destroy(replyFailure(reason));
    }
    if (this.#closing && this.#pending() === 0) this.#socket?.end();
  }

  #pending(): number {
    return this.#queue.length - this.#head;
  }

  /** One timer per connection, set for the oldest caller's deadline (not one timer per request). */
  #armTimer(delayMs: number): void {
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        const oldest = this.#queue[this.#head];
        if (oldest === undefined) return;
        const left = oldest.deadline - performance.now();
        if (left > 0) {
          this.#armTimer(left);
          return;
        }
        const text = `no answer within ${this.#options.timeoutMs} ms`;
        const error = new DetailedFailure(text, text);
        this.#failAll(error);
        this.#socket?.destroy(error);
      },
      Math.max(1, Math.ceil(delayMs)),
    );
    this.#timer.unref();
  }

  #failAll(reason: Error): void {
    const waiting = this.#queue.slice(this.#head);
    this.#queue = [];
    this.#head = 0;
    this.#out.clear();
    for (const waiter of waiting) waiter.done(reason, waiter.values);
  }

  /** The connection is gone (or never came up): fail what waits, report, and maybe try again later. */
  #lost(reason: Error): void {
    this.#lastError = reason;
    const socket = this.#socket;
    this.#socket = undefined;
    socket?.removeAllListeners("close");
    socket?.destroy();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#failAll(reason);
    this.#reader.reset();
    const wasReady = this.#ready;
    this.#ready = false;
    if (wasReady) this.#options.onStateChange?.(false, reason);
    if (this.#closing) {
      for (const gone of this.#whenGone.splice(0)) gone();
      return;
    }
    if (this.#options.reconnect && this.#reconnectTimer === undefined) this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    this.#attempt++;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      this.#connect().catch((error: Error) => this.#lost(error));
    }, reconnectDelayMs(this.#attempt));
    this.#reconnectTimer.unref();
  }
}

/** `host:port` or the socket path, for messages. */
export function describeTarget(target: RespTarget): string {
  return "path" in target ? target.path : `${target.host}:${target.port}`;
}
