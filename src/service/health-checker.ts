/** Names of the health components (reference: `redis`, `config`, `sigterm`; ours is backend-generic). */
export type HealthComponent = "backend" | "config" | "sigterm";

/**
 * Overall health = every registered component healthy (docs/endpoints.md). Mirrored to `/healthcheck`
 * and to the gRPC health service `ratelimit`.
 */
export class HealthChecker {
  readonly #components = new Map<HealthComponent, boolean>();
  readonly #listeners: ((healthy: boolean) => void)[] = [];

  /** Registers a component with its initial state. */
  register(component: HealthComponent, healthy: boolean): void {
    this.#components.set(component, healthy);
  }

  /** Updates a registered component; unregistered ones are ignored. */
  set(component: HealthComponent, healthy: boolean): void {
    if (!this.#components.has(component)) return;
    const before = this.healthy;
    this.#components.set(component, healthy);
    const after = this.healthy;
    if (after !== before) for (const listener of this.#listeners) listener(after);
  }

  get healthy(): boolean {
    for (const ok of this.#components.values()) if (!ok) return false;
    return true;
  }

  /** Component states, for logs and the debug page. */
  states(): Record<string, boolean> {
    return Object.fromEntries(this.#components);
  }

  /** Called with the new overall state whenever it changes. */
  onChange(listener: (healthy: boolean) => void): () => void {
    this.#listeners.push(listener);
    return () => {
      const at = this.#listeners.indexOf(listener);
      if (at >= 0) this.#listeners.splice(at, 1);
    };
  }
}
