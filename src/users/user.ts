/** A user as every response shows it: never a password or its hash. */
export interface User {
  readonly id: number;
  readonly name: string;
  readonly email: string;
}

/**
 * The users API's error texts, byte for byte those of the case-study service clients were written
 * against (docs/users-api.md; test/e2e/users/users-api-cases.ts).
 */
export const USER_ERROR_TEXT = {
  badRequest: "Bad request",
  duplicateEmail: "User with that email already exists",
  notFound: "User with that id does not exist",
  methodNotAllowed: "Method not allowed",
  tooLarge: "Request entity too large",
  serverError: "server error",
  /** 503 / UNAVAILABLE (ratelimitd's own): the password-hashing queue is full (USERS_PASSWORD_HASH_QUEUE). */
  busy: "Too many passwords waiting to be hashed; try again later",
} as const;

/**
 * Texts of the users API's refusals for lack of credentials (ratelimitd's own: the case study has no
 * authentication), the same over REST, Connect and gRPC.
 */
export const USER_ACCESS_TEXT = {
  /** 401 / UNAUTHENTICATED: no credentials. */
  required:
    "Authentication required: use HTTP Basic with an application password of a user holding manage_options.",
  /** 401 / UNAUTHENTICATED: wrong credentials. */
  refused: "Invalid e-mail address or application password.",
  /** 403 / PERMISSION_DENIED with USERS_REQUIRE_AUTH. */
  forbidden: "Sorry, you are not allowed to manage users.",
  /** 403 / PERMISSION_DENIED: changing or deleting an account that holds a capability. */
  forbiddenPrivileged: "Sorry, you are not allowed to change or delete a user that holds capabilities.",
  /** 429 / RESOURCE_EXHAUSTED: the failed-login throttle. */
  throttled: "Too many failed authentication attempts; try again later.",
} as const;

/** `name` bounds, after trimming. */
export const MAX_NAME_LENGTH = 255;
/** `password` bound: a limit against hashing abuse, not a policy. */
export const MAX_PASSWORD_LENGTH = 1024;
