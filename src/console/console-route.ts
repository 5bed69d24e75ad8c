import type { IncomingMessage, ServerResponse } from "node:http";
import type { AccessDecision, AccessGuard } from "../auth/authenticator.js";
import { usersRefusalText } from "../auth/users-access.js";
import { messageOf } from "../errors.js";
import { accessDenied, credentialsOf } from "../transports/http/access-responses.js";
import { sendJson } from "../transports/http/http-responses.js";
import type { HttpRoute } from "../transports/http/http-route.js";
import type { ConsoleBundle } from "./console-assets.js";
import type { ConsoleSession, Overview, RulesAnswer } from "./console-contract.js";
import { CONSOLE_HEADERS } from "./console-headers.js";
import { CROSS_SITE_REFUSED, isCrossSite } from "./cross-site-guard.js";
import type { LiveStream } from "./live-stream.js";

/** The console's pages: each path serves the same HTML, whose script draws the page the path names. */
export const CONSOLE_PAGES = [
  "/console",
  "/console/rules",
  "/console/explain",
  "/console/users",
  "/console/migrations",
];

/** Options of {@link consoleRoute}. */
export interface ConsoleRouteOptions {
  readonly bundle: ConsoleBundle;
  readonly overview: () => Overview;
  /** The Rules JSON, filtered by `?q=`. */
  readonly rules: (query: string) => RulesAnswer;
  readonly live: LiveStream;
  /** Checks credentials for `manage_options` (the migrations API's authenticator and throttle). */
  readonly guard: AccessGuard;
  /** The users and migrations APIs mounted under `/console/api`, credentials always required. */
  readonly management: readonly HttpRoute[];
  /** Where a failure to check credentials (the database) is logged; the page gets `500 server error`. */
  readonly logError: (line: string) => void;
}

/**
 * Everything under `/console` on the debug port (README "Operator console"): the pages, the bundle, the
 * read-only API (`overview`, `rules`, `events`), `session`, and the users and migrations APIs. Requests that
 * change state are refused when they may come from another site; every answer carries the console's
 * Content-Security-Policy and friends.
 */
export function consoleRoute(options: ConsoleRouteOptions): HttpRoute {
  const pages = new Set(CONSOLE_PAGES);
  return {
    matches: (path) => path === "/console" || path.startsWith("/console/"),
    async handle(req, res, path) {
      for (const [name, value] of Object.entries(CONSOLE_HEADERS)) res.setHeader(name, value);
      if (pages.has(path)) return page(req, res, options.bundle);
      if (path.startsWith("/console/assets/")) return asset(req, res, options.bundle, path.slice(16));
      if (!path.startsWith("/console/api/")) return sendJson(res, 404, { error: "Not found" });
      if (isCrossSite(req)) return sendJson(res, 403, { error: CROSS_SITE_REFUSED });
      switch (path) {
        case "/console/api/overview":
          return readOnly(req, res, options.overview);
        case "/console/api/rules":
          return readOnly(req, res, () => options.rules(queryOf(req, "q")));
        case "/console/api/events":
          return options.live.handle(req, res);
        case "/console/api/session":
          return session(req, res, options);
      }
      const route = options.management.find((r) => r.matches(path));
      if (route !== undefined) return route.handle(req, res, path);
      sendJson(res, 404, { error: "Not found" });
    },
  };
}

function page(req: IncomingMessage, res: ServerResponse, bundle: ConsoleBundle) {
  if (req.method !== "GET" && req.method !== "HEAD") return methodNotAllowed(res, "GET, HEAD");
  if (!bundle.ok) return sendJson(res, 503, { error: bundle.reason });
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(bundle.html),
  });
  res.end(req.method === "HEAD" ? undefined : bundle.html);
}

function asset(req: IncomingMessage, res: ServerResponse, bundle: ConsoleBundle, name: string) {
  const file = bundle.ok ? bundle.assets.get(name) : undefined;
  if (file === undefined) return sendJson(res, 404, { error: "Not found" });
  if (req.method !== "GET" && req.method !== "HEAD") return methodNotAllowed(res, "GET, HEAD");
  const gzip = /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
  const body = gzip ? file.gzipped : file.body;
  res.writeHead(200, {
    "content-type": file.contentType,
    "content-length": body.length,
    // The name carries a hash of the content: it never changes under this name.
    "cache-control": "public, max-age=31536000, immutable",
    vary: "accept-encoding",
    ...(gzip ? { "content-encoding": "gzip" } : {}),
  });
  res.end(req.method === "HEAD" ? undefined : body);
}

function readOnly(req: IncomingMessage, res: ServerResponse, read: () => unknown) {
  if (req.method !== "GET") return methodNotAllowed(res, "GET");
  sendJson(res, 200, read());
}

/** `POST /console/api/session`: whether the credentials may manage (the sign-in form's check). */
async function session(
  req: IncomingMessage,
  res: ServerResponse,
  { guard, logError }: Pick<ConsoleRouteOptions, "guard" | "logError">,
): Promise<void> {
  if (req.method !== "POST") return methodNotAllowed(res, "POST");
  let decision: AccessDecision;
  try {
    decision = await guard(credentialsOf(req));
  } catch (error) {
    // Checking credentials reads the database: its failure is logged here, the page gets the APIs' text.
    logError(`POST /console/api/session failed: ${messageOf(error)}`);
    return sendJson(res, 500, { error: "server error" });
  }
  if (!decision.allowed)
    return accessDenied(
      res,
      decision,
      { error: usersRefusalText({ ...decision, because: "required" }) },
      false,
    );
  const { userId, email, capabilities } = decision.principal;
  const answer: ConsoleSession = { userId, email, capabilities: [...capabilities].sort() };
  sendJson(res, 200, answer);
}

/** A query parameter's value, `""` when absent. */
function queryOf(req: IncomingMessage, name: string): string {
  return new URL(req.url ?? "/", "http://localhost").searchParams.get(name) ?? "";
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  sendJson(res, 405, { error: "Method not allowed" }, { allow });
}
