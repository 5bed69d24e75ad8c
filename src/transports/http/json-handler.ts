import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import { fromJson, fromJsonString, type JsonValue, toJsonString } from "@bufbuild/protobuf";
import { CODE_OK, CODE_OVER_LIMIT } from "../../engine/decision-request.js";
import type { RequestLimits } from "../../engine/request-limits.js";
import { BackendError, messageOf, RatelimitdError } from "../../errors.js";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../gen/envoy/service/ratelimit/v3/rls_pb.js";
import { type JsonResponseEvent, jsonResponse } from "../../observability/request-channels.js";
import type { ThrottledLog } from "../../observability/throttled-log.js";
import type { RateLimitService } from "../../service/rate-limit-service.js";
import { httpStatusOf } from "../http-status.js";
import { countBeyondLimits } from "../json-request-limits.js";
import { MAX_MESSAGE_BYTES } from "../message-limits.js";
import { rateLimitResponseFromDecision } from "../rate-limit-response.js";
import { readBody, sendGoError } from "./http-responses.js";

/**
 * `/json` (any method), exactly as the reference: proto3 JSON in; a body that does not parse, or any
 * service error, is `400 Bad Request`; otherwise 200 (OK), 429 (OVER_LIMIT) or 500 (UNKNOWN) with the
 * response as proto3 JSON. Each failure is logged at warn with the reference's text, `error: <details>`,
 * through `log`: at most a line a second for backend failures and one for bad requests, with counts.
 * Descriptor and entry counts beyond `limits` are refused from the parsed JSON, before protobuf-es builds
 * the message.
 */
export function jsonHandler(service: RateLimitService, log: ThrottledLog, limits: RequestLimits) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let request: ReturnType<typeof fromJsonString<typeof RateLimitRequestSchema>>;
    try {
      const text = (await readBody(req, MAX_MESSAGE_BYTES)).toString("utf8");
      const json = parsedOrUndefined(text);
      if (json === undefined) request = fromJsonString(RateLimitRequestSchema, text);
      else {
        const beyond = countBeyondLimits(json, limits);
        if (beyond !== undefined) throw service.refused(beyond);
        request = fromJson(RateLimitRequestSchema, json);
      }
    } catch (error) {
      log.warn("/json request", () => `error: ${messageOf(error)}`);
      return sendFailure(res, error);
    }
    let json: string;
    let status: number;
    try {
      const response = rateLimitResponseFromDecision(await service.shouldRateLimit(request));
      // Tracing's `NewJsonHandler Remaining Execution` span, as the reference records it.
      if (jsonResponse.hasSubscribers) jsonResponse.publish({ response } satisfies JsonResponseEvent);
      json = toJsonString(RateLimitResponseSchema, response);
      status = response.overallCode === CODE_OK ? 200 : response.overallCode === CODE_OVER_LIMIT ? 429 : 500;
    } catch (error) {
      if (error instanceof BackendError) log.warn("/json backend", () => `error: ${error.message}`);
      else if (error instanceof RatelimitdError) log.warn("/json request", () => `error: ${error.message}`);
      else log.error("/json unexpected", () => `/json: unexpected error: ${(error as Error).stack}`);
      return sendFailure(res, error);
    }
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
    res.end(json);
  };
}

/** Go's `http.Error` with the status {@link httpStatusOf} gives (always `400 Bad Request`, as the reference). */
function sendFailure(res: ServerResponse, error: unknown): void {
  const status = httpStatusOf(error, "json");
  sendGoError(res, status, STATUS_CODES[status] ?? String(status));
}

/** The body as JSON, or undefined when it does not parse (protobuf-es then gives its own error). */
function parsedOrUndefined(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}
