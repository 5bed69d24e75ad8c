#!/usr/bin/env node
/**
 * ratelimit-xds-server: an xDS (ADS, state of the world) management server for ratelimitd's
 * CONFIG_TYPE=GRPC_XDS_SOTW, serving the YAML rule files of a directory — one resource per file — and
 * pushing a new version whenever they change. For trying xDS without another project, and for tests.
 *   ratelimit-xds-server -config_dir config/ratelimit/config [-port 18000] [-host 127.0.0.1]
 */
import { dropOutputOnceClosed } from "../src/cli/closed-output.js";
import { type FlagSpec, parseGoFlags, usageText } from "../src/cli/go-flags.js";
import { RulesWatcher } from "../src/config/file/rules-watcher.js";
import { messageOf } from "../src/errors.js";
import { RulesManagementServer } from "../src/xds-server/rules-management-server.js";
import { rulesSnapshotFrom } from "../src/xds-server/rules-snapshot.js";

const specs: FlagSpec[] = [
  { name: "config_dir", usage: "directory of YAML rule files to serve" },
  { name: "port", usage: "port to listen on", defaultValue: "18000" },
  { name: "host", usage: "address to listen on", defaultValue: "127.0.0.1" },
  { name: "tls_cert", usage: "server certificate file (enables TLS)" },
  { name: "tls_key", usage: "server key file" },
  { name: "tls_client_ca", usage: "CA file: require client certificates signed by it (mTLS)" },
];
dropOutputOnceClosed();
const parsed = parseGoFlags(process.argv.slice(2), specs);
if (!parsed.ok || parsed.values.config_dir === "") {
  if (parsed.ok) process.stderr.write("-config_dir is required\n");
  else if (!parsed.help) process.stderr.write(`${parsed.message}\n`);
  process.stderr.write(usageText("ratelimit-xds-server", specs));
  process.exit(parsed.ok || !parsed.help ? 2 : 0);
}
const v = parsed.values as Record<string, string>;
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);

const server = new RulesManagementServer((request) => {
  if (request.errorMessage)
    log(`node ${request.nodeId} NACKed nonce ${request.responseNonce}: ${request.errorMessage}`);
  else if (request.responseNonce) log(`node ${request.nodeId} ACKed version ${request.versionInfo}`);
  else log(`node ${request.nodeId} subscribed`);
});
let version = 0;
const publish = async () => {
  try {
    const { resources, warnings } = await rulesSnapshotFrom(v.config_dir!);
    for (const warning of warnings) log(`warning: ${warning}`);
    server.setSnapshot(String(++version), resources);
    log(`serving version ${version}: ${resources.map((r) => r.name).join(", ") || "no resources"}`);
  } catch (error) {
    const { code, path } = error as NodeJS.ErrnoException;
    if (code === "ENOENT" && path === v.config_dir) {
      log(
        `not publishing: config directory ${v.config_dir} does not exist; publishing again once it is created`,
      );
    } else log(`not publishing: ${messageOf(error)}`);
  }
};
await publish();
const tls = v.tls_cert
  ? {
      certFile: v.tls_cert,
      keyFile: v.tls_key ?? "",
      caFile: v.tls_client_ca || undefined,
      requireClientCert: !!v.tls_client_ca,
    }
  : undefined;
const port = await server.listen(v.host!, Number(v.port), tls);
log(`xDS management server listening on ${v.host}:${port}`);
// The daemon's watcher for RUNTIME_WATCH_ROOT=false: bursts of changes become one publish, and a directory
// that is missing (or removed) is looked for until it appears.
const directory = {
  runtimeRoot: v.config_dir!,
  runtimeSubdirectory: "",
  runtimeAppDirectory: "",
  watchRoot: false,
  ignoreDotfiles: true,
};
await new RulesWatcher(directory, () => void publish()).start();
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
