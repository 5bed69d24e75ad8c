import type { User } from "./user.js";

/** A user row as stores write it. `emailKey` is the normalised address the unique index is on. */
export interface UserRecord {
  readonly name: string;
  readonly email: string;
  readonly emailKey: string;
  readonly passwordHash: string;
}

/** The attributes an update changes; absent ones stay as they are. */
export type UserChanges = Partial<UserRecord>;

/** A slice of the list, by id ascending. */
export interface UserPage {
  readonly limit: number;
  readonly offset: number;
}

/**
 * Where users live. Expected outcomes are values (`"duplicate"`, `undefined` for no such user); database
 * failures reject with a `DatabaseError`.
 */
export interface UserStore {
  /** Adds a user with the next id (ids start at 1 and are never reused). */
  create(record: UserRecord, nowMs: number): Promise<User | "duplicate">;
  update(id: number, changes: UserChanges, nowMs: number): Promise<User | "duplicate" | undefined>;
  /** True when a user was deleted. */
  delete(id: number): Promise<boolean>;
  get(id: number): Promise<User | undefined>;
  /** Users by id ascending (all of them without `page`), and how many there are in all. */
  list(page?: UserPage): Promise<{ users: User[]; total: number }>;
  /** The user with this normalised e-mail and their password hash (for authentication). */
  findByEmailKey(emailKey: string): Promise<{ user: User; passwordHash: string } | undefined>;
}
