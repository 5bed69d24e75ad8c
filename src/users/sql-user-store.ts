import type { SqlDatabase, SqlValue } from "../database/sql-database.js";
import { DatabaseError } from "../errors.js";
import type { User } from "./user.js";
import type { UserChanges, UserPage, UserRecord, UserStore } from "./user-store.js";

const USER_COLUMNS = "id, name, email";

/** Thrown inside a transaction to roll it back when a unique index refuses the row. */
class Duplicate extends Error {}

/** {@link UserStore} in SQL: one implementation for SQLite and PostgreSQL (the statements are common SQL). */
export class SqlUserStore implements UserStore {
  constructor(private readonly db: SqlDatabase) {}

  async create(record: UserRecord, nowMs: number): Promise<User | "duplicate"> {
    try {
      return await this.db.transaction(async (tx) => {
        const next = await tx.query<{ last_value: number }>(
          "UPDATE ratelimitd_sequences SET last_value = last_value + 1 WHERE name = 'users' RETURNING last_value",
        );
        const id = next.rows[0]?.last_value;
        if (id === undefined) throw new DatabaseError("the users id sequence is missing");
        const values: SqlValue[] = [
          id,
          record.name,
          record.email,
          record.emailKey,
          record.passwordHash,
          nowMs,
        ];
        try {
          const inserted = await tx.query<User>(
            `INSERT INTO users (id, name, email, email_key, password_hash, created_at_ms, updated_at_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING ${USER_COLUMNS}`,
            values,
          );
          return userOf(inserted.rows[0]);
        } catch (error) {
          throw error instanceof DatabaseError && error.uniqueViolation ? new Duplicate() : error;
        }
      });
    } catch (error) {
      if (error instanceof Duplicate) return "duplicate";
      throw error;
    }
  }

  async update(id: number, changes: UserChanges, nowMs: number): Promise<User | "duplicate" | undefined> {
    try {
      const updated = await this.db.query<User>(
        `UPDATE users SET name = COALESCE($2, name), email = COALESCE($3, email),
           email_key = COALESCE($4, email_key), password_hash = COALESCE($5, password_hash), updated_at_ms = $6
         WHERE id = $1 RETURNING ${USER_COLUMNS}`,
        [
          id,
          changes.name ?? null,
          changes.email ?? null,
          changes.emailKey ?? null,
          changes.passwordHash ?? null,
          nowMs,
        ],
      );
      return updated.rows.length === 0 ? undefined : userOf(updated.rows[0]);
    } catch (error) {
      if (error instanceof DatabaseError && error.uniqueViolation) return "duplicate";
      throw error;
    }
  }

  async delete(id: number): Promise<boolean> {
    return (await this.db.query("DELETE FROM users WHERE id = $1", [id])).rowCount > 0;
  }

  async get(id: number): Promise<User | undefined> {
    const found = await this.db.query<User>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
    return found.rows.length === 0 ? undefined : userOf(found.rows[0]);
  }

  async list(page?: UserPage): Promise<{ users: User[]; total: number }> {
    if (page === undefined) {
      const all = await this.db.query<User>(`SELECT ${USER_COLUMNS} FROM users ORDER BY id`);
      return { users: all.rows.map(userOf), total: all.rows.length };
    }
    // One statement, one snapshot: the page and the total agree.
    const rows = await this.db.query<User & { total: number }>(
      `SELECT ${USER_COLUMNS}, COUNT(*) OVER () AS total FROM users ORDER BY id LIMIT $1 OFFSET $2`,
      [page.limit, page.offset],
    );
    if (rows.rows.length > 0) return { users: rows.rows.map(userOf), total: Number(rows.rows[0]?.total) };
    const count = await this.db.query<{ total: number }>("SELECT COUNT(*) AS total FROM users");
    return { users: [], total: Number(count.rows[0]?.total ?? 0) };
  }

  async findByEmailKey(emailKey: string): Promise<{ user: User; passwordHash: string } | undefined> {
    const found = await this.db.query<User & { password_hash: string }>(
      `SELECT ${USER_COLUMNS}, password_hash FROM users WHERE email_key = $1`,
      [emailKey],
    );
    const row = found.rows[0];
    return row === undefined ? undefined : { user: userOf(row), passwordHash: row.password_hash };
  }
}

/** Exactly the three public fields, whatever else the row holds. */
function userOf(row: User | undefined): User {
  if (row === undefined) throw new DatabaseError("a statement returned no row where one was expected");
  return { id: Number(row.id), name: row.name, email: row.email };
}
