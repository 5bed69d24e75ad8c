/** Who made a request, once authenticated. */
export interface Principal {
  readonly userId: number;
  readonly email: string;
  /** Capabilities granted to the user (`manage_options`, …). */
  readonly capabilities: ReadonlySet<string>;
}

/** What a request carries that may identify its sender. */
export interface Credentials {
  /** The `Authorization` header (or gRPC `authorization` metadata), if any. */
  readonly authorization: string | undefined;
  /** The client's address, for rate-limiting failed attempts. */
  readonly remoteAddress: string | undefined;
}

/**
 * The outcome of authenticating one request:
 * - `anonymous`: no credentials this authenticator understands;
 * - `refused`: credentials present but wrong (or revoked);
 * - `throttled`: too many failed attempts from this client lately;
 * - `authenticated`: a principal.
 */
export type Authentication =
  | { readonly kind: "anonymous" }
  | { readonly kind: "refused"; readonly reason: string }
  | { readonly kind: "throttled"; readonly retryAfterSeconds: number }
  | { readonly kind: "authenticated"; readonly principal: Principal };

/**
 * Turns credentials into a principal. HTTP Basic with application passwords is one implementation;
 * bearer tokens (OAuth, JWT) can be added as another without touching the routes.
 */
export interface Authenticator {
  authenticate(credentials: Credentials): Promise<Authentication>;
}

/** The capability the migrations API (and the users API with USERS_REQUIRE_AUTH) requires. */
export const MANAGE_OPTIONS = "manage_options";

/**
 * The decision for a route that needs `capability`: allowed, or why not (401 for anonymous and refused,
 * 429 for throttled, 403 for a principal without the capability).
 */
export type AccessDecision =
  | { readonly allowed: true; readonly principal: Principal }
  | {
      readonly allowed: false;
      readonly status: 401 | 403 | 429;
      /** 401: credentials were given but wrong (rather than missing). */
      readonly refused?: boolean;
      readonly retryAfterSeconds?: number;
    };

/** Decides access from an authentication outcome. */
export function accessFor(authentication: Authentication, capability: string): AccessDecision {
  switch (authentication.kind) {
    case "authenticated":
      return authentication.principal.capabilities.has(capability)
        ? { allowed: true, principal: authentication.principal }
        : { allowed: false, status: 403 };
    case "throttled":
      return { allowed: false, status: 429, retryAfterSeconds: authentication.retryAfterSeconds };
    case "refused":
      return { allowed: false, status: 401, refused: true };
    default:
      return { allowed: false, status: 401, refused: false };
  }
}

/** Checks a request's credentials against a required capability. */
export type AccessGuard = (credentials: Credentials) => Promise<AccessDecision>;

/** An {@link AccessGuard} from an authenticator and the capability the routes need. */
export function accessGuard(authenticator: Authenticator, capability: string): AccessGuard {
  return async (credentials) => accessFor(await authenticator.authenticate(credentials), capability);
}
