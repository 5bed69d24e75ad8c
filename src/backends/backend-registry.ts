/** What the settings know of one backend: BACKEND_TYPE's other spelling, and a few words of help. */
export interface BackendEntry {
  /** The reference's other spelling of the name (`kvstore` for `redis`), accepted as the same backend. */
  readonly alias?: string;
  /** Said after the name in `ratelimitd --help` and the README's settings table (`in-process`). */
  readonly about?: string;
}

/**
 * Every counter store BACKEND_TYPE may name, in the order the settings list them. The one list of
 * backends: the settings derive BACKEND_TYPE's accepted words, error text and help from it
 * (src/settings/backend-type.ts), and the compiler wants a factory for each entry in
 * create-counter-store.ts and its options in src/daemon/counter-store-options.ts. Names and words only,
 * so reading the settings does not load any backend's client library.
 */
export const BACKENDS = {
  redis: { alias: "kvstore" },
  memcache: { alias: "altcache" },
  memory: { about: "in-process" },
} as const satisfies Readonly<Record<string, BackendEntry>>;

/** A backend's name, as `BACKEND_TYPE` spells it (aliases resolved). */
export type BackendType = keyof typeof BACKENDS;

/** The backend of BACKEND_TYPE unset or `""`: the reference's default. */
export const DEFAULT_BACKEND: BackendType = "redis";
