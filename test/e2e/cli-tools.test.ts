// The command-line tools (the reference's src/client_cmd/main.go and src/config_check_cmd/main.go): output,
// -json, exit codes.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { startOtlpGrpcCollector } from "../helpers/otlp-grpc-collector.js";
import { type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.js";
import { runCommand } from "../helpers/run-command.js";

const RULES =
  "domain: cli\ndescriptors:\n  - key: k\n    value: v\n    rate_limit: { unit: day, requests_per_unit: 50 }\n";
const SHOULD_RATE_LIMIT = "envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";

t.test("ratelimit-client", async (t) => {
  const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }) });
  t.teardown(() => daemon.stop());
  const dial = `127.0.0.1:${daemon.grpcPort}`;

  const text = await runCommand("ratelimit-client", [
    "-dial_string",
    dial,
    "-domain",
    "cli",
    "-descriptors",
    "k=v",
  ]);
  t.equal(text.code, 0);
  const lines = text.stdout.trimEnd().split("\n");
  t.strictSame(lines.slice(0, -1), [
    'Flag: --descriptors="[ <key=k, value=v> ] "',
    `Flag: --dial_string="${dial}"`,
    'Flag: --domain="cli"',
    'Flag: --grpc-cert-file=""',
    'Flag: --grpc-key-file=""',
    'Flag: --grpc-server-ca-file=""',
    'Flag: --grpc-use-tls="false"',
    'Flag: --oltp-protocol=""',
  ]);
  t.match(
    lines.at(-1),
    /^response: overall_code:OK statuses:\{code:OK current_limit:\{requests_per_unit:50 unit:DAY\} limit_remaining:49 duration_until_reset:\{seconds:\d+\}\}$/,
  );

  const json = await runCommand("ratelimit-client", [
    "-dial_string",
    dial,
    "-domain",
    "cli",
    "-descriptors",
    "k=v",
    "-descriptors",
    "x=y",
    "-json",
  ]);
  t.equal(json.code, 0);
  const parsed = JSON.parse(json.stdout);
  t.equal(parsed.overallCode, "OK");
  t.equal(parsed.statuses.length, 2, "one status per -descriptors flag");
  t.equal(parsed.statuses[0].limitRemaining, 48);
  t.strictSame(parsed.statuses[1], { code: "OK" });

  const refused = await runCommand("ratelimit-client", [
    "-dial_string",
    dial,
    "-domain",
    "",
    "-descriptors",
    "k=v",
  ]);
  t.equal(refused.code, 1);
  t.match(
    refused.stdout,
    /^request error: rpc error: code = Unknown desc = rate limit domain must not be empty$/m,
  );
});

t.test(
  "ratelimit-client against a closed port fails at once with grpc-go's 'connection refused'",
  async (t) => {
    // A deadline of 10 minutes: a client waiting for it would time the test out, so the test passing shows
    // it failed at once, as the reference's client does (it makes the call without waiting for a connection).
    for (const [dial, address] of [
      ["127.0.0.1:1", "127.0.0.1:1"],
      ["[::1]:1", "[::1]:1"],
    ]) {
      const down = await runCommand("ratelimit-client", [
        "-dial_string",
        dial!,
        "-domain",
        "cli",
        "-descriptors",
        "k=v",
        "-timeout",
        "600000",
      ]);
      t.equal(down.code, 1, `${dial}: exit code`);
      t.equal(down.stderr, "");
      t.equal(
        down.stdout
          .split("\n")
          .filter((line) => !line.startsWith("Flag: "))
          .join("\n"),
        `request error: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp ${address}: connect: connection refused"\n`,
      );
    }
    const json = await runCommand("ratelimit-client", [
      "-dial_string",
      "127.0.0.1:1",
      "-timeout",
      "600000",
      "-json",
    ]);
    t.equal(json.code, 1);
    t.equal(
      json.stdout,
      'request error: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"\n',
      "-json: the same line, without the flag echo",
    );
    const missing = join(t.testdir({}), "missing-ca.pem");
    const tls = await runCommand("ratelimit-client", [
      "-json",
      "-grpc-use-tls",
      "-grpc-server-ca-file",
      missing,
    ]);
    t.equal(tls.code, 1);
    t.equal(tls.stdout, `error connecting: ENOENT: no such file or directory, open '${missing}'\n`);
    t.equal(tls.stderr, "", "an unreadable TLS file is an error, not a crash");
  },
);

t.test("ratelimit-client echoes its flags as the reference's Go %q does", async (t) => {
  const echo = async (...args: string[]) => {
    const run = await runCommand("ratelimit-client", [
      "-dial_string",
      "127.0.0.1:1",
      "-timeout",
      "50",
      ...args,
    ]);
    t.equal(run.code, 1, "nothing listens");
    return run.stdout.split("\n").filter((line) => line.startsWith("Flag: "));
  };
  const several = await echo(
    "-descriptors",
    "a=b,c=d",
    "-descriptors",
    "x=y",
    "-domain",
    'q"\\\t\u0001\u007fé\u00a0',
    "-grpc-use-tls",
  );
  t.strictSame(several, [
    'Flag: --descriptors="[ <key=a, value=b>  <key=c, value=d> ] [ <key=x, value=y> ] "',
    'Flag: --dial_string="127.0.0.1:1"',
    'Flag: --domain="q\\"\\\\\\t\\x01\\x7fé\\u00a0"',
    'Flag: --grpc-cert-file=""',
    'Flag: --grpc-key-file=""',
    'Flag: --grpc-server-ca-file=""',
    'Flag: --grpc-use-tls="true"',
    'Flag: --oltp-protocol=""',
  ]);
  const none = await echo();
  t.equal(none[0], 'Flag: --descriptors=""', "no descriptors: an empty value");
});

t.test("ratelimit-client -oltp-protocol: the call's client span is the parent of the daemon's", async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const daemon = await startDaemon({
    RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }),
    TRACING_ENABLED: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: "50",
  });
  t.teardown(() => daemon.stop());
  const dial = `127.0.0.1:${daemon.grpcPort}`;
  const client = (domain: string, protocol: string, endpoint: string) =>
    runCommand(
      "ratelimit-client",
      ["-dial_string", dial, "-domain", domain, "-descriptors", "k=v", "-oltp-protocol", protocol],
      { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
    );
  const clientSpans = (span: ReceivedSpan) => span.kind === 3;

  const ok = await client("cli", "http", receiver.endpoint);
  t.equal(ok.code, 0);
  t.match(ok.stdout, /^Flag: --oltp-protocol="http"\nresponse: overall_code:OK /m);
  const [sent] = await receiver.waitForSpans(clientSpans, 1);
  t.equal(sent!.name, SHOULD_RATE_LIMIT);
  t.equal(sent!.parentSpanId, "", "a root span");
  t.strictSame(sent!.attributes, {
    "rpc.system": "grpc",
    "rpc.service": "envoy.service.ratelimit.v3.RateLimitService",
    "rpc.method": "ShouldRateLimit",
    "server.address": "127.0.0.1",
    "server.port": daemon.grpcPort,
    "rpc.grpc.status_code": 0,
  });
  t.equal(sent!.statusCode, 0, "status unset");
  t.strictSame(sent!.resource, { "service.name": "RateLimitClient" });
  const [served] = await receiver.waitForSpans(
    (span) => span.kind === 2 && span.traceId === sent!.traceId,
    1,
  );
  t.equal(served!.name, SHOULD_RATE_LIMIT);
  t.equal(served!.parentSpanId, sent!.spanId, "the daemon's server span is the client span's child");
  t.equal(served!.resource["service.name"], "RateLimit");

  const refused = await client("", "http", receiver.endpoint);
  t.equal(refused.code, 1);
  const [failed] = await receiver.waitForSpans(
    (span) => clientSpans(span) && span.traceId !== sent!.traceId,
    1,
  );
  t.equal(failed!.attributes["rpc.grpc.status_code"], 2, "UNKNOWN");
  t.equal(failed!.statusCode, 2, "a client span reports every failure code as an error");

  const collector = await startOtlpGrpcCollector();
  t.teardown(() => collector.close());
  const overGrpc = await client("cli", "grpc", collector.endpoint);
  t.equal(overGrpc.code, 0);
  const exported = await collector.waitForText(SHOULD_RATE_LIMIT);
  t.ok(exported.includes("RateLimitClient"), "-oltp-protocol grpc exports over OTLP/gRPC");
});

t.test("ratelimit-client flag errors exit 2, -h exits 0", async (t) => {
  const bad = await runCommand("ratelimit-client", ["-descriptors", "k=v=w"]);
  t.equal(bad.code, 2);
  t.match(
    bad.stderr,
    /^invalid value "k=v=w" for flag -descriptors: invalid descriptor list\nUsage of ratelimit-client:/,
  );
  const protocol = await runCommand("ratelimit-client", ["-oltp-protocol", "udp"]);
  t.equal(protocol.code, 2);
  t.equal(protocol.stdout, "", "refused before anything is echoed or sent");
  t.match(
    protocol.stderr,
    /^invalid value "udp" for flag -oltp-protocol: invalid otlptrace client protocol, want http, grpc or ""\nUsage of ratelimit-client:/,
  );
  const unknown = await runCommand("ratelimit-client", ["-nope"]);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /^flag provided but not defined: -nope\n/);
  const help = await runCommand("ratelimit-client", ["-h"]);
  t.equal(help.code, 0);
  t.match(
    help.stderr,
    /-dial_string string\n\s+url of ratelimit server in <host>:<port> form \(default "localhost:8081"\)/,
  );
});

t.test("ratelimit-config-check", async (t) => {
  const dir = t.testdir({
    good: { "a.yaml": RULES, "b.yaml": "domain: other\ndescriptors: []\n" },
    bad: { "a.yaml": RULES, "b.yaml": RULES },
    yaml: { "a.yaml": "domain: [oops\n" },
    keys: { "a.yaml": "domain: x\nratelimit: 1\n" },
    nested: { sub: { "a.yaml": RULES } },
    merge: {
      "a.yaml": RULES,
      "b.yaml":
        "domain: cli\ndescriptors:\n  - key: other\n    rate_limit: { unit: day, requests_per_unit: 5 }\n",
    },
  });
  const check = (sub: string, ...flags: string[]) =>
    runCommand("ratelimit-config-check", ["-config_dir", join(dir, sub), ...flags]);

  const good = await check("good");
  t.equal(good.code, 0);
  t.equal(
    good.stdout,
    "checking rate limit configs...\n" +
      `loading config directory: ${join(dir, "good")}\n` +
      `opening config file: ${join(dir, "good", "a.yaml")}\n` +
      `opening config file: ${join(dir, "good", "b.yaml")}\n` +
      "all rate limit configs ok\n",
  );
  const duplicate = await check("bad");
  t.equal(duplicate.code, 1);
  t.match(
    duplicate.stdout,
    `error loading rate limit configs: ${join(dir, "bad", "b.yaml")}: duplicate domain 'cli' in config file\n`,
  );
  const yaml = await check("yaml");
  t.equal(yaml.code, 1, "a YAML error is reported, not a crash");
  t.match(
    yaml.stdout,
    `error loading rate limit configs: ${join(dir, "yaml", "a.yaml")}: error loading config file: yaml: line `,
  );
  const keys = await check("keys");
  t.match(
    keys.stdout,
    `error loading rate limit configs: ${join(dir, "keys", "a.yaml")}: config error, unknown key 'ratelimit'\n`,
  );
  const nested = await check("nested");
  t.equal(nested.code, 1);
  t.match(
    nested.stdout,
    `error reading file ${join(dir, "nested", "sub")}: read ${join(dir, "nested", "sub")}: is a directory\n`,
  );
  const missing = await check("missing");
  t.equal(missing.code, 1);
  t.match(
    missing.stdout,
    `error opening directory ${join(dir, "missing")}: open ${join(dir, "missing")}: no such file or directory\n`,
  );
  t.equal((await check("merge")).code, 1, "same domain twice without merging");
  t.equal((await check("merge", "-merge_domain_configs")).code, 0, "merged");
});

t.test(
  "ratelimit-config-check: an empty directory is a warning, not 'all rate limit configs ok'",
  async (t) => {
    const dir = t.testdir({ empty: {} });
    const empty = await runCommand("ratelimit-config-check", ["-config_dir", join(dir, "empty")]);
    t.equal(empty.code, 0, "nothing invalid");
    t.equal(
      empty.stdout,
      "checking rate limit configs...\n" +
        `loading config directory: ${join(dir, "empty")}\n` +
        `warning: no config files in ${join(dir, "empty")}: nothing to check\n`,
    );
    t.equal(empty.stderr, "");
  },
);

t.test("ratelimit-config-check without -config_dir says the flag is required, exit 2", async (t) => {
  for (const args of [[], ["-config_dir", ""], ["-merge_domain_configs"]]) {
    const run = await runCommand("ratelimit-config-check", args);
    t.equal(run.code, 2, JSON.stringify(args));
    t.equal(run.stdout, "", "nothing checked");
    t.equal(
      run.stderr,
      "-config_dir is required\n" +
        "Usage of ratelimit-config-check:\n" +
        "  -config_dir string\n" +
        "    \tpath to directory containing rate limit configs\n" +
        "  -merge_domain_configs\n" +
        "    \twhether to merge configurations referencing the same domain\n",
    );
  }
});

t.test("ratelimit-config-check: the rule extensions are accepted and their errors reported", async (t) => {
  const extensions =
    "domain: ext\ndescriptors:\n" +
    "  - key: a\n    rate_limit: { unit: minute, requests_per_unit: 60, algorithm: sliding_window }\n" +
    "  - key: b\n    rate_limit: { unit: second, requests_per_unit: 10, algorithm: token_bucket, burst: 50 }\n" +
    "  - key: c\n    rate_limit: { unit: minute, unit_multiplier: 5, requests_per_unit: 100 }\n" +
    "  - key: d\n    rate_limits:\n" +
    "      - { name: per-second, unit: second, requests_per_unit: 20 }\n" +
    "      - { name: per-hour, unit: hour, requests_per_unit: 1000, algorithm: sliding_window }\n";
  const dir = t.testdir({
    good: { "ext.yaml": extensions },
    bad: {
      "ext.yaml":
        "domain: ext\ndescriptors:\n  - key: a\n    value: b\n" +
        "    rate_limit: { unit: minute, requests_per_unit: 60, algorithm: leaky_bucket }\n",
    },
  });
  const good = await runCommand("ratelimit-config-check", ["-config_dir", join(dir, "good")]);
  t.equal(good.code, 0);
  t.equal(
    good.stdout,
    "checking rate limit configs...\n" +
      `loading config directory: ${join(dir, "good")}\n` +
      `opening config file: ${join(dir, "good", "ext.yaml")}\n` +
      "all rate limit configs ok\n",
  );
  const bad = await runCommand("ratelimit-config-check", ["-config_dir", join(dir, "bad")]);
  t.equal(bad.code, 1);
  t.equal(
    bad.stdout,
    "checking rate limit configs...\n" +
      `loading config directory: ${join(dir, "bad")}\n` +
      `opening config file: ${join(dir, "bad", "ext.yaml")}\n` +
      `error loading rate limit configs: ${join(dir, "bad", "ext.yaml")}: rate_limit of 'ext.a_b': ` +
      "unknown algorithm 'leaky_bucket', valid: fixed_window, sliding_window, token_bucket\n",
  );
});

t.test("ratelimit-config-check: the example rules in config/ are valid", async (t) => {
  const examples = fileURLToPath(new URL("../../config/ratelimit/config", import.meta.url));
  const run = await runCommand("ratelimit-config-check", ["-config_dir", examples]);
  t.equal(run.code, 0);
  t.match(run.stdout, "04-beyond-the-reference.yaml\nall rate limit configs ok\n");
});
