import { dirname } from "node:path";
import { type BackendType, DEFAULT_BACKEND } from "../backends/backend-registry.js";
import { SettingsError } from "../errors.js";
import { isValidEmailAddress } from "../users/email-address.js";
import { SETTINGS_TABLE, type TableSettings } from "./settings-table.js";
import { parseNetworkAddress, parseStringMap } from "./value-parsers.js";

/** A DogStatsD "mogrifier": stats whose name matches `pattern` are renamed and tagged. */
export interface DogStatsdMogrifier {
  readonly name: string;
  readonly pattern: RegExp;
  /** Replacement name; `$1`… refer to the pattern's groups. */
  readonly rename: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** Every setting of the process, validated and frozen. Built once by {@link loadSettings}. */
export interface Settings extends TableSettings {
  /** `BACKEND_TYPE` with `""` resolved to the default (`redis`). */
  readonly backend: BackendType;
  /** `CONFIG_GRPC_XDS_NODE_METADATA` parsed (`k1=v1,k2=v2`). */
  readonly xdsNodeMetadataMap: Readonly<Record<string, string>>;
  readonly dogStatsdMogrifiers: readonly DogStatsdMogrifier[];
  /** `PROMETHEUS_ADDR` split as Go's net.Listen reads it: host ("" = every interface) and port. */
  readonly prometheusListen: { readonly host: string; readonly port: number };
  /** Accepted but questionable values, to be logged once at start-up. */
  readonly warnings: readonly string[];
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The other accepted spellings of a variable: `KVSTORE_*` for `REDIS_*`, `ALTCACHE_*` for `MEMCACHE_*`,
 * `GRPC_SERVER_TLS_CA_CERT` for `GRPC_CLIENT_TLS_CACERT` (README, Settings).
 */
export function aliasesOf(env: string): string[] {
  if (env.startsWith("REDIS_")) return [`KVSTORE_${env.slice("REDIS_".length)}`];
  if (env.startsWith("MEMCACHE_")) return [`ALTCACHE_${env.slice("MEMCACHE_".length)}`];
  if (env === "LOCAL_CACHE_SIZE_IN_BYTES") return ["LocalCacheSizeInBytes"];
  // Envoy Gateway sets GRPC_SERVER_TLS_CA_CERT for the CA of the client certificates its Envoys present
  // (the reference reads only GRPC_CLIENT_TLS_CACERT); README, "Use with Envoy Gateway".
  if (env === "GRPC_CLIENT_TLS_CACERT") return ["GRPC_SERVER_TLS_CA_CERT"];
  return [];
}

/**
 * Reads every setting from `env` (the only place that reads the environment). All invalid values are
 * reported together in one {@link SettingsError}, each line naming the variable and the value.
 */
export function loadSettings(env: Env): Settings {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  for (const [field, spec] of Object.entries(SETTINGS_TABLE)) {
    const found = lookup(env, spec.env, problems);
    names[spec.env] = found?.name ?? spec.env;
    const text = found?.text;
    if (text === undefined && spec.defaultText === "") {
      values[field] = spec.zero;
      continue;
    }
    const parsed = (spec.parse as (t: string) => ReturnType<typeof spec.parse>)(text ?? spec.defaultText);
    if (parsed.ok) values[field] = parsed.value;
    else
      problems.push(`invalid setting ${found?.name ?? spec.env}=${JSON.stringify(text)}: ${parsed.reason}`);
  }
  if (problems.length > 0) throw new SettingsError(problems);
  const table = values as unknown as TableSettings;
  const warnings: string[] = [];
  const derived = {
    backend: table.backendType === "" ? DEFAULT_BACKEND : table.backendType,
    xdsNodeMetadataMap: parseNodeMetadata(table.xdsNodeMetadata, problems),
    dogStatsdMogrifiers: table.useDogStatsdMogrifiers.map((name) => readMogrifier(env, name, problems)),
    prometheusListen: parseListenAddress(table.prometheusAddr, table.usePrometheus ? problems : []),
    warnings,
  } as const;
  checkCombinations(table, (env) => names[env] ?? env, problems, warnings);
  if (problems.length > 0) throw new SettingsError(problems);
  return Object.freeze({ ...table, ...derived });
}

function lookup(env: Env, name: string, problems: string[]): { name: string; text: string } | undefined {
  let found: { name: string; text: string } | undefined =
    env[name] === undefined ? undefined : { name, text: env[name] };
  for (const alias of aliasesOf(name)) {
    const text = env[alias];
    if (text === undefined) continue;
    if (found !== undefined && found.text !== text) {
      problems.push(`${alias} and ${name} are both set, to different values: set only one`);
    }
    found ??= { name: alias, text };
  }
  return found;
}

function parseNodeMetadata(text: string, problems: string[]): Record<string, string> {
  const metadata: Record<string, string> = {};
  if (text === "") return metadata;
  for (const item of text.split(",")) {
    const at = item.indexOf("=");
    if (at < 0) {
      problems.push(
        `invalid setting CONFIG_GRPC_XDS_NODE_METADATA=${JSON.stringify(text)}: item "${item}" is not k=v`,
      );
      continue;
    }
    metadata[item.slice(0, at)] = item.slice(at + 1);
  }
  return metadata;
}

function readMogrifier(env: Env, name: string, problems: string[]): DogStatsdMogrifier {
  const prefix = `DOG_STATSD_MOGRIFIER_${name}_`;
  const patternText = env[`${prefix}PATTERN`];
  const rename = env[`${prefix}NAME`];
  let pattern = /$^/;
  if (!patternText) problems.push(`${prefix}PATTERN is required by USE_DOG_STATSD_MOGRIFIERS entry ${name}`);
  else {
    try {
      pattern = new RegExp(patternText);
    } catch (error) {
      problems.push(
        `invalid setting ${prefix}PATTERN=${JSON.stringify(patternText)}: ${(error as Error).message}`,
      );
    }
  }
  if (!rename) problems.push(`${prefix}NAME is required by USE_DOG_STATSD_MOGRIFIERS entry ${name}`);
  const tags = parseStringMap(env[`${prefix}TAGS`] ?? "");
  if (!tags.ok)
    problems.push(`invalid setting ${prefix}TAGS=${JSON.stringify(env[`${prefix}TAGS`])}: ${tags.reason}`);
  for (const [key, value] of Object.entries(tags.ok ? tags.value : {})) {
    if (value === "") problems.push(`no value specified for tag ${key} for mogrifier ${name}`);
  }
  return { name, pattern, rename: rename ?? "", tags: tags.ok ? tags.value : {} };
}

/** `host:port`, `[v6]:port` or `:port` (every interface), as Go's net.Listen takes them. */
function parseListenAddress(text: string, problems: string[]): { host: string; port: number } {
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || port > 65535) {
    problems.push(`invalid setting PROMETHEUS_ADDR=${JSON.stringify(text)}: use host:port or :port`);
    return { host: "", port: 0 };
  }
  return { host: match[1] ?? match[2] ?? "", port };
}

const SRV_NAME = /^_(.+?)\._(.+?)\.(.+)$/;
const SENTINEL_FORMAT =
  "Expected master name and a list of urls for the sentinels, in the format: <redis master name>,<sentinel1>,...,<sentineln>";

/** Checks between settings; `nameOf` gives the spelling the user set (an alias or the canonical name). */
function checkCombinations(
  s: TableSettings,
  nameOf: (env: string) => string,
  problems: string[],
  warnings: string[],
): void {
  if (s.memcacheHostPort.length > 0 && s.memcacheSrv !== "") {
    problems.push(`Both ${nameOf("MEMCACHE_HOST_PORT")} and ${nameOf("MEMCACHE_SRV")} are set: set only one`);
  }
  if (s.memcacheSrv !== "" && !SRV_NAME.test(s.memcacheSrv)) {
    problems.push(
      `invalid setting ${nameOf("MEMCACHE_SRV")}=${JSON.stringify(s.memcacheSrv)}: use _service._proto.name`,
    );
  }
  if (s.backendType === "memcache") checkMemcacheNodes(s, nameOf, problems);
  const redisInUse = s.backendType === "redis" || s.backendType === "";
  if (redisInUse && s.redisType === "sentinel" && s.redisUrl.split(",").length < 2) {
    problems.push(`invalid setting ${nameOf("REDIS_URL")}=${JSON.stringify(s.redisUrl)}: ${SENTINEL_FORMAT}`);
  }
  if (
    redisInUse &&
    s.redisPerSecond &&
    s.redisPerSecondType === "sentinel" &&
    s.redisPerSecondUrl.split(",").length < 2
  ) {
    const name = nameOf("REDIS_PERSECOND_URL");
    problems.push(`invalid setting ${name}=${JSON.stringify(s.redisPerSecondUrl)}: ${SENTINEL_FORMAT}`);
  }
  if (s.grpcServerUseTls && (s.grpcServerTlsCert === "" || s.grpcServerTlsKey === "")) {
    problems.push("GRPC_SERVER_USE_TLS=true needs GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY");
  }
  if ((s.grpcClientTlsCacert !== "" || s.grpcClientTlsSan !== "") && !s.grpcServerUseTls) {
    warnings.push(
      "GRPC_CLIENT_TLS_CACERT/GRPC_CLIENT_TLS_SAN have no effect without GRPC_SERVER_USE_TLS=true",
    );
  } else if (s.grpcClientTlsSan !== "" && s.grpcClientTlsCacert === "") {
    warnings.push(
      "GRPC_CLIENT_TLS_SAN has no effect without GRPC_CLIENT_TLS_CACERT (no client certificates)",
    );
  }
  // The reference's CertProvider watches one directory for both files.
  const pairGiven = s.grpcServerTlsCert !== "" && s.grpcServerTlsKey !== "";
  if (s.grpcServerUseTls && pairGiven && dirname(s.grpcServerTlsCert) !== dirname(s.grpcServerTlsKey)) {
    problems.push("GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY must be in the same directory");
  }
  if (s.xdsBackoffInitialIntervalMs > s.xdsBackoffMaxIntervalMs) {
    problems.push("XDS_CLIENT_BACKOFF_INITIAL_INTERVAL must not exceed XDS_CLIENT_BACKOFF_MAX_INTERVAL");
  }
  if (s.redisStartupInitialIntervalMs > s.redisStartupMaxIntervalMs) {
    problems.push("REDIS_STARTUP_INITIAL_INTERVAL must not exceed REDIS_STARTUP_MAX_INTERVAL");
  }
  checkBackendOutageSettings(s, problems, warnings);
  if (s.usersBasePath !== "" && !/^(\/[A-Za-z0-9._~-]+)+$/.test(s.usersBasePath)) {
    problems.push(
      `invalid setting USERS_BASE_PATH=${JSON.stringify(s.usersBasePath)}: use /segment[/segment…] without a trailing slash`,
    );
  }
  if ((s.adminEmail === "") !== (s.adminAppPassword === "")) {
    problems.push("ADMIN_EMAIL and ADMIN_APP_PASSWORD go together: set both or neither");
  }
  if (s.adminEmail !== "" && !isValidEmailAddress(s.adminEmail.trim())) {
    problems.push(`invalid setting ADMIN_EMAIL=${JSON.stringify(s.adminEmail)}: not an e-mail address`);
  }
  if (s.adminAppPassword !== "" && s.adminAppPassword.replace(/\s+/g, "").length < 16) {
    problems.push("invalid setting ADMIN_APP_PASSWORD: use at least 16 characters (spaces are ignored)");
  }
  if (s.migrationsPollIntervalMs <= 0 || s.migrationsJobLeaseMs <= 0) {
    problems.push("MIGRATIONS_POLL_INTERVAL and MIGRATIONS_JOB_LEASE must be greater than zero");
  }
  if (s.migrationsRetryBaseMs > s.migrationsRetryMaxMs) {
    problems.push("MIGRATIONS_RETRY_BASE must not exceed MIGRATIONS_RETRY_MAX");
  }
  if (s.stopCacheKeyIncrementWhenOverlimit && s.backendType === "memcache") {
    warnings.push(
      "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT is ignored by the memcache backend (as the reference)",
    );
  }
}

/** BACKEND_TYPE=memcache: node items gomemcache would accept (an empty list is refused by the store factory). */
function checkMemcacheNodes(s: TableSettings, nameOf: (env: string) => string, problems: string[]): void {
  for (const item of s.memcacheHostPort) {
    const parsed = parseNetworkAddress(item);
    if (!parsed.ok) problems.push(`invalid setting ${nameOf("MEMCACHE_HOST_PORT")}: ${parsed.reason}`);
  }
}

/** One `NAME=value` line per setting for a debug log, secrets masked. */
export function describeSettings(settings: Settings): string[] {
  return Object.entries(SETTINGS_TABLE).map(([field, spec]) => {
    const value = (settings as unknown as Record<string, unknown>)[field];
    const shown = "secret" in spec && spec.secret ? "*****" : JSON.stringify(value);
    return `${spec.env}=${shown}`;
  });
}

/** BACKEND_FAILURE_MODE and the circuit breaker's settings (README "When the counter store fails"). */
function checkBackendOutageSettings(s: TableSettings, problems: string[], warnings: string[]): void {
  if (s.backendLocalLimitFraction === 0) {
    problems.push("invalid setting BACKEND_LOCAL_LIMIT_FRACTION=0: must be above 0 (a share of each limit)");
  }
  if (s.backendBreakerCooldownMs === 0) {
    problems.push("invalid setting BACKEND_BREAKER_COOLDOWN=0s: must be above 0");
  }
  if (s.backendBreakerCooldownMs > s.backendBreakerMaxCooldownMs) {
    problems.push("BACKEND_BREAKER_COOLDOWN must not exceed BACKEND_BREAKER_MAX_COOLDOWN");
  }
  if (s.backendType === "memory" && s.backendFailureMode !== "error") {
    warnings.push(
      `BACKEND_FAILURE_MODE=${s.backendFailureMode} has no effect with BACKEND_TYPE=memory: the in-process store does not fail`,
    );
  }
}
