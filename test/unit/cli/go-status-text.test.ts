// ratelimit-client prints a failed call as grpc-go's status error does (the reference's client output).
import t from "tap";
import { goStatusText } from "../../../src/cli/go-status-text.js";

t.test("connection failures read as grpc-go's transport errors", async (t) => {
  const failed = (errno: string, address: string) =>
    goStatusText(
      14,
      `No connection established. Last error: Error: connect ${errno} ${address}. Resolution note: `,
    );
  t.equal(
    failed("ECONNREFUSED", "127.0.0.1:1"),
    'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"',
  );
  t.equal(
    failed("ECONNREFUSED", "::1:8081"),
    'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp [::1]:8081: connect: connection refused"',
    "IPv6 in brackets",
  );
  t.equal(
    failed("EHOSTUNREACH", "10.0.0.9:8081"),
    'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 10.0.0.9:8081: connect: no route to host"',
  );
  t.equal(
    failed("EWHATEVER", "10.0.0.9:8081"),
    "rpc error: code = Unavailable desc = No connection established. Last error: Error: connect EWHATEVER 10.0.0.9:8081. Resolution note: ",
    "an unknown errno keeps grpc-js's words",
  );
});

t.test("other statuses keep their description; a deadline reads as Go's context error", async (t) => {
  t.equal(
    goStatusText(2, "rate limit domain must not be empty"),
    "rpc error: code = Unknown desc = rate limit domain must not be empty",
  );
  t.equal(
    goStatusText(4, "Deadline exceeded after 5.002s,LB pick: 0.001s,remote_addr=127.0.0.1:8081"),
    "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
  );
  t.equal(
    goStatusText(14, "Name resolution failed for target dns:nosuch.invalid:1"),
    "rpc error: code = Unavailable desc = Name resolution failed for target dns:nosuch.invalid:1",
  );
  t.equal(goStatusText(99, "x"), "rpc error: code = Code(99) desc = x");
});
