import { USER_ACCESS_TEXT } from "../users/user.js";
import type { AccessDecision, AccessGuard, Credentials } from "./authenticator.js";

/** A users-API operation, as far as access to it depends on it. */
export type UsersOperation =
  | { readonly kind: "create" | "get" | "list" }
  /** `userId` undefined: the request names no valid id (a 404 later). */
  | { readonly kind: "update" | "delete"; readonly userId: number | undefined };

/** Allowed, or refused like an {@link AccessGuard} refuses, with why credentials were needed at all. */
export type UsersAccessDecision =
  | { readonly allowed: true }
  | (Extract<AccessDecision, { allowed: false }> & {
      /** `required`: USERS_REQUIRE_AUTH; `privileged`: the target account holds a capability. */
      readonly because: "required" | "privileged";
    });

/** Decides whether a users-API request may proceed. */
export type UsersAccess = (
  operation: UsersOperation,
  credentials: Credentials,
) => Promise<UsersAccessDecision>;

/** Options of {@link usersAccess}. */
export interface UsersAccessOptions {
  /** Checks credentials for `manage_options` (the migrations API's authenticator and throttle). */
  readonly guard: AccessGuard;
  /** USERS_REQUIRE_AUTH: every request needs `manage_options` credentials. */
  readonly requireAuth: boolean;
  /** Whether the user holds any capability. */
  readonly isPrivileged: (userId: number) => Promise<boolean>;
}

/**
 * Who may use the users API. It is open by default, as the case study has it — except that changing or
 * deleting an account holding any capability (an administrator's) always needs the credentials of a
 * `manage_options` user, whatever USERS_REQUIRE_AUTH says: otherwise anyone who can reach the port could
 * take over or remove the migrations administrator. Reading stays open (no response carries a secret), and
 * creates cannot touch an administrator (e-mail addresses are unique, case-insensitively).
 *
 * The capability is looked up before the change, not with it: an account that gains a capability while
 * an anonymous change of it is under way was open to that change a moment earlier anyway.
 */
export function usersAccess(options: UsersAccessOptions): UsersAccess {
  const { guard, requireAuth, isPrivileged } = options;
  return async (operation, credentials) => {
    let because: "required" | "privileged";
    if (requireAuth) because = "required";
    else if (operation.kind !== "update" && operation.kind !== "delete") return { allowed: true };
    else if (operation.userId !== undefined && (await isPrivileged(operation.userId))) because = "privileged";
    else return { allowed: true };
    const decision = await guard(credentials);
    return decision.allowed ? { allowed: true } : { ...decision, because };
  };
}

/** The error text of a refusal, the same on every transport. */
export function usersRefusalText(decision: Extract<UsersAccessDecision, { allowed: false }>): string {
  switch (decision.status) {
    case 401:
      return decision.refused ? USER_ACCESS_TEXT.refused : USER_ACCESS_TEXT.required;
    case 403:
      return decision.because === "privileged"
        ? USER_ACCESS_TEXT.forbiddenPrivileged
        : USER_ACCESS_TEXT.forbidden;
    default:
      return USER_ACCESS_TEXT.throttled;
  }
}
