import { create } from "@bufbuild/protobuf";
import type { Test } from "tap";
import {
  type RateLimitConfig,
  RateLimitConfigSchema,
} from "../../src/gen/ratelimit/config/ratelimit/v3/rls_conf_pb.js";
import { RulesManagementServer } from "../../src/xds-server/rules-management-server.js";
import { httpRequest } from "./http-request.js";

/** A management server on a free port, closed at the test's teardown. */
export async function startManagementServer(
  t: Test,
): Promise<{ server: RulesManagementServer; port: number }> {
  const server = new RulesManagementServer();
  const port = await server.listen("127.0.0.1", 0);
  t.teardown(() => server.close());
  return { server, port };
}

/** `domain` with one descriptor `key`(_`value`) limited to `requests` per unit (numbers as in the proto). */
export function config(
  name: string,
  domain: string,
  key: string,
  value: string,
  requests: number,
  unit = 2,
): RateLimitConfig {
  return create(RateLimitConfigSchema, {
    name,
    domain,
    descriptors: [{ key, value, rateLimit: { requestsPerUnit: requests, unit } }],
  });
}

/** Settings pointing a daemon at the server, with quick retries. */
export function xdsEnv(port: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CONFIG_TYPE: "GRPC_XDS_SOTW",
    CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${port}`,
    CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: "100ms",
    XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: "100ms",
    XDS_CLIENT_BACKOFF_MAX_INTERVAL: "200ms",
    ...extra,
  };
}

/** Polls `check` every 50 ms until it returns true; fails after `timeoutMs`. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The daemon's /rlconfig text. */
export async function rlconfig(debugPort: number): Promise<string> {
  return (await httpRequest(debugPort, "/rlconfig")).body;
}

/** One counter from the daemon's /stats. */
export async function statValue(debugPort: number, name: string): Promise<number> {
  const body = (await httpRequest(debugPort, "/stats")).body;
  return Number(new RegExp(`^${name.replaceAll(".", "\\.")}: (\\d+)$`, "m").exec(body)?.[1] ?? Number.NaN);
}
