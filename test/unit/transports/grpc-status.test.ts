// Errors become gRPC statuses in one place (style: map errors once, at the transport boundary).
import { Code, ConnectError } from "@connectrpc/connect";
import t from "tap";
import { BackendError, InvalidArgumentError, ServiceError } from "../../../src/errors.js";
import { encodeGrpcMessage, grpcStatusOf } from "../../../src/transports/grpc-status.js";

t.test("statuses: the reference's UNKNOWN, INVALID_ARGUMENT, UNAVAILABLE, INTERNAL", async (t) => {
  t.strictSame(grpcStatusOf(new ServiceError("rate limit domain must not be empty")), {
    code: Code.Unknown,
    message: "rate limit domain must not be empty",
  });
  t.strictSame(grpcStatusOf(new InvalidArgumentError("bad")), { code: Code.InvalidArgument, message: "bad" });
  const backend = new BackendError(
    "redis redis://*****@10.0.0.7:6379: no connection is up: connect ECONNREFUSED 10.0.0.7:6379",
    { clientMessage: "redis: connection refused" },
  );
  t.strictSame(
    grpcStatusOf(backend),
    { code: Code.Unavailable, message: "redis: connection refused" },
    "a backend failure shows clients its short text, never the address",
  );
  t.strictSame(grpcStatusOf(new ConnectError("gone", Code.NotFound)), {
    code: Code.NotFound,
    message: "gone",
  });
  t.strictSame(grpcStatusOf(new TypeError("boom")), { code: Code.Internal, message: "boom" });
});

t.test("grpc-message percent-encoding (gRPC over HTTP/2 spec)", async (t) => {
  t.equal(encodeGrpcMessage("plain text, (ok) ~!"), "plain text, (ok) ~!");
  t.equal(encodeGrpcMessage("100% é\n\t"), "100%25 %C3%A9%0A%09");
  t.equal(encodeGrpcMessage("\u007f"), "%7F");
});
