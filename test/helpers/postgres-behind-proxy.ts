import { createPostgresSchema, type PostgresSchema, type PostgresTestHooks } from "./postgres-schema.js";
import { type SwitchableProxy, startSwitchableProxy } from "./switchable-proxy.js";

/** A test's own schema reached through a proxy that can take PostgreSQL away from the daemon. */
export interface PostgresBehindProxy {
  readonly schema: PostgresSchema;
  readonly proxy: SwitchableProxy;
  /** The DATABASE_URL for the daemon: the schema, through the proxy. */
  readonly url: string;
}

/**
 * Creates a schema for the test (see {@link createPostgresSchema}: undefined when PostgreSQL is not usable)
 * and a proxy in front of the server, forwarding at once unless `up` is false.
 */
export async function createPostgresSchemaBehindProxy(
  t: PostgresTestHooks,
  { up = true } = {},
): Promise<PostgresBehindProxy | undefined> {
  const schema = await createPostgresSchema(t);
  if (schema === undefined) return undefined;
  const server = new URL(schema.serverUrl);
  const proxy = await startSwitchableProxy(
    t,
    { host: server.hostname, port: Number(server.port || 5432) },
    up,
  );
  const url = new URL(schema.url);
  url.host = `127.0.0.1:${proxy.port}`;
  return { schema, proxy, url: url.toString() };
}
