import type { MigrationDefinition } from "./migration.js";

const ID = /^[a-zA-Z0-9_-]{1,191}$/;
const FUNCTIONS = ["totalItems", "isApplicable", "canRun", "isDone", "up"] as const;

/**
 * Why `value` is not a usable migration definition, or undefined when it is. Checked for built-in and
 * operator migrations alike, so a bad module is refused at start-up with a clear reason.
 */
export function definitionProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return "not an object";
  const d = value as Record<string, unknown>;
  if (typeof d.id !== "string" || !ID.test(d.id))
    return "id must match [a-zA-Z0-9_-]+ (at most 191 characters)";
  for (const key of ["label", "description"] as const) {
    if (typeof d[key] !== "string") return `${key} must be a string`;
  }
  if (!Array.isArray(d.tags) || !d.tags.every((tag) => typeof tag === "string"))
    return "tags must be strings";
  if (!Number.isSafeInteger(d.defaultBatchSize) || (d.defaultBatchSize as number) < 1) {
    return "defaultBatchSize must be a whole number ≥ 1";
  }
  const retries = d.retriesPerBatch;
  if (retries !== undefined && (!Number.isSafeInteger(retries) || (retries as number) < 0)) {
    return "retriesPerBatch must be a whole number ≥ 0";
  }
  for (const name of FUNCTIONS) if (typeof d[name] !== "function") return `${name} must be a function`;
  if (d.down !== undefined && typeof d.down !== "function") return "down must be a function when present";
  return undefined;
}

/** The migrations this daemon knows, by id, in registration order. */
export class MigrationRegistry {
  readonly #byId = new Map<string, MigrationDefinition>();

  /** Adds definitions; throws naming `source` when one is invalid or its id is taken. */
  register(definition: MigrationDefinition, source: string): void {
    const problem = definitionProblem(definition);
    if (problem !== undefined) throw new Error(`${source}: invalid migration definition: ${problem}`);
    if (this.#byId.has(definition.id))
      throw new Error(`${source}: duplicate migration id "${definition.id}"`);
    this.#byId.set(definition.id, definition);
  }

  get(id: string): MigrationDefinition | undefined {
    return this.#byId.get(id);
  }

  all(): MigrationDefinition[] {
    return [...this.#byId.values()];
  }
}
