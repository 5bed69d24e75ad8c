import { sessionToken, signOut } from "./session";

/** A failed call: the HTTP status and the server's error text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  /** Basic token to send instead of the session's (the sign-in call). */
  token?: string;
  /** Send the session's credentials (Users and Migrations). */
  signedIn?: boolean;
}

/**
 * Calls the console's API. Every call that is not a GET carries `X-Ratelimitd-Console: 1` and a JSON body
 * (`{}` when empty): the server refuses it otherwise as cross-site. A signed-in call answered 401 ends the
 * session, so the sign-in form comes back with the server's text.
 */
export async function callApi<T>(path: string, options: CallOptions = {}): Promise<T> {
  const method = options.method ?? "GET";
  const headers: Record<string, string> = {};
  const token = options.token ?? (options.signedIn ? sessionToken() : null);
  if (token !== null) headers.Authorization = `Basic ${token}`;
  let body: string | undefined;
  if (method !== "GET" && method !== "HEAD") {
    headers["X-Ratelimitd-Console"] = "1";
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.body ?? {});
  }
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body, credentials: "same-origin" });
  } catch {
    throw new ApiError(0, "The daemon cannot be reached.");
  }
  const text = await response.text();
  if (!response.ok) {
    const error = new ApiError(response.status, errorText(text, response));
    if (response.status === 401 && options.signedIn && options.token === undefined) signOut(error.message);
    throw error;
  }
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

/** The users API answers `{"error"}`, the migrations API `{"message"}`; anything else shows the status. */
function errorText(text: string, response: Response): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown };
    if (typeof parsed.error === "string") return parsed.error;
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // Not JSON: fall through to the status line.
  }
  return `${response.status} ${response.statusText || "error"}`.trim();
}

/** The message of anything thrown by a call. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
