/**
 * One error base with stable string codes. Transports map these to gRPC and HTTP statuses in exactly one
 * place each (`transports/grpc-status.ts`, `transports/http-status.ts`).
 */

/** Stable, machine-readable error codes. */
export type ErrorCode =
  | "settings_invalid"
  | "config_invalid"
  | "service_error"
  | "invalid_argument"
  | "backend_error"
  | "unavailable"
  | "not_found"
  | "already_exists"
  | "conflict"
  | "too_large"
  | "database_error";

/** Base of every error ratelimitd raises on purpose. */
export class RatelimitdError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** One or more environment variables hold values that cannot be used; the message names each. */
export class SettingsError extends RatelimitdError {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super("settings_invalid", problems.join("\n"));
    this.problems = problems;
  }
}

/**
 * Invalid rate-limit rules. The message is prefixed with the source (file name or xDS resource name) as the
 * reference does: `basic.yaml: duplicate domain 'foo' in config file`.
 */
export class ConfigError extends RatelimitdError {
  /** File name or xDS resource name the error belongs to. */
  readonly source: string;
  /** The message without the source prefix. */
  readonly reason: string;

  constructor(source: string, reason: string) {
    super("config_invalid", `${source}: ${reason}`);
    this.source = source;
    this.reason = reason;
  }
}

/**
 * A request the service refuses with the reference's texts (`rate limit domain must not be empty`, …).
 * gRPC answers these with UNKNOWN as the reference does; counted in `call.should_rate_limit.service_error`.
 */
export class ServiceError extends RatelimitdError {
  constructor(message: string) {
    super("service_error", message);
  }
}

/** Malformed input the reference would crash on or mis-handle (gRPC INVALID_ARGUMENT, HTTP 400). */
export class InvalidArgumentError extends RatelimitdError {
  constructor(message: string) {
    super("invalid_argument", message);
  }
}

/**
 * The counter backend failed; the driver's error is the `cause`. Counted in `redis_error`. `message` has the
 * details for the log (the deployment's masked address, the driver's text); `clientMessage` is what clients
 * are shown instead — `redis: connection refused` — with no address and nothing else from the settings.
 */
export class BackendError extends RatelimitdError {
  readonly clientMessage: string;

  constructor(message: string, options: { clientMessage: string; cause?: unknown }) {
    super("backend_error", message, { cause: options.cause });
    this.clientMessage = options.clientMessage;
  }
}

/**
 * The counter store was not asked at all: its circuit breaker is open, or BACKEND_MAX_PENDING calls are
 * already waiting on it (docs/outages.md). Answered by BACKEND_FAILURE_MODE like any
 * backend failure, but it is not a failed call: it never counts towards opening the breaker.
 */
export class BackendUnavailableError extends BackendError {
  readonly reason: "breaker_open" | "pending_full";

  constructor(store: string, reason: "breaker_open" | "pending_full", detail: string) {
    const why = reason === "breaker_open" ? "circuit breaker open" : "too many calls pending";
    super(`${store}: unavailable (${why}${detail === "" ? "" : `: ${detail}`})`, {
      clientMessage: `${store}: unavailable (${why})`,
    });
    this.reason = reason;
  }
}

/** The thing a request names (a user, a migration, an execution) does not exist. */
export class NotFoundError extends RatelimitdError {
  constructor(message: string) {
    super("not_found", message);
  }
}

/** A create or update would duplicate something unique (a user's e-mail address). */
export class AlreadyExistsError extends RatelimitdError {
  constructor(message: string) {
    super("already_exists", message);
  }
}

/** The request conflicts with work in progress (a migration that already has an active execution). */
export class ConflictError extends RatelimitdError {
  constructor(message: string) {
    super("conflict", message);
  }
}

/**
 * Refused for now to protect the service (a bounded queue is full): nothing was done, and the same request
 * may succeed after `retryAfterSeconds` (HTTP 503 with `Retry-After`, gRPC UNAVAILABLE).
 */
export class OverloadedError extends RatelimitdError {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super("unavailable", message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * A request body larger than its limit (HTTP 413 on the REST APIs). Its remaining bytes were read and
 * discarded, or, when the declared length was already too large, never read.
 */
export class BodyTooLargeError extends RatelimitdError {
  readonly maxBytes: number;

  constructor(maxBytes: number) {
    super("too_large", `request body larger than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

/**
 * The users/migrations database failed or cannot be reached; the driver's error is the `cause`. Clients see
 * a generic text (`server error`); the details go to the log. `uniqueViolation` marks a unique index
 * refusing a row, which stores turn into their own answers.
 */
export class DatabaseError extends RatelimitdError {
  readonly uniqueViolation: boolean;

  constructor(message: string, options: { cause?: unknown; uniqueViolation?: boolean } = {}) {
    super("database_error", message, { cause: options.cause });
    this.uniqueViolation = options.uniqueViolation ?? false;
  }
}

/** Returns the error's message for any thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
