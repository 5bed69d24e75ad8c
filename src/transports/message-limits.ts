/**
 * The largest request message any transport takes, in bytes: gRPC's default maximum receive message size
 * (4 MiB, as grpc-go's server). The gRPC fast path refuses a larger message from its length prefix,
 * ShouldRateLimit over connect-node (compressed gRPC, gRPC-Web, Connect) is held to it, decompressed
 * included, before decoding (grpc/early-request-limits.ts), connect-node gets it as `readMaxBytes` for
 * every other method, and `/json` and `POST /explain` read bodies up to it.
 */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
