import { connect as netConnect, type Socket } from "node:net";
import { type ConnectionOptions, connect as tlsConnect } from "node:tls";
import { BackendError } from "../../errors.js";
import { clientReasonOf, DetailedFailure } from "../client-reason.js";
import type { MemcachedEndpoint } from "./memcached-address.js";
import {
  addFrame,
  frameLength,
  getMultiFrames,
  incrementFrame,
  type MemcachedResponse,
  Opcode,
  parseResponse,
  Status,
  statusText,
  versionFrame,
} from "./memcached-protocol.js";

/** One connection to one memcached node. */
export interface MemcachedConnectionOptions {
  readonly endpoint: MemcachedEndpoint;
  /** Node TLS options (MEMCACHE_TLS), or undefined for plain TCP. */
  readonly tls: ConnectionOptions | undefined;
  /** Bound on each operation, connecting included, in ms. */
  readonly timeoutMs: number;
  /**
   * Called when the connection starts answering (the first response on a new socket: a node that accepts
   * connections but never answers is not up) and when such a connection fails (with the reason). Never
   * called for {@link MemcachedConnection.close}.
   */
  readonly onStateChange?: (up: boolean, reason: Error | undefined) => void;
}

interface Operation {
  readonly deadline: number;
  done: boolean;
  /** Handles one response carrying this operation's opaque; true once the operation is complete. */
  readonly onResponse: (response: MemcachedResponse) => boolean;
  readonly onError: (error: Error) => void;
}

const EMPTY = Buffer.alloc(0);
const RESPONSE_MAGIC = 0x81;
/** After a failure, operations fail at once for 50 ms, doubling per failure up to 1 s, then it reconnects. */
const FIRST_RETRY_DELAY_MS = 50;
const MAX_RETRY_DELAY_MS = 1000;

/**
 * A pipelined connection to one node: operations are written as they come and answered in order, matched
 * by opaque. Each operation fails after `timeoutMs`, and a timeout or socket error closes the connection
 * (as gomemcache drops a connection after an error) and fails everything in flight on it. While a node is
 * away, operations fail at once (never queue), and the next one after the retry delay reconnects.
 */
export class MemcachedConnection {
  readonly label: string;
  readonly #options: MemcachedConnectionOptions;
  readonly #operations = new Map<number, Operation>();
  /** Operations in the order written, which is the order deadlines expire in. */
  #inOrder: Operation[] = [];
  #head = 0;
  #socket: Socket | undefined;
  #input: Buffer = EMPTY;
  #timer: NodeJS.Timeout | undefined;
  #corked = false;
  #opaque = 0;
  #failures = 0;
  #retryAtMs = 0;
  #lastError: Error | undefined;
  #closing = false;
  /** Whether the current socket has answered. */
  #answering = false;

  constructor(options: MemcachedConnectionOptions) {
    this.#options = options;
    this.label = options.endpoint.label;
  }

  /** Values of the keys present (quiet gets then a NOOP: one write, one round trip). */
  getMulti(keys: readonly string[]): Promise<Map<string, string>> {
    return new Promise((resolve, reject) => {
      const values = new Map<string, string>();
      this.#run(
        (opaque) => getMultiFrames(keys, opaque),
        (response) => {
          if (response.header.opcode === Opcode.noop) resolve(values);
          else if (response.header.status === Status.ok)
            values.set(response.key.toString(), response.val.toString());
          else reject(this.#statusError("get", response));
          return response.header.opcode === Opcode.noop || response.header.status !== Status.ok;
        },
        reject,
      );
    });
  }

  /** Adds `delta` to `key`; false when the key is absent (it is not created). */
  increment(key: string, delta: number): Promise<boolean> {
    return this.#single(
      (opaque) => incrementFrame(key, delta, opaque),
      (status) => (status === Status.ok ? true : status === Status.keyNotFound ? false : undefined),
      "increment",
    );
  }

  /** Stores `key` = `value` unless it exists; false when it exists. */
  add(key: string, value: string, exptime: number): Promise<boolean> {
    return this.#single(
      (opaque) => addFrame(key, value, exptime, opaque),
      (status) =>
        status === Status.ok
          ? true
          : status === Status.keyExists || status === Status.notStored
            ? false
            : undefined,
      "add",
    );
  }

  /** The node's version string: a round trip proving the node answers. */
  version(): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#run(
        versionFrame,
        (response) => {
          resolve(response.val.toString());
          return true;
        },
        reject,
      );
    });
  }

  /** Refuses new operations and closes once those in flight are answered (or time out). */
  close(): void {
    this.#closing = true;
    if (this.#operations.size === 0 && this.#socket) this.#fail(this.#socket, new Error("connection closed"));
  }

  /** An operation with one response whose status `outcome` maps to a result (undefined: an error). */
  #single<T>(
    frame: (opaque: number) => Buffer,
    outcome: (status: number) => T | undefined,
    what: string,
  ): Promise<T> {
    return new Promise((resolve, reject) => {
      this.#run(
        frame,
        (response) => {
          const result = outcome(response.header.status);
          if (result === undefined) reject(this.#statusError(what, response));
          else resolve(result);
          return true;
        },
        reject,
      );
    });
  }

  #run(
    frame: (opaque: number) => Buffer,
    onResponse: Operation["onResponse"],
    onError: Operation["onError"],
  ): void {
    const socket = this.#writableSocket();
    if (socket === undefined) {
      const cause = this.#closing
        ? new DetailedFailure("connection closed", "connection closed")
        : (this.#lastError ?? new DetailedFailure("unavailable", "unavailable"));
      onError(this.#failure(cause));
      return;
    }
    this.#opaque = this.#opaque === 0xffffffff ? 1 : this.#opaque + 1;
    // Built first: a frame that cannot be built (a delta past 64 bits) fails alone, before it is registered.
    const bytes = frame(this.#opaque);
    const operation = {
      deadline: performance.now() + this.#options.timeoutMs,
      done: false,
      onResponse,
      onError,
    };
    this.#operations.set(this.#opaque, operation);
    this.#inOrder.push(operation);
    this.#armTimer();
    if (!this.#corked) {
      // Everything written in this tick leaves in one write.
      this.#corked = true;
      socket.cork();
      process.nextTick(() => {
        this.#corked = false;
        socket.uncork();
      });
    }
    socket.write(bytes);
  }

  #writableSocket(): Socket | undefined {
    if (this.#closing) return undefined;
    if (this.#socket !== undefined) return this.#socket;
    if (performance.now() < this.#retryAtMs) return undefined;
    const { endpoint, tls } = this.#options;
    const target = endpoint.target;
    const where = "path" in target ? { path: target.path } : { host: target.host, port: target.port };
    const socket = tls ? tlsConnect({ ...tls, ...where }) : netConnect(where);
    if (!("path" in target)) socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.#onData(socket, chunk));
    socket.on("error", (error: Error) => this.#fail(socket, error));
    socket.on("close", () =>
      this.#fail(socket, new DetailedFailure("connection closed by the server", "connection closed")),
    );
    this.#socket = socket;
    return socket;
  }

  #onData(socket: Socket, chunk: Buffer): void {
    if (socket !== this.#socket) return;
    this.#input = this.#input.length === 0 ? chunk : Buffer.concat([this.#input, chunk]);
    let offset = 0;
    for (;;) {
      const response = parseResponse(this.#input.subarray(offset));
      if (response === undefined) break;
      if (response.header.magic !== RESPONSE_MAGIC) {
        const text = `unexpected bytes from the server (magic 0x${response.header.magic.toString(16)})`;
        this.#fail(socket, new DetailedFailure(text, "protocol error"));
        return;
      }
      offset += frameLength(response);
      this.#failures = 0;
      if (!this.#answering) {
        this.#answering = true;
        this.#options.onStateChange?.(true, undefined);
      }
      const operation = this.#operations.get(response.header.opaque);
      if (operation?.onResponse(response)) {
        operation!.done = true;
        this.#operations.delete(response.header.opaque);
      }
    }
    this.#input = offset === this.#input.length ? EMPTY : this.#input.subarray(offset);
    if (this.#closing && this.#operations.size === 0) this.#fail(socket, new Error("connection closed"));
  }

  /** Drops the connection, fails what was in flight on it, and holds new operations off for a while. */
  #fail(socket: Socket, error: Error): void {
    if (socket !== this.#socket) return;
    this.#socket = undefined;
    this.#input = EMPTY;
    socket.destroy();
    this.#lastError = error;
    this.#failures++;
    const delay = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** (this.#failures - 1));
    this.#retryAtMs = performance.now() + delay;
    const failed = [...this.#operations.values()];
    this.#operations.clear();
    this.#inOrder = [];
    this.#head = 0;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#answering) {
      this.#answering = false;
      if (!this.#closing) this.#options.onStateChange?.(false, error);
    }
    const reason = this.#failure(error);
    for (const operation of failed) {
      operation.done = true;
      operation.onError(reason);
    }
  }

  #statusError(what: string, response: MemcachedResponse): BackendError {
    const text = `${what} failed: ${statusText(response.header.status)}`;
    return new BackendError(`memcache ${this.label}: ${text}`, { clientMessage: `memcache: ${text}` });
  }

  /** Its details (with the node's address) for the log, its reason for anyone else. */
  #failure(cause: Error): BackendError {
    return new BackendError(`memcache ${this.label}: ${cause.message}`, {
      cause,
      clientMessage: `memcache: ${clientReasonOf(cause)}`,
    });
  }

  /** The oldest operation still waiting (whose deadline comes first). */
  #oldest(): Operation | undefined {
    while (this.#head < this.#inOrder.length && this.#inOrder[this.#head]!.done) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#inOrder.length) {
      this.#inOrder = this.#inOrder.slice(this.#head);
      this.#head = 0;
    }
    return this.#inOrder[this.#head];
  }

  /** One timer per connection, for the oldest deadline. */
  #armTimer(): void {
    if (this.#timer !== undefined) return;
    const oldest = this.#oldest();
    if (oldest === undefined) return;
    const timer = setTimeout(() => this.#onTimer(timer), Math.max(0, oldest.deadline - performance.now()));
    timer.unref();
    this.#timer = timer;
  }

  #onTimer(timer: NodeJS.Timeout): void {
    // After a stall of this process, the answer may already wait in the socket: let I/O run, then look.
    setImmediate(() => {
      if (this.#timer !== timer) return;
      this.#timer = undefined;
      const oldest = this.#oldest();
      if (oldest === undefined) return;
      if (oldest.deadline <= performance.now() && this.#socket) {
        const text = `no answer within ${this.#options.timeoutMs}ms`;
        this.#fail(this.#socket, new DetailedFailure(text, text));
        return;
      }
      this.#armTimer();
    });
  }
}
