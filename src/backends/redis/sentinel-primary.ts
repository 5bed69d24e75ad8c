import type { ConnectionOptions } from "node:tls";
import { messageOf } from "../../errors.js";
import { DetailedFailure } from "../client-reason.js";
import type { RedisHostPort } from "./redis-address.js";
import { RespConnection, type RespTarget } from "./resp-connection.js";

/** How to ask a sentinel group which Redis is the primary (REDIS_URL `master,host:port,…`). */
export interface SentinelGroupOptions {
  readonly masterName: string;
  readonly sentinels: readonly RedisHostPort[];
  /** REDIS_SENTINEL_AUTH, split: used unless a sentinel's own URL carries credentials. */
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** With REDIS_TLS the sentinels are reached over TLS too. */
  readonly tls: ConnectionOptions | undefined;
  readonly timeoutMs: number;
}

/**
 * Asks the sentinels, in the given order, for the current primary's address
 * (`SENTINEL get-master-addr-by-name`); the first one that knows answers. Rejects with every sentinel's
 * reason when none does.
 */
export async function locatePrimary(group: SentinelGroupOptions): Promise<RespTarget> {
  const reasons: string[] = [];
  for (const sentinel of group.sentinels) {
    const where = `${sentinel.host}:${sentinel.port}`;
    try {
      const reply = await askSentinel(sentinel, group);
      if (Array.isArray(reply) && typeof reply[0] === "string" && typeof reply[1] === "string") {
        return { host: reply[0], port: Number(reply[1]) };
      }
      reasons.push(`${where}: no primary named '${group.masterName}'`);
    } catch (error) {
      reasons.push(`${where}: ${messageOf(error)}`);
    }
  }
  // Clients are not shown the group's name nor the sentinels' addresses (they come from REDIS_URL).
  throw new DetailedFailure(
    `no sentinel gave the address of '${group.masterName}' (${reasons.join("; ")})`,
    "no sentinel gave the primary's address",
  );
}

async function askSentinel(sentinel: RedisHostPort, group: SentinelGroupOptions) {
  const connection = new RespConnection({
    locate: async () => sentinel,
    tls: group.tls,
    username: sentinel.password !== undefined ? sentinel.username : group.username,
    password: sentinel.password ?? group.password,
    timeoutMs: group.timeoutMs,
    reconnect: false,
  });
  try {
    await connection.open();
    return await connection.command(["SENTINEL", "get-master-addr-by-name", group.masterName]);
  } finally {
    await connection.close();
  }
}

/**
 * Refuses a server that is not a primary (`ROLE`): between a failover and the sentinels' agreement, the
 * address they give may still be the demoted one.
 */
export async function verifyPrimary(connection: RespConnection): Promise<void> {
  const reply = await connection.command(["ROLE"]);
  const role = Array.isArray(reply) ? reply[0] : reply;
  if (role !== "master") {
    const text = `the server the sentinels named is a ${String(role)}, not the primary`;
    throw new DetailedFailure(text, text);
  }
}
