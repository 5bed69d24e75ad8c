import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { SettingSpec } from "../settings/setting-spec.js";
import { SETTINGS_TABLE } from "../settings/settings-table.js";

/** The settings `ratelimitd --help` shows, in this order: the ones nearly every deployment sets. */
const MOST_USED = [
  "BACKEND_TYPE",
  "REDIS_SOCKET_TYPE",
  "REDIS_URL",
  "MEMCACHE_HOST_PORT",
  "CONFIG_TYPE",
  "RUNTIME_ROOT",
  "RUNTIME_SUBDIRECTORY",
  "RUNTIME_APPDIRECTORY",
  "RUNTIME_WATCH_ROOT",
  "PORT",
  "GRPC_PORT",
  "DEBUG_PORT",
  "LOG_LEVEL",
  "LOG_FORMAT",
  "USE_STATSD",
  "DATABASE_URL",
] as const;

/**
 * The settings page shipped with the package (`docs` is in package.json's `files`), which holds every
 * setting's table: two folders up from `src/cli/`, three from the built `dist/src/cli/`.
 */
export function settingsPagePath(): string {
  const candidates = ["../../docs/settings.md", "../../../docs/settings.md"].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  return candidates.find((path) => existsSync(path)) ?? candidates[1]!;
}

/**
 * `ratelimitd --help`: what the daemon is, where its settings come from, the most used ones with their
 * defaults (read from the settings table, so they cannot drift), and where every setting is described.
 */
export function daemonUsage(): string {
  const specs: SettingSpec<unknown>[] = Object.values(SETTINGS_TABLE);
  const rows = MOST_USED.map((env) => {
    const spec = specs.find((candidate) => candidate.env === env);
    if (spec === undefined) throw new Error(`${env} is not in the settings table`);
    return [env, defaultText(spec), spec.description] as const;
  });
  return [
    "Usage: ratelimitd [-h | --help]",
    "",
    "ratelimitd is an Envoy-compatible rate-limit service, a drop-in replacement for envoyproxy/ratelimit:",
    "it answers ShouldRateLimit over gRPC (and Connect, gRPC-Web), /json and /healthcheck over HTTP, and",
    "/rlconfig, /stats and /metrics on its debug port. It runs until SIGTERM, SIGINT or SIGHUP.",
    "",
    "It takes no arguments: every setting is an environment variable, with the reference's names and",
    "defaults (e.g. PORT=9090 ratelimitd). From a checkout, `npm start` adds the local defaults of",
    "config/local.env (memory backend, example rules); `node --env-file=<file> dist/cmd/ratelimitd.js`",
    "reads a file of your own. Invalid settings are all reported at once, and the daemon exits 1.",
    "",
    "Most used settings, with their defaults:",
    ...rows.flatMap(([name, value, description]) => [`  ${name}=${value}`, `      ${description}`]),
    "",
    `Every setting, with its default and meaning: ${settingsPagePath()}`,
    "",
  ].join("\n");
}

/** How a default reads in the usage: the table's text, or the type's zero value when that is empty. */
function defaultText(spec: SettingSpec<unknown>): string {
  if (spec.defaultText !== "") return spec.defaultText;
  if (typeof spec.zero === "boolean") return "false";
  if (typeof spec.zero === "number") return "0";
  return "";
}
