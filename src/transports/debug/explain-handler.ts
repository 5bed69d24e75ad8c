import type { IncomingMessage, ServerResponse } from "node:http";
import { fromJsonString, toJson } from "@bufbuild/protobuf";
import type { DecisionEntry } from "../../engine/decision-request.js";
import { BackendError, messageOf } from "../../errors.js";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../gen/envoy/service/ratelimit/v3/rls_pb.js";
import type { DecisionExplainer } from "../../service/decision-explainer.js";
import type { ExplainStatusJson, Explanation, ExplanationJson } from "../../service/explanation.js";
import { readBody } from "../http/http-responses.js";
import { httpStatusOf } from "../http-status.js";
import { MAX_MESSAGE_BYTES } from "../message-limits.js";
import { rateLimitResponseFromDecision } from "../rate-limit-response.js";

/**
 * `POST /explain` on the debug port (README "Explain a decision"): the `/json` body in, the explanation out
 * as JSON, each descriptor's `status` and the `overallCode` exactly as `/json` would render them now. A
 * body that does not parse or a request the service refuses is `400 {"error": …}`, a failing counter store
 * `503 {"error": …}` (its short reason, as clients see it), any other method `405`.
 */
export function explainHandler(explainer: DecisionExplainer) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      return sendJson(res, 405, { error: "use POST with a /json request body" });
    }
    let explanation: Explanation;
    try {
      const text = (await readBody(req, MAX_MESSAGE_BYTES)).toString("utf8");
      explanation = await explainer.explain(fromJsonString(RateLimitRequestSchema, text));
    } catch (error) {
      // A failing store's short reason, as clients see it (no address).
      const text = error instanceof BackendError ? error.clientMessage : messageOf(error);
      return sendJson(res, httpStatusOf(error, "explain"), { error: text });
    }
    sendJson(res, 200, rendered(explanation));
  };
}

/** The explanation as JSON, with the decision rendered as `/json` renders it. */
function rendered(explanation: Explanation): ExplanationJson {
  const response = toJson(RateLimitResponseSchema, rateLimitResponseFromDecision(explanation.decision)) as {
    overallCode?: string;
    statuses?: ExplainStatusJson[];
  };
  return {
    domain: explanation.domain,
    overallCode: response.overallCode ?? "UNKNOWN",
    rules: explanation.rules,
    store: explanation.store,
    descriptors: explanation.descriptors.map((descriptor, i) => ({
      entries: descriptor.entries.map(plainEntry),
      hits: descriptor.hits,
      search: descriptor.search.map((level) => ({ ...level, entry: plainEntry(level.entry) })),
      rule: descriptor.rule,
      origin: descriptor.origin,
      override: descriptor.override,
      replaced: descriptor.replaced,
      unlimited: descriptor.unlimited,
      shadowMode: descriptor.shadowMode,
      quotaMode: descriptor.quotaMode,
      why: descriptor.why,
      limits: descriptor.limits,
      status: response.statuses?.[i] ?? {},
    })),
  };
}

const plainEntry = (entry: DecisionEntry) => ({ key: entry.key, value: entry.value });

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body, null, 2)}\n`;
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "x-content-type-options": "nosniff",
  });
  res.end(text);
}
