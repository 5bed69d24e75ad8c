// What clients are told of a backend failure: a short reason, never an address or anything from the
// settings (docs/backends.md "Redis"); the details stay in the error's message, for the log.
import t from "tap";
import { clientReasonOf, DetailedFailure, replyReason } from "../../../src/backends/client-reason.js";

const systemError = (code: string, message: string) => Object.assign(new Error(message), { code });

t.test("socket errors: their code in words, without the address in their message", async (t) => {
  t.equal(
    clientReasonOf(systemError("ECONNREFUSED", "connect ECONNREFUSED 10.0.0.7:6379")),
    "connection refused",
  );
  t.equal(clientReasonOf(systemError("ECONNRESET", "read ECONNRESET")), "connection reset");
  t.equal(clientReasonOf(systemError("ENOTFOUND", "getaddrinfo ENOTFOUND redis.internal")), "host not found");
  t.equal(clientReasonOf(systemError("ENOENT", "connect ENOENT /var/run/redis.sock")), "no such socket");
  t.equal(clientReasonOf(systemError("ETIMEDOUT", "connect ETIMEDOUT 10.0.0.7:6379")), "connect timed out");
});

t.test("TLS failures: the code only (some messages name the host)", async (t) => {
  t.equal(
    clientReasonOf(
      systemError(
        "ERR_TLS_CERT_ALTNAME_INVALID",
        "Hostname/IP does not match certificate's altnames: Host: redis.internal.",
      ),
    ),
    "TLS handshake failed (ERR_TLS_CERT_ALTNAME_INVALID)",
  );
  t.equal(
    clientReasonOf(systemError("CERT_HAS_EXPIRED", "certificate has expired")),
    "TLS handshake failed (CERT_HAS_EXPIRED)",
  );
});

t.test("ratelimitd's own failures carry their reason; Redis replies are shown as written", async (t) => {
  const failure = new DetailedFailure("connect to 10.0.0.7:6379 timed out after 300 ms", "connect timed out");
  t.equal(failure.message, "connect to 10.0.0.7:6379 timed out after 300 ms");
  t.equal(clientReasonOf(failure), "connect timed out");
  const reply = Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), {
    name: "ReplyError",
  });
  t.equal(clientReasonOf(reply), "OOM command not allowed when used memory > 'maxmemory'.");
  t.equal(replyReason("MOVED 3999 10.0.0.7:6381"), "MOVED redirection", "a redirection names a node");
  t.equal(replyReason("ASK 3999 10.0.0.7:6381"), "ASK redirection");
});

t.test("anything else: a generic reason rather than an unknown text", async (t) => {
  t.equal(clientReasonOf(new Error("something about 10.0.0.7")), "request failed");
  t.equal(clientReasonOf("a string"), "request failed");
  t.equal(clientReasonOf(undefined), "request failed");
});
