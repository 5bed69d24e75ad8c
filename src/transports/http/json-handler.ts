import type { IncomingMessage, ServerResponse } from "node:http";
import { fromJsonString, toJsonString } from "@bufbuild/protobuf";
import { CODE_OK, CODE_OVER_LIMIT } from "../../engine/decision-request.js";
import { RatelimitdError } from "../../errors.js";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../gen/envoy/service/ratelimit/v3/rls_pb.js";
import type { Logger } from "../../observability/logger.js";
import { type JsonResponseEvent, jsonResponse } from "../../observability/request-channels.js";
import type { RateLimitService } from "../../service/rate-limit-service.js";
import { MAX_MESSAGE_BYTES } from "../grpc/grpc-unary.js";
import { rateLimitResponseFromDecision } from "../rate-limit-response.js";
import { readBody, sendGoError } from "./http-responses.js";

/**
 * `/json` (any method), exactly as the reference: proto3 JSON in; a body that does not parse, or any
 * service error, is `400 Bad Request`; otherwise 200 (OK), 429 (OVER_LIMIT) or 500 (UNKNOWN) with the
 * response as proto3 JSON.
 */
export function jsonHandler(service: RateLimitService, logger: Logger) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let request: ReturnType<typeof fromJsonString<typeof RateLimitRequestSchema>>;
    try {
      const body = await readBody(req, MAX_MESSAGE_BYTES);
      request = fromJsonString(RateLimitRequestSchema, body.toString("utf8"));
    } catch (error) {
      if (logger.debugEnabled) logger.debug(`error reading /json request: ${(error as Error).message}`);
      return sendGoError(res, 400, "Bad Request");
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
      if (!(error instanceof RatelimitdError))
        logger.error(`/json: unexpected error: ${(error as Error).stack}`);
      else if (logger.debugEnabled) logger.debug(`/json: ${error.message}`);
      return sendGoError(res, 400, "Bad Request");
    }
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
    res.end(json);
  };
}
