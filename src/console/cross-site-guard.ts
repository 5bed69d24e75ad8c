import type { IncomingMessage } from "node:http";
import { sendJson } from "../transports/http/http-responses.js";
import type { HttpRoute } from "../transports/http/http-route.js";

/** The header the console's page sends with every state-changing call (README "Operator console"). */
export const CONSOLE_REQUEST_HEADER = "x-ratelimitd-console";

/** The body of the 403 a cross-site request gets. */
export const CROSS_SITE_REFUSED = "Cross-site request refused.";

const SAFE_METHODS = new Set(["GET", "HEAD"]);

/**
 * Whether a console API request may have been made by another site. Non-GET requests must carry
 * `X-Ratelimitd-Console: 1` — a header no form can send, and one a script of another origin can only send
 * after a CORS preflight, which this daemon never approves — and a JSON body; and the browser must not say
 * it comes from another origin ({@link isFromAnotherOrigin}).
 */
export function isCrossSite(req: IncomingMessage): boolean {
  if (SAFE_METHODS.has(req.method ?? "GET")) return false;
  const { headers } = req;
  if (headers[CONSOLE_REQUEST_HEADER] !== "1") return true;
  const type = headers["content-type"] ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) return true;
  return isFromAnotherOrigin(req);
}

/**
 * Whether a browser says the request comes from a page of another origin: `Sec-Fetch-Site` other than
 * `same-origin`/`none`, or, from a browser too old to send it, an `Origin` that is not this host. Clients
 * that are not browsers send neither.
 */
export function isFromAnotherOrigin(req: IncomingMessage): boolean {
  const { headers } = req;
  const site = headers["sec-fetch-site"];
  // The browser's own verdict, which no page can set, decides when it is there: a TLS proxy in front of
  // the debug port may rewrite `Host`, so comparing `Origin` with it would refuse the console's own page.
  if (site !== undefined) return site !== "same-origin" && site !== "none";
  const origin = headers.origin;
  if (origin === undefined) return false;
  const host = headers.host ?? headers[":authority"];
  return typeof host !== "string" || (origin !== `http://${host}` && origin !== `https://${host}`);
}

/**
 * `handle` for requests browsers make from this origin or that no browser makes (`POST /explain`: curl,
 * ratelimit-client, the console's page); a page of another site gets 403 instead.
 */
export function refusingOtherOrigins(handle: HttpRoute["handle"]): HttpRoute["handle"] {
  return (req, res, path) => {
    if (!isFromAnotherOrigin(req)) return handle(req, res, path);
    sendJson(res, 403, { error: CROSS_SITE_REFUSED });
  };
}
