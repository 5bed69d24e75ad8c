/** A user as every response shows it: never a password or its hash. */
export interface User {
  readonly id: number;
  readonly name: string;
  readonly email: string;
}

/**
 * The users API's error texts, byte for byte those of the case-study service clients were written
 * against (spec users.md "Errors").
 */
export const USER_ERROR_TEXT = {
  badRequest: "Bad request",
  duplicateEmail: "User with that email already exists",
  notFound: "User with that id does not exist",
  methodNotAllowed: "Method not allowed",
  tooLarge: "Request entity too large",
  serverError: "server error",
} as const;

/** `name` bounds, after trimming. */
export const MAX_NAME_LENGTH = 255;
/** `password` bound: a limit against hashing abuse, not a policy. */
export const MAX_PASSWORD_LENGTH = 1024;
