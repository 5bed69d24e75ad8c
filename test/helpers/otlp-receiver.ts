import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pollUntil } from "./redis-process.js";

/** A span as an OTLP/HTTP JSON export carries it, with attributes flattened to plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** "" for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly resource: Readonly<Record<string, string | number | boolean>>;
}

/** An in-test OTLP/HTTP trace collector on a free loopback port (`POST /v1/traces`, JSON encoding). */
export interface OtlpReceiver {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` for the daemon. */
  readonly endpoint: string;
  /** Every span received so far, in arrival order. */
  readonly spans: ReceivedSpan[];
  /** Content types of the export requests (the exporter's encoding). */
  readonly contentTypes: string[];
  /** Polls until `count` spans satisfy `match`, then returns them. */
  waitForSpans(
    match: (span: ReceivedSpan) => boolean,
    count: number,
    timeoutMs?: number,
  ): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type Attribute = { key: string; value: Record<string, unknown> };

/** Starts the collector; answers every export with an empty success body. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      contentTypes.push(req.headers["content-type"] ?? "");
      if (req.url === "/v1/traces")
        spans.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    waitForSpans: (match, count, timeoutMs = 10_000) =>
      pollUntil(
        `${count} matching spans`,
        async () => {
          const found = spans.filter(match);
          return found.length >= count ? found : undefined;
        },
        { timeoutMs },
      ),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: an OTLP JSON document, checked field by field below
function spansOf(document: any): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of document.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes ?? []);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? "",
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes ?? []),
          statusCode: span.status?.code ?? 0,
          resource,
        });
      }
    }
  }
  return spans;
}

function attributesOf(list: Attribute[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list) {
    if ("stringValue" in value) out[key] = String(value.stringValue);
    else if ("intValue" in value) out[key] = Number(value.intValue);
    else if ("doubleValue" in value) out[key] = Number(value.doubleValue);
    else if ("boolValue" in value) out[key] = Boolean(value.boolValue);
  }
  return out;
}
