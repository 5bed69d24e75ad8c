import { request } from "node:http";
import { toJsonString } from "@bufbuild/protobuf";
import { RateLimitRequestSchema } from "../gen/envoy/service/ratelimit/v3/rls_pb.js";
import { type ExplainAnswer, explainText } from "./explain-text.js";
import { rateLimitRequestOf } from "./rate-limit-client.js";

/** What `ratelimit-client -explain` asks and where. */
export interface ExplainOptions {
  /** `-debug_addr`: the daemon's debug port as `host:port` (IPv6 in brackets). */
  readonly debugAddress: string;
  readonly domain: string;
  /** One list of [key, value] entries per descriptor. */
  readonly descriptors: readonly (readonly [string, string])[][];
  readonly hitsAddend: number;
  readonly timeoutMs: number;
  /** Print the answer as it came (pretty JSON) instead of the tree. */
  readonly json: boolean;
}

const ADDRESS = /^(?:\[[0-9A-Fa-f:.]+\]|[^:/?#@[\]\s]+):(\d{1,5})$/;

/** Whether a `-debug_addr` value is a `host:port` the client can dial. */
export function isDebugAddress(text: string): boolean {
  const port = ADDRESS.exec(text)?.[1];
  return port !== undefined && Number(port) >= 1 && Number(port) <= 65535;
}

/**
 * POSTs the request the flags describe, as the `/json` body (proto3 JSON), to `/explain` on the debug port
 * and prints the answer: the tree of {@link explainText}, or with `json` the answer itself. A failure is one
 * line on `printError`. Returns the exit code: 0 answered, 1 no answer.
 */
export async function runExplain(
  options: ExplainOptions,
  print: (text: string) => void,
  printError: (text: string) => void,
): Promise<number> {
  const url = `http://${options.debugAddress}/explain`;
  const body = toJsonString(
    RateLimitRequestSchema,
    rateLimitRequestOf(options.domain, options.descriptors, options.hitsAddend),
  );
  let answer: { status: number; text: string };
  try {
    answer = await post(url, body, options.timeoutMs);
  } catch (error) {
    printError(`explain error: POST ${url}: ${(error as Error).message}`);
    return 1;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.text);
  } catch {
    parsed = undefined;
  }
  if (answer.status !== 200) {
    printError(`explain error: POST ${url}: HTTP ${answer.status}: ${errorText(parsed, answer.text)}`);
    return 1;
  }
  if (parsed === null || typeof parsed !== "object") {
    printError(`explain error: POST ${url}: the answer is not a JSON object: ${oneLine(answer.text)}`);
    return 1;
  }
  print(options.json ? JSON.stringify(parsed, null, 2) : explainText(parsed as ExplainAnswer).trimEnd());
  return 0;
}

/** The `{"error": …}` text of a refused request, else the body itself on one line. */
function errorText(parsed: unknown, text: string): string {
  const error = (parsed as { error?: unknown } | undefined)?.error;
  return typeof error === "string" ? error : oneLine(text);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat === "" ? "(empty body)" : flat;
}

// node:http, not fetch: fetch refuses the ports on the WHATWG "bad port" list, and a debug port may be any.
function post(url: string, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      signal: AbortSignal.timeout(timeoutMs),
    });
    req.once("error", (error: Error) =>
      reject(error.name === "TimeoutError" || error.name === "AbortError" ? noAnswer(timeoutMs) : error),
    );
    req.once("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.once("error", reject);
      response.once("end", () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.end(body);
  });
}

function noAnswer(timeoutMs: number): Error {
  return new Error(`no answer within ${timeoutMs} ms`);
}
