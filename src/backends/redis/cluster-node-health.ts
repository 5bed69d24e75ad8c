import { messageOf } from "../../errors.js";
import type { StoreThrottledLog } from "../store-context.js";
import { clusterReasonOf } from "./cluster-connection.js";

/** What a {@link ClusterNodeHealth} reports about, and how it gets the cluster's slot map read again. */
export interface ClusterNodeHealthOptions {
  /** `redis <masked url>`: how lines name the deployment. */
  readonly where: string;
  readonly log: StoreThrottledLog;
  /** Reads the slot map again (CLUSTER SLOTS on any node that answers), on every client of the pool. */
  readonly refreshSlots: () => void;
  /** How often the slot map is read again while a node is lost; 250 ms by default. */
  readonly refreshIntervalMs?: number;
  /** A monotonic clock in ms; `performance.now` by default. */
  readonly nowMs?: () => number;
}

/**
 * The nodes of one Redis Cluster that stopped answering (docs/outages.md "Redis Cluster"). A command group
 * that fails for its node's sake (the connection closed or refused, CLUSTERDOWN, redirections that lead
 * nowhere) marks the node lost: one warn line with its address, and the slot map is read again at once
 * (at most once per `refreshIntervalMs`) and then every `refreshIntervalMs` until the node answers or
 * serves no slot any more (its replica was
 * promoted) — one more warn line then. Requests for other nodes never wait for this.
 */
export class ClusterNodeHealth {
  readonly #options: ClusterNodeHealthOptions;
  readonly #nowMs: () => number;
  /** Lost nodes, with when they were lost. */
  readonly #lost = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  /** When the slot map was last asked for again (`-Infinity`: never). */
  #refreshedAtMs = Number.NEGATIVE_INFINITY;

  constructor(options: ClusterNodeHealthOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? (() => performance.now());
  }

  /** Nodes lost now. */
  get lost(): string[] {
    return [...this.#lost.keys()];
  }

  /** A command group sent to `node` failed with `error`. */
  failed(node: string, error: unknown): void {
    if (!isNodeFailure(error)) return;
    // Any lost node makes the map suspect: read it now, unless it was read within the interval (a node's
    // every failed request must not each send CLUSTER SLOTS).
    if (this.#nowMs() - this.#refreshedAtMs >= this.#intervalMs) this.#refresh();
    if (node === "?" || this.#lost.has(node)) return;
    this.#lost.set(node, this.#nowMs());
    this.#options.log.warn(
      this.#kindOf(node),
      `${this.#options.where}: node ${node} lost: ${clusterReasonOf(error)} (${messageOf(error)})`,
    );
    this.#timer ??= setInterval(() => this.#refresh(), this.#intervalMs);
    this.#timer.unref();
  }

  /** `node` answered a command group. */
  answered(node: string): void {
    const since = this.#lost.get(node);
    if (since === undefined) return;
    this.#recovered(node, `node ${node} answers again after ${this.#seconds(since)} s`);
  }

  /**
   * The slot map was read again: `primaries` serve every slot now. A lost node that serves none any more
   * was replaced (its replica promoted, or its slots moved).
   */
  refreshed(primaries: ReadonlySet<string>): void {
    for (const [node, since] of this.#lost) {
      if (primaries.has(node)) continue;
      const now = [...primaries].join(", ");
      this.#recovered(
        node,
        `node ${node} replaced after ${this.#seconds(since)} s: its slots are served by the primaries ${now}`,
      );
    }
  }

  /** Stops reading the slot map again. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  get #intervalMs(): number {
    return this.#options.refreshIntervalMs ?? 250;
  }

  #refresh(): void {
    this.#refreshedAtMs = this.#nowMs();
    this.#options.refreshSlots();
  }

  #recovered(node: string, text: string): void {
    this.#lost.delete(node);
    this.#options.log.warn(this.#kindOf(node), `${this.#options.where}: ${text}`);
    if (this.#lost.size === 0) this.close();
  }

  #seconds(sinceMs: number): string {
    return ((this.#nowMs() - sinceMs) / 1000).toFixed(1);
  }

  /** Each node's lines are throttled apart: two nodes lost at once both get theirs. */
  #kindOf(node: string): string {
    return `${this.#options.where} node ${node}`;
  }
}

/**
 * Whether `error` says the node is unreachable or not serving, rather than refusing one command (a
 * WRONGTYPE says nothing about the node): ioredis's own failures and socket errors, the cluster's
 * CLUSTERDOWN and TRYAGAIN, and redirections that led nowhere. A timeout is not one: a slow node still
 * serves its slots.
 */
export function isNodeFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const message = error.message;
  if (/^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN)\b/.test(message)) return true;
  if (message.startsWith("Too many Cluster redirections")) return true;
  if (message === "Connection is closed." || message.startsWith("Stream isn't writeable")) return true;
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code) && error.name !== "ReplyError";
}
