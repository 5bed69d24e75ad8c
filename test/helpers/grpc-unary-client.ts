import {
  create,
  type DescMessage,
  fromBinary,
  type MessageInitShape,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";

/**
 * One unary call over @grpc/grpc-js with ratelimitd's generated schemas — for messages Envoy's npm protos
 * cannot express (per-descriptor hits_addend, WEEK) and for grpc.health.v1.
 */
export function grpcUnary<I extends DescMessage, O extends DescMessage>(
  address: string,
  path: string,
  input: I,
  output: O,
  request: MessageInitShape<I>,
): Promise<MessageShape<O>> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise<MessageShape<O>>((resolve, reject) => {
    client.makeUnaryRequest(
      path,
      (message: MessageShape<I>) => Buffer.from(toBinary(input, message)),
      (bytes: Buffer) => fromBinary(output, bytes),
      create(input, request),
      (error, response) => (error ? reject(error) : resolve(response!)),
    );
  }).finally(() => client.close());
}

/** Sends raw bytes as the request message of `path` and resolves with the gRPC error or the raw reply. */
export function grpcRaw(address: string, path: string, body: Buffer): Promise<grpc.ServiceError | Buffer> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    "grpc.max_send_message_length": 64 * 1024 * 1024,
  });
  return new Promise<grpc.ServiceError | Buffer>((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      (error, response) => resolve(error ?? response!),
    );
  }).finally(() => client.close());
}
