/**
 * The end-to-end decision cases over gRPC, through a client generated from Envoy's own rls.proto: counting,
 * unknown domains, unmatched descriptors, unlimited rules, error codes and texts. Run once per backend: the
 * answers must be identical.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import type { Test } from "tap";
import {
  RateLimitRequestSchema,
  RateLimitResponseSchema,
} from "../../src/gen/envoy/service/ratelimit/v3/rls_pb.js";
import {
  HealthCheckRequestSchema,
  HealthCheckResponseSchema,
} from "../../src/gen/grpc/health/v1/health_pb.js";
import { type DaemonProcess, startDaemon } from "../helpers/daemon-process.js";
import { envoyRlsClient } from "../helpers/envoy-rls-client.js";
import { grpcRaw, grpcUnary } from "../helpers/grpc-unary-client.js";
import { stayInsideWindow } from "../helpers/window-guard.js";

const RULES = `domain: e2e
descriptors:
  - key: k
    value: twenty
    rate_limit: { unit: minute, requests_per_unit: 20 }
  - key: k
    value: hundred
    rate_limit: { unit: hour, requests_per_unit: 100 }
  - key: k
    value: free
    rate_limit: { unlimited: true }
  - key: banned
    rate_limit: { name: banned_limit, unit: minute, requests_per_unit: 0 }
`;

const descriptor = (key: string, value: string) => ({ entries: [{ key, value }] });
const RLS = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

/** Starts a daemon with `env` (backend settings) and runs every case against it. */
export async function decisionCases(t: Test, env: Record<string, string>): Promise<DaemonProcess> {
  const dir = t.testdir({ config: { "rules.yaml": RULES } });
  const daemon = await startDaemon({ ...env, RUNTIME_ROOT: dir });
  const address = `127.0.0.1:${daemon.grpcPort}`;
  const client = envoyRlsClient(address);
  t.teardown(async () => {
    client.close();
    await daemon.stop();
  });

  t.test("a 20/minute rule: 20 × OK with 19…0 remaining, then OVER_LIMIT with 0", async (t) => {
    await stayInsideWindow(60);
    for (let i = 1; i <= 20; i++) {
      const response = await client.shouldRateLimit({
        domain: "e2e",
        descriptors: [descriptor("k", "twenty")],
      });
      const status = response.statuses[0]!;
      t.equal(response.overall_code, "OK", `request ${i} overall`);
      t.equal(status.code, "OK", `request ${i} code`);
      t.equal(status.limit_remaining ?? 0, 20 - i, `request ${i} remaining`);
      t.strictSame(status.current_limit, { requests_per_unit: 20, unit: "MINUTE" });
      const reset = Number(status.duration_until_reset?.seconds);
      t.ok(reset >= 1 && reset <= 60, `duration_until_reset ${reset} within the minute`);
    }
    const over = await client.shouldRateLimit({ domain: "e2e", descriptors: [descriptor("k", "twenty")] });
    t.equal(over.overall_code, "OVER_LIMIT");
    t.equal(over.statuses[0]!.code, "OVER_LIMIT");
    t.equal(over.statuses[0]!.limit_remaining ?? 0, 0);
  });

  t.test("unknown domain and unmatched descriptor: a status with only code OK", async (t) => {
    const unknown = await client.shouldRateLimit({
      domain: "nope",
      descriptors: [descriptor("k", "twenty")],
    });
    t.strictSame(unknown, { overall_code: "OK", statuses: [{ code: "OK" }] });
    const unmatched = await client.shouldRateLimit({
      domain: "e2e",
      descriptors: [descriptor("other", "x")],
    });
    t.strictSame(unmatched.statuses, [{ code: "OK" }]);
  });

  t.test("unlimited: limit_remaining 4294967295 and nothing else", async (t) => {
    const response = await client.shouldRateLimit({ domain: "e2e", descriptors: [descriptor("k", "free")] });
    t.strictSame(response.statuses, [{ code: "OK", limit_remaining: 4294967295 }]);
  });

  t.test("requests_per_unit 0 blocks and reports the rule name", async (t) => {
    const response = await client.shouldRateLimit({
      domain: "e2e",
      descriptors: [descriptor("banned", "x")],
    });
    t.equal(response.overall_code, "OVER_LIMIT");
    t.strictSame(response.statuses[0]!.current_limit, { name: "banned_limit", unit: "MINUTE" });
  });

  t.test("reference errors: UNKNOWN with the reference's text", async (t) => {
    await t.rejects(client.shouldRateLimit({ domain: "", descriptors: [descriptor("k", "twenty")] }), {
      code: 2,
      details: "rate limit domain must not be empty",
    });
    await t.rejects(client.shouldRateLimit({ domain: "e2e", descriptors: [] }), {
      code: 2,
      details: "rate limit descriptor list must not be empty",
    });
  });

  t.test("an override with unit UNKNOWN is INVALID_ARGUMENT, not a crash", async (t) => {
    const request = {
      domain: "e2e",
      descriptors: [{ ...descriptor("k", "twenty"), limit: { requests_per_unit: 5, unit: "UNKNOWN" } }],
    };
    await t.rejects(client.shouldRateLimit(request), {
      code: 3,
      details: "descriptor 0: rate limit override has invalid unit UNKNOWN (0)",
    });
    const ok = await client.shouldRateLimit({ domain: "e2e", descriptors: [descriptor("k", "free")] });
    t.equal(ok.overall_code, "OK", "still serving");
  });

  t.test("per-descriptor hits_addend (absent from the npm copy of Envoy's protos)", async (t) => {
    await stayInsideWindow(3600);
    const ask = (hits: bigint | undefined) =>
      grpcUnary(address, RLS, RateLimitRequestSchema, RateLimitResponseSchema, {
        domain: "e2e",
        hitsAddend: 3,
        descriptors: [{ entries: [{ key: "k", value: "hundred" }], hitsAddend: hits }],
      });
    t.equal(
      (await ask(5n)).statuses[0]!.limitRemaining,
      95,
      "descriptor addend 5 wins over request addend 3",
    );
    t.equal((await ask(0n)).statuses[0]!.limitRemaining, 95, "0 checks without counting");
    t.equal((await ask(undefined)).statuses[0]!.limitRemaining, 92, "request addend 3 applies");
  });

  t.test("malformed requests never crash the daemon", async (t) => {
    const garbage = await grpcRaw(address, RLS, Buffer.from([0xff, 0xff, 0xff, 0x0f, 0x12, 0x99]));
    t.match(garbage, { code: 3, details: /^grpc: error unmarshalling request/ });
    // domain "rl" + 0xff: proto3 strings are UTF-8 (grpc-go refuses this message too).
    const notUtf8 = await grpcRaw(address, RLS, Buffer.from([0x0a, 0x03, 0x72, 0x6c, 0xff]));
    t.match(notUtf8, {
      code: 3,
      details: "grpc: error unmarshalling request: The encoded data was not valid for encoding utf-8",
    });
    const huge = await grpcRaw(address, RLS, Buffer.alloc(5 * 1024 * 1024, 0x0a));
    t.match(huge, { code: 8, details: /larger than max/ });
    // MAX_DESCRIPTORS_PER_REQUEST (256) and MAX_DESCRIPTOR_ENTRY_BYTES (8192) by default.
    const descriptors = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ entries: [{ key: "k", value: `v${i}` }] }));
    const most = create(RateLimitRequestSchema, { domain: "e2e", descriptors: descriptors(256) });
    const mostReply = await grpcUnary(address, RLS, RateLimitRequestSchema, RateLimitResponseSchema, most);
    t.equal(mostReply.statuses.length, 256);
    const many = create(RateLimitRequestSchema, { domain: "e2e", descriptors: descriptors(5000) });
    t.match(await grpcRaw(address, RLS, Buffer.from(toBinary(RateLimitRequestSchema, many))), {
      code: 3,
      details: "rate limit request has more than 256 descriptors",
    });
    const bigValue = create(RateLimitRequestSchema, {
      domain: "e2e",
      descriptors: [{ entries: [{ key: "k", value: "x".repeat(1024 * 1024) }] }],
    });
    t.match(await grpcRaw(address, RLS, Buffer.from(toBinary(RateLimitRequestSchema, bigValue))), {
      code: 3,
      details: "descriptor 0 entry 0: value is longer than 8192 bytes",
    });
    const after = await client.shouldRateLimit({ domain: "e2e", descriptors: [descriptor("k", "free")] });
    t.equal(after.overall_code, "OK", "still serving after all of that");
    t.equal(daemon.child.exitCode, null);
  });

  t.test("grpc.health.v1: ratelimit and '' SERVING, unknown NOT_FOUND", async (t) => {
    const check = (service: string) =>
      grpcUnary(
        address,
        "/grpc.health.v1.Health/Check",
        HealthCheckRequestSchema,
        HealthCheckResponseSchema,
        {
          service,
        },
      );
    t.equal((await check("ratelimit")).status, 1);
    t.equal((await check("")).status, 1);
    await t.rejects(check("nope"), { code: 5 });
  });
  return daemon;
}
