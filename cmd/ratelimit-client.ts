#!/usr/bin/env node
/**
 * ratelimit-client: sends one ShouldRateLimit request, as the reference's `ratelimit_client`.
 *   ratelimit-client -dial_string localhost:8081 -domain rl -descriptors generic_key=default
 * With -explain, asks the daemon's debug port what that call would be answered, and why (docs/cli.md "ratelimit-client").
 * Exit code 0 when the service answered (OK or OVER_LIMIT; -explain: any explain answer), 1 on a connection or
 * request error, 2 on bad flags.
 */
import { clientFlagEcho } from "../src/cli/client-flag-echo.js";
import { dropOutputOnceClosed } from "../src/cli/closed-output.js";
import { isDebugAddress, runExplain } from "../src/cli/explain-client.js";
import { type FlagSpec, parseGoFlags, usageText } from "../src/cli/go-flags.js";
import {
  isOltpProtocol,
  type OltpProtocol,
  parseDescriptorFlag,
  runClient,
} from "../src/cli/rate-limit-client.js";

const specs: FlagSpec[] = [
  {
    name: "dial_string",
    usage: "url of ratelimit server in <host>:<port> form",
    defaultValue: "localhost:8081",
  },
  { name: "domain", usage: "rate limit configuration domain to query" },
  {
    name: "descriptors",
    usage:
      "descriptor list to query in <key>=<value>,<key>=<value>,... form (repeat for several descriptors)",
    repeated: true,
    validate: (value) => (parseDescriptorFlag(value) ? undefined : "invalid descriptor list"),
  },
  {
    name: "oltp-protocol",
    usage:
      "OTLP protocol for exporting the request's trace span: http, grpc, or empty to disable tracing (endpoint, headers… from the OTEL_EXPORTER_OTLP_* variables)",
    validate: (value) =>
      isOltpProtocol(value) ? undefined : 'invalid otlptrace client protocol, want http, grpc or ""',
  },
  { name: "grpc-use-tls", usage: "use TLS to connect to the server", boolean: true },
  { name: "grpc-server-ca-file", usage: "CA file verifying the server certificate" },
  { name: "grpc-cert-file", usage: "client certificate file (mTLS)" },
  { name: "grpc-key-file", usage: "client key file (mTLS)" },
  { name: "hits_addend", usage: "hits to add (ratelimitd)", defaultValue: "1" },
  {
    name: "timeout",
    usage: "connect and request deadline in milliseconds (ratelimitd)",
    defaultValue: "5000",
  },
  {
    name: "json",
    usage: "print the response as proto3 JSON only; with -explain, the explain answer as JSON (ratelimitd)",
    boolean: true,
  },
  {
    name: "explain",
    usage:
      "explain the decision instead of making it: POST the request to /explain on -debug_addr, counting nothing (ratelimitd)",
    boolean: true,
  },
  {
    name: "debug_addr",
    usage: "the daemon's debug port in <host>:<port> form, for -explain (ratelimitd)",
    defaultValue: "localhost:6070",
    validate: (value) => (isDebugAddress(value) ? undefined : "want <host>:<port>"),
  },
];

dropOutputOnceClosed();
const parsed = parseGoFlags(process.argv.slice(2), specs);
if (!parsed.ok) {
  if (!parsed.help) process.stderr.write(`${parsed.message}\n`);
  process.stderr.write(usageText("ratelimit-client", specs));
  process.exit(parsed.help ? 0 : 2);
}
const v = parsed.values;
const descriptors = (v.descriptors as string[]).map((text) => parseDescriptorFlag(text)!);
const hitsAddend = Number(v.hits_addend);
const timeoutMs = Number(v.timeout);
if (!Number.isInteger(hitsAddend) || hitsAddend < 0 || hitsAddend > 4294967295 || !(timeoutMs > 0)) {
  process.stderr.write("-hits_addend must be an integer in [0, 4294967295] and -timeout a positive number\n");
  process.exit(2);
}
if (v.explain) {
  const explained = await runExplain(
    {
      debugAddress: v.debug_addr as string,
      domain: v.domain as string,
      descriptors,
      hitsAddend,
      timeoutMs,
      json: v.json as boolean,
    },
    (text) => console.log(text),
    (text) => process.stderr.write(`${text}\n`),
  );
  process.exit(explained);
}
if (!v.json) for (const line of clientFlagEcho(v)) console.log(line);
const code = await runClient(
  {
    dialString: v.dial_string as string,
    domain: v.domain as string,
    descriptors,
    hitsAddend,
    useTls: v["grpc-use-tls"] as boolean,
    serverCaFile: v["grpc-server-ca-file"] as string,
    certFile: v["grpc-cert-file"] as string,
    keyFile: v["grpc-key-file"] as string,
    timeoutMs,
    json: v.json as boolean,
    oltpProtocol: v["oltp-protocol"] as OltpProtocol,
  },
  (text) => console.log(text),
);
// An OTLP export still waiting on a collector after the bounded flush must not keep the process alive.
process.exit(code);
