import { BackendUnavailableError } from "../errors.js";
import type { Admission, CircuitBreaker } from "./circuit-breaker.js";

/**
 * One circuit breaker per node of a Redis Cluster, by primary address (`10.0.0.7:6379`), made on first use
 * (docs/outages.md "Redis Cluster"): an open breaker refuses only the requests that have a command for its
 * node, and each node has its own probe. A node that no longer serves any slot (its replica was promoted)
 * is forgotten, so its gauge drops back to 0.
 */
export class NodeBreakers {
  readonly #create: (node: string) => CircuitBreaker;
  readonly #breakers = new Map<string, CircuitBreaker>();
  readonly #store: string;
  /** One error for every refusal of a node: an open breaker may refuse thousands of calls a second. */
  readonly #refusals = new Map<string, BackendUnavailableError>();

  /** `create` makes a node's breaker (its transitions naming the node); `store` names the store in errors. */
  constructor(create: (node: string) => CircuitBreaker, store = "redis") {
    this.#create = create;
    this.#store = store;
  }

  /**
   * Admits a call to every node of `nodes` (distinct addresses), or none: when one node's breaker refuses,
   * the others' admissions are handed back (a probe's turn passes on) and the call fails with a
   * {@link BackendUnavailableError} naming that node.
   */
  admit(nodes: readonly string[]): Admission[] {
    const admissions: Admission[] = [];
    for (const node of nodes) {
      const admission = this.#breakerOf(node).admit();
      if (admission === "refused") {
        admissions.forEach((given, i) => {
          this.#breakers.get(nodes[i]!)?.undecided(given);
        });
        throw this.#refusal(node);
      }
      admissions.push(admission);
    }
    return admissions;
  }

  /**
   * The call admitted to `nodes` as `admissions` ended: `failureOf(node)` is the error a node answered with
   * (undefined: it answered), `null` when the call ended without telling (refused before it was sent).
   */
  settle(
    nodes: readonly string[],
    admissions: readonly Admission[],
    failureOf: (node: string) => unknown,
  ): void {
    nodes.forEach((node, i) => {
      const breaker = this.#breakers.get(node);
      if (breaker === undefined) return;
      const failure = failureOf(node);
      if (failure === undefined) breaker.succeeded(admissions[i]!);
      else if (failure === null) breaker.undecided(admissions[i]!);
      else breaker.failed(admissions[i]!, failure);
    });
  }

  /** Whether `node`'s breaker refuses calls now. */
  isOpen(node: string): boolean {
    return this.#breakers.get(node)?.isOpen === true;
  }

  /** Whether any node's breaker refuses calls now (the untagged `ratelimit.backend.breaker_open`). */
  get anyOpen(): boolean {
    for (const breaker of this.#breakers.values()) if (breaker.isOpen) return true;
    return false;
  }

  /** The worst state of any node's: `probing` over `open` over `closed`. */
  get state(): "closed" | "open" | "probing" {
    let state: "closed" | "open" | "probing" = "closed";
    for (const breaker of this.#breakers.values()) {
      if (breaker.state === "probing") return "probing";
      if (breaker.state === "open") state = "open";
    }
    return state;
  }

  /** The nodes with a breaker, in the order they were first used. */
  get nodes(): string[] {
    return [...this.#breakers.keys()];
  }

  /** `node` serves no slot any more: its breaker goes (a later call to it starts a fresh, closed one). */
  forget(node: string): void {
    this.#breakers.delete(node);
    this.#refusals.delete(node);
  }

  #breakerOf(node: string): CircuitBreaker {
    let breaker = this.#breakers.get(node);
    if (breaker === undefined) {
      breaker = this.#create(node);
      this.#breakers.set(node, breaker);
    }
    return breaker;
  }

  #refusal(node: string): BackendUnavailableError {
    let error = this.#refusals.get(node);
    if (error === undefined) {
      error = new BackendUnavailableError(this.#store, "breaker_open", `node ${node}`);
      this.#refusals.set(node, error);
    }
    return error;
  }
}
