import { AlreadyExistsError, InvalidArgumentError, NotFoundError } from "../errors.js";
import type { PasswordHasher } from "./password-hasher.js";
import { USER_ERROR_TEXT, type User } from "./user.js";
import {
  type Checked,
  type CreateUserInput,
  checkEmail,
  checkName,
  checkPassword,
  type UpdateUserInput,
} from "./user-input.js";
import type { UserChanges, UserPage, UserStore } from "./user-store.js";

/** Options of {@link UserService}. */
export interface UserServiceOptions {
  readonly store: UserStore;
  readonly hasher: PasswordHasher;
  /** Why a request was refused, for the debug log (never sent to clients). */
  readonly debug?: ((line: string) => void) | undefined;
  readonly nowMs?: () => number;
}

/**
 * The user operations, shared by the REST routes and the Connect/gRPC service. Refusals are thrown as
 * `InvalidArgumentError("Bad request")`, `AlreadyExistsError`, `NotFoundError` with the API's exact texts;
 * database failures as `DatabaseError`.
 */
export class UserService {
  readonly #store: UserStore;
  readonly #hasher: PasswordHasher;
  readonly #debug: ((line: string) => void) | undefined;
  readonly #nowMs: () => number;

  constructor(options: UserServiceOptions) {
    this.#store = options.store;
    this.#hasher = options.hasher;
    this.#debug = options.debug;
    this.#nowMs = options.nowMs ?? Date.now;
  }

  async create(input: CreateUserInput): Promise<User> {
    const name = this.#valid(checkName(input.name));
    const { email, emailKey } = this.#valid(checkEmail(input.email));
    const password = this.#valid(checkPassword(input.password));
    const passwordHash = await this.#hasher.hash(password);
    const created = await this.#store.create({ name, email, emailKey, passwordHash }, this.#nowMs());
    if (created === "duplicate") throw new AlreadyExistsError(USER_ERROR_TEXT.duplicateEmail);
    return created;
  }

  /** `id` is undefined when the request named no valid id (a 404 either way). */
  async update(id: number | undefined, input: UpdateUserInput): Promise<User> {
    if (id === undefined) throw new NotFoundError(USER_ERROR_TEXT.notFound);
    const changes: { -readonly [K in keyof UserChanges]: UserChanges[K] } = {};
    if (input.name !== undefined) changes.name = this.#valid(checkName(input.name));
    if (input.email !== undefined) Object.assign(changes, this.#valid(checkEmail(input.email)));
    if (input.password !== undefined) {
      changes.passwordHash = await this.#hasher.hash(this.#valid(checkPassword(input.password)));
    }
    if (Object.keys(changes).length === 0) this.#valid({ ok: false, reason: "no attribute to update" });
    const updated = await this.#store.update(id, changes, this.#nowMs());
    if (updated === "duplicate") throw new AlreadyExistsError(USER_ERROR_TEXT.duplicateEmail);
    if (updated === undefined) throw new NotFoundError(USER_ERROR_TEXT.notFound);
    return updated;
  }

  async delete(id: number | undefined): Promise<void> {
    if (id === undefined || !(await this.#store.delete(id)))
      throw new NotFoundError(USER_ERROR_TEXT.notFound);
  }

  async get(id: number | undefined): Promise<User> {
    const user = id === undefined ? undefined : await this.#store.get(id);
    if (user === undefined) throw new NotFoundError(USER_ERROR_TEXT.notFound);
    return user;
  }

  /** Users by id ascending: every one, or the page asked for, with the total count. */
  list(page?: UserPage): Promise<{ users: User[]; total: number }> {
    return this.#store.list(page);
  }

  /**
   * Validates a page request: limit 1–1000, offset ≥ 0. `undefined` for both means the whole list.
   */
  pageOf(limit: number | undefined, offset: number | undefined): UserPage | undefined {
    if (limit === undefined && offset === undefined) return undefined;
    const page = { limit: limit ?? MAX_PAGE, offset: offset ?? 0 };
    if (!Number.isSafeInteger(page.limit) || page.limit < 1 || page.limit > MAX_PAGE) {
      this.#valid({ ok: false, reason: `limit must be between 1 and ${MAX_PAGE}` });
    }
    if (!Number.isSafeInteger(page.offset) || page.offset < 0) {
      this.#valid({ ok: false, reason: "offset must be a whole number ≥ 0" });
    }
    return page;
  }

  #valid<T>(checked: Checked<T>): T {
    if (checked.ok) return checked.value;
    this.#debug?.(`users API: bad request: ${checked.reason}`);
    throw new InvalidArgumentError(USER_ERROR_TEXT.badRequest);
  }
}

/** Largest page of the list. */
export const MAX_PAGE = 1000;
