import * as grpc from "@grpc/grpc-js";
import { pollUntil } from "./redis-process.js";

/** An in-test OTLP/gRPC trace collector on a free loopback port that keeps the raw export bodies. */
export interface OtlpGrpcCollector {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` for an exporter. */
  readonly endpoint: string;
  /**
   * Polls until the export bodies received so far, concatenated, contain `text` (the protobuf body holds
   * span names and attribute values as plain UTF-8 strings), then returns them.
   */
  waitForText(text: string, timeoutMs?: number): Promise<Buffer>;
  close(): void;
}

/** Starts the collector; answers every `TraceService/Export` with an empty success message. */
export async function startOtlpGrpcCollector(): Promise<OtlpGrpcCollector> {
  const bodies: Buffer[] = [];
  const server = new grpc.Server();
  server.register(
    "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
    (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      bodies.push(call.request);
      callback(null, Buffer.alloc(0));
    },
    (message: Buffer) => message,
    (bytes: Buffer) => bytes,
    "unary",
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return {
    endpoint: `http://127.0.0.1:${port}`,
    waitForText: (text, timeoutMs = 10_000) =>
      pollUntil(
        `an OTLP/gRPC export containing ${JSON.stringify(text)}`,
        async () => {
          const all = Buffer.concat(bodies);
          return all.includes(text) ? all : undefined;
        },
        { timeoutMs },
      ),
    close: () => server.forceShutdown(),
  };
}
