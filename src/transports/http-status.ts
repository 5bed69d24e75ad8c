import { type ErrorCode, RatelimitdError } from "../errors.js";

/** The HTTP APIs whose errors become statuses here, each with the statuses its contract fixes. */
export type HttpApi = "json" | "explain" | "users" | "migrations";

/** One API's statuses: ratelimitd's own errors by code, and the status of any other error. */
interface StatusTable {
  readonly byCode: Partial<Record<ErrorCode, number>>;
  readonly otherwise: number;
}

const HTTP_STATUSES: Readonly<Record<HttpApi, StatusTable>> = {
  // The reference's `/json`: every failure — a body that does not parse, a request the service refuses, a
  // failing backend — is 400 Bad Request.
  json: { byCode: {}, otherwise: 400 },
  // `POST /explain` (README "Explain a decision"): a failing counter store is 503, the request itself was
  // fine; anything else, the JSON parser's errors included, is the request's.
  explain: { byCode: { backend_error: 503 }, otherwise: 400 },
  // README "Users API": the statuses of the service its clients were written against, where a duplicate
  // e-mail address is 403; a full password-hashing queue is 503.
  users: {
    byCode: { invalid_argument: 400, already_exists: 403, not_found: 404, too_large: 413, unavailable: 503 },
    otherwise: 500,
  },
  // README "Migrations API".
  migrations: {
    byCode: { invalid_argument: 400, not_found: 404, conflict: 409, too_large: 413 },
    otherwise: 500,
  },
};

/**
 * HTTP status for an error thrown while serving `api` — the one place errors become HTTP statuses, as
 * `grpc-status.ts` beside it is for gRPC. The same error may get different statuses on different APIs,
 * since each keeps the statuses its clients expect. A 500 is an error the API does not expect: its caller
 * logs the details and shows the client a generic text.
 */
export function httpStatusOf(error: unknown, api: HttpApi): number {
  const table = HTTP_STATUSES[api];
  return (error instanceof RatelimitdError ? table.byCode[error.code] : undefined) ?? table.otherwise;
}
