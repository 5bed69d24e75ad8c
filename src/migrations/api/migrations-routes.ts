import type { IncomingMessage, ServerResponse } from "node:http";
import type { AccessDecision, AccessGuard } from "../../auth/authenticator.js";
import { InvalidArgumentError, messageOf, NotFoundError } from "../../errors.js";
import type { Logger } from "../../observability/logger.js";
import { accessDenied, credentialsOf } from "../../transports/http/access-responses.js";
import { readBody, sendJson } from "../../transports/http/http-responses.js";
import type { HttpRoute } from "../../transports/http/http-route.js";
import { httpStatusOf } from "../../transports/http-status.js";
import { parseLogQuery } from "../log-query.js";
import type { Operation } from "../migration.js";
import type { MigrationService, ScheduleParams } from "../migration-service.js";
import { executionJson, logJson, migrationJson, scheduleJson } from "./migrations-json.js";

/** Options of {@link migrationsRoutes}. */
export interface MigrationsRoutesOptions {
  readonly service: MigrationService;
  /** `/{namespace}/migrations/v1`. */
  readonly basePath: string;
  readonly guard: AccessGuard;
  /** Served without authentication at `{base}/openapi.json`. */
  readonly openApi: unknown;
  readonly logger: Logger;
  /** Whether a 401 carries `WWW-Authenticate` (default true; the console's mount says false). */
  readonly challenge?: boolean;
}

const MAX_BODY_BYTES = 65_536;
const MIGRATION_ID = /^[a-zA-Z0-9_-]+$/;

type Handler = (req: IncomingMessage, url: URL, match: RegExpExecArray) => Promise<unknown>;
interface Route {
  readonly pattern: RegExp;
  readonly method: "GET" | "POST";
  readonly handle: Handler;
}

/** `{namespace}` from MIGRATIONS_HOOK_PREFIX: lower case, `_` and spaces become `-`. */
export function migrationsNamespace(hookPrefix: string): string {
  return hookPrefix.toLowerCase().replace(/[_ ]/g, "-");
}

/**
 * The migrations REST API (README "Migrations API") under `/{namespace}/migrations/v1`. Every route needs a
 * user holding `manage_options`; every error is `{"code", "success": false, "message"}` with the status
 * `httpStatusOf` gives.
 */
export function migrationsRoutes(options: MigrationsRoutesOptions): HttpRoute {
  const { service, basePath } = options;
  const schedule =
    (operation: Operation): Handler =>
    async (req, url, match) =>
      scheduleJson(
        await service.schedule(migrationIdOf(match[1] ?? ""), operation, await scheduleParams(req, url)),
      );
  const logs: Handler = async (_req, url, match) => {
    const parsed = parseLogQuery((name) => url.searchParams.get(name) ?? undefined);
    if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
    return (await service.logs(decodedSegment(match[1] ?? ""), parsed.query)).map(logJson);
  };
  const routes: Route[] = [
    {
      pattern: /^\/migrations$/,
      method: "GET",
      handle: async (_req, url) => {
        const tags = url.searchParams.get("tags");
        const wanted = tags === null || tags === "" ? undefined : tags.split(",").map((tag) => tag.trim());
        return (await service.list(wanted)).map(migrationJson);
      },
    },
    { pattern: /^\/migrations\/([^/]+)\/run$/, method: "POST", handle: schedule("up") },
    { pattern: /^\/migrations\/([^/]+)\/rollback$/, method: "POST", handle: schedule("down") },
    {
      pattern: /^\/migrations\/([^/]+)\/executions$/,
      method: "GET",
      handle: async (_req, _url, match) =>
        (await service.executions(migrationIdOf(match[1] ?? ""))).map(executionJson),
    },
    { pattern: /^\/executions\/([^/]+)\/logs$/, method: "GET", handle: logs },
    { pattern: /^\/migrations\/executions\/([^/]+)\/logs$/, method: "GET", handle: logs },
  ];
  return {
    matches: (path) => path === basePath || path.startsWith(`${basePath}/`),
    async handle(req, res, path) {
      const url = new URL(req.url ?? "/", "http://localhost");
      const rest = path.slice(basePath.length);
      if (rest === "/openapi.json") {
        if (req.method !== "GET") return methodNotAllowed(res, "GET");
        return sendJson(res, 200, options.openApi);
      }
      let decision: AccessDecision;
      try {
        decision = await options.guard(credentialsOf(req));
      } catch (error) {
        // Checking credentials reads the database: its failure is this API's 500, with its error body.
        return sendMigrationsError(res, error, options.logger, `${req.method} ${path}`);
      }
      if (!decision.allowed) {
        const [code, message] =
          ACCESS_ERRORS[decision.status === 401 && decision.refused ? "refused" : decision.status];
        return accessDenied(res, decision, { code, success: false, message }, options.challenge ?? true);
      }
      const matching = routes
        .map((route) => ({ route, match: route.pattern.exec(rest) }))
        .filter((m) => m.match);
      const chosen = matching.find((m) => m.route.method === req.method);
      if (chosen === undefined || chosen.match === null) {
        if (matching.length > 0)
          return methodNotAllowed(res, [...new Set(matching.map((m) => m.route.method))].join(", "));
        return sendError(
          res,
          404,
          "migrations_error",
          "No route was found matching the URL and request method.",
        );
      }
      try {
        sendJson(res, 200, await chosen.route.handle(req, url, chosen.match));
      } catch (error) {
        sendMigrationsError(res, error, options.logger, `${req.method} ${path}`);
      }
    },
  };
}

const ACCESS_ERRORS = {
  401: ["migrations_unauthorized", "Authentication required: use HTTP Basic with an application password."],
  refused: ["migrations_unauthorized", "Invalid e-mail address or application password."],
  403: ["migrations_forbidden", "Sorry, you are not allowed to manage migrations."],
  429: ["migrations_rate_limited", "Too many failed authentication attempts; try again later."],
} as const;

/** The migration id of a path segment; one that no migration could have is a 404. */
function migrationIdOf(segment: string): string {
  const id = decodedSegment(segment);
  if (!MIGRATION_ID.test(id)) throw new NotFoundError(`Migration with ID ${id} not found.`);
  return id;
}

/** A path segment without its percent-encoding (as it is, when that encoding is malformed). */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    // Malformed percent-encoding: keep the raw segment for the message.
    return segment;
  }
}

/** Run/rollback parameters: the JSON (or form) body wins over the query string. */
async function scheduleParams(req: IncomingMessage, url: URL): Promise<ScheduleParams> {
  const merged: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const text = (await readBody(req, MAX_BODY_BYTES)).toString("utf8");
  if (text.trim() !== "") {
    const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    if (type === "application/x-www-form-urlencoded")
      Object.assign(merged, Object.fromEntries(new URLSearchParams(text)));
    else {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new InvalidArgumentError("The request body is not valid JSON.");
      }
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        throw new InvalidArgumentError("The request body must be a JSON object.");
      }
      Object.assign(merged, body);
    }
  }
  return { fromBatch: merged["from-batch"], toBatch: merged["to-batch"], batchSize: merged["batch-size"] };
}

function sendError(res: ServerResponse, status: number, code: string, message: string, headers = {}): void {
  sendJson(res, status, { code, success: false, message }, headers);
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  sendError(res, 405, "migrations_error", "Method not allowed.", { allow });
}

/**
 * Answers an error with its status ({@link httpStatusOf}) and its message; a 500 is logged and says only
 * `Internal server error.`.
 */
function sendMigrationsError(res: ServerResponse, error: unknown, logger: Logger, what: string): void {
  const status = httpStatusOf(error, "migrations");
  if (status === 500) {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    logger.error(`migrations API: ${what} failed: ${detail}`);
  }
  const message =
    status === 500
      ? "Internal server error."
      : status === 413
        ? "The request body is too large."
        : messageOf(error);
  sendError(res, status, "migrations_error", message);
}
