import { randomUUID } from "node:crypto";
import type { SqlDatabase } from "../database/sql-database.js";
import { DatabaseError } from "../errors.js";
import { applicationPasswordDigest } from "./application-password.js";

/** An application password as listed (never its secret). */
export interface ApplicationPasswordInfo {
  readonly uuid: string;
  readonly name: string;
  readonly createdAtMs: number;
  readonly lastUsedAtMs: number | null;
  readonly lastIp: string | null;
}

/** Capabilities and application passwords of users, in SQL (SQLite and PostgreSQL). */
export class SqlAuthStore {
  constructor(private readonly db: SqlDatabase) {}

  async capabilitiesOf(userId: number): Promise<Set<string>> {
    const found = await this.db.query<{ capability: string }>(
      "SELECT capability FROM user_capabilities WHERE user_id = $1",
      [userId],
    );
    return new Set(found.rows.map((row) => row.capability));
  }

  /** Whether the user holds any capability at all (an administrator's account, say). */
  async holdsAnyCapability(userId: number): Promise<boolean> {
    const found = await this.db.query("SELECT 1 AS held FROM user_capabilities WHERE user_id = $1 LIMIT 1", [
      userId,
    ]);
    return found.rows.length > 0;
  }

  /** Whether any user holds `capability` (an administrator exists, for `manage_options`). */
  async anyoneHolds(capability: string): Promise<boolean> {
    const found = await this.db.query(
      "SELECT 1 AS held FROM user_capabilities WHERE capability = $1 LIMIT 1",
      [capability],
    );
    return found.rows.length > 0;
  }

  /** Grants a capability; true when the user did not have it yet. */
  async grant(userId: number, capability: string, nowMs: number): Promise<boolean> {
    try {
      await this.db.query(
        "INSERT INTO user_capabilities (user_id, capability, granted_at_ms) VALUES ($1, $2, $3)",
        [userId, capability, nowMs],
      );
      return true;
    } catch (error) {
      if (error instanceof DatabaseError && error.uniqueViolation) return false;
      throw error;
    }
  }

  /** Takes a capability away; true when the user had it. */
  async revoke(userId: number, capability: string): Promise<boolean> {
    const removed = await this.db.query(
      "DELETE FROM user_capabilities WHERE user_id = $1 AND capability = $2",
      [userId, capability],
    );
    return removed.rowCount > 0;
  }

  /** Stores a new application password (by digest); returns its uuid. */
  async addApplicationPassword(userId: number, name: string, secret: string, nowMs: number): Promise<string> {
    const uuid = randomUUID();
    await this.db.query(
      `INSERT INTO application_passwords (uuid, user_id, name, secret_sha256, created_at_ms)
       VALUES ($1, $2, $3, $4, $5)`,
      [uuid, userId, name, applicationPasswordDigest(secret), nowMs],
    );
    return uuid;
  }

  async applicationPasswordsOf(userId: number): Promise<ApplicationPasswordInfo[]> {
    const found = await this.db.query<Record<string, unknown>>(
      `SELECT uuid, name, created_at_ms, last_used_at_ms, last_ip FROM application_passwords
       WHERE user_id = $1 ORDER BY id`,
      [userId],
    );
    return found.rows.map((row) => ({
      uuid: String(row.uuid),
      name: String(row.name),
      createdAtMs: Number(row.created_at_ms),
      lastUsedAtMs: row.last_used_at_ms === null ? null : Number(row.last_used_at_ms),
      lastIp: row.last_ip === null ? null : String(row.last_ip),
    }));
  }

  /** Deletes the user's application passwords with this uuid or name; returns how many. */
  async revokeApplicationPassword(userId: number, uuidOrName: string): Promise<number> {
    const removed = await this.db.query(
      "DELETE FROM application_passwords WHERE user_id = $1 AND (uuid = $2 OR name = $2)",
      [userId, uuidOrName],
    );
    return removed.rowCount;
  }

  /** The application password of `userId` matching `secret`, if any. */
  async findApplicationPassword(
    userId: number,
    secret: string,
  ): Promise<{ id: number; lastUsedAtMs: number | null } | undefined> {
    const found = await this.db.query<{ id: number; last_used_at_ms: number | null }>(
      "SELECT id, last_used_at_ms FROM application_passwords WHERE user_id = $1 AND secret_sha256 = $2",
      [userId, applicationPasswordDigest(secret)],
    );
    const row = found.rows[0];
    return row === undefined
      ? undefined
      : {
          id: Number(row.id),
          lastUsedAtMs: row.last_used_at_ms === null ? null : Number(row.last_used_at_ms),
        };
  }

  async recordUse(id: number, nowMs: number, ip: string | undefined): Promise<void> {
    await this.db.query("UPDATE application_passwords SET last_used_at_ms = $2, last_ip = $3 WHERE id = $1", [
      id,
      nowMs,
      ip ?? null,
    ]);
  }
}
