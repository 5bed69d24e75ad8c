/**
 * Where the users and migrations data lives, from `DATABASE_URL`:
 * `sqlite:<file>` (relative to the working directory), `sqlite::memory:` (gone at exit; tests), or
 * `postgres://…` / `postgresql://…` (any connection string `pg` accepts; what several replicas share).
 */
export type DatabaseLocation =
  | { readonly kind: "sqlite"; readonly path: string }
  | { readonly kind: "postgres"; readonly connectionString: string };

/** The result of parsing a `DATABASE_URL`. */
export type ParsedLocation = { ok: true; value: DatabaseLocation } | { ok: false; reason: string };

/** Parses a `DATABASE_URL` value. */
export function parseDatabaseLocation(text: string): ParsedLocation {
  const trimmed = text.trim();
  if (/^sqlite:/i.test(trimmed)) {
    // `sqlite:///abs/file` (URL style) and `sqlite:/abs/file` both mean /abs/file.
    const path = trimmed.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
    if (path === "")
      return { ok: false, reason: "sqlite: needs a file name, e.g. sqlite:./data/ratelimitd.db" };
    return { ok: true, value: { kind: "sqlite", path } };
  }
  if (/^postgres(ql)?:\/\//i.test(trimmed)) {
    try {
      const url = new URL(trimmed);
      if (url.hostname === "" && !url.searchParams.has("host")) {
        return { ok: false, reason: "postgres:// needs a host" };
      }
    } catch {
      return { ok: false, reason: "not a valid postgres:// URL" };
    }
    return { ok: true, value: { kind: "postgres", connectionString: trimmed } };
  }
  return { ok: false, reason: "must start with sqlite: or postgres://" };
}

/** The location for logs: a PostgreSQL password is masked. */
export function describeDatabaseLocation(location: DatabaseLocation): string {
  if (location.kind === "sqlite") return `sqlite:${location.path}`;
  const url = new URL(location.connectionString);
  if (url.password !== "") url.password = "*****";
  return url.toString();
}
