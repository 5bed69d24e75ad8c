import {
  BACKENDS,
  type BackendEntry,
  type BackendType,
  DEFAULT_BACKEND,
} from "../backends/backend-registry.js";
import { oneOf } from "./setting-spec.js";

/**
 * `BACKEND_TYPE`, derived from the backend registry (src/backends/backend-registry.ts): each backend's name
 * in registry order, `""` (the default, as the reference accepts it) right after the default's name, and
 * the aliases; the help lists `name or alias (about)` per backend.
 */
export function backendTypeSetting() {
  const entries = Object.entries(BACKENDS) as [BackendType, BackendEntry][];
  const words = entries.flatMap(([name]): (BackendType | "")[] =>
    name === DEFAULT_BACKEND ? [name, ""] : [name],
  );
  const aliases: Record<string, BackendType> = {};
  for (const [name, entry] of entries) if (entry.alias !== undefined) aliases[entry.alias] = name;
  const help = entries.map(([name, { alias, about }]) =>
    [name, alias === undefined ? "" : ` or ${alias}`, about === undefined ? "" : ` (${about})`].join(""),
  );
  return oneOf("BACKEND_TYPE", DEFAULT_BACKEND, words, help.join(", "), aliases);
}
