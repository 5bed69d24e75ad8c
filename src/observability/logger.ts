/**
 * A small logger writing the reference's logrus formats to stderr:
 * text `time="2020-09-10T17:22:35Z" level=warn msg="…" k=v` or JSON
 * `{"@message":"…","@timestamp":"…","level":"warn"}` (keys sorted). Levels as logrus.
 */

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "panic";
export type LogFields = Readonly<Record<string, string | number | boolean>>;

const SEVERITY: Record<LogLevel, number> = {
  trace: 0,
  debug: 1,
  info: 2,
  warn: 3,
  error: 4,
  fatal: 5,
  panic: 6,
};

/** Parses a LOG_LEVEL value (`warning` is `warn`). */
export function logLevelFromSetting(text: string): LogLevel {
  const lower = text.toLowerCase();
  return lower === "warning" ? "warn" : (lower as LogLevel);
}

export interface LoggerOptions {
  readonly level: LogLevel;
  readonly format: "text" | "json";
  /** Where lines go; stderr by default. */
  readonly write?: (line: string) => void;
  readonly now?: () => Date;
}

export class Logger {
  readonly #minimum: number;
  readonly #json: boolean;
  readonly #write: (line: string) => void;
  readonly #now: () => Date;
  /** Cheap guard for per-request logging: check before building a message. */
  readonly debugEnabled: boolean;

  constructor(options: LoggerOptions) {
    this.#minimum = SEVERITY[options.level];
    this.#json = options.format === "json";
    this.#write = options.write ?? writeToStderr;
    this.#now = options.now ?? (() => new Date());
    this.debugEnabled = this.#minimum <= SEVERITY.debug;
  }

  trace(message: string, fields?: LogFields): void {
    this.#log("trace", message, fields);
  }
  debug(message: string, fields?: LogFields): void {
    this.#log("debug", message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.#log("info", message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.#log("warn", message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.#log("error", message, fields);
  }

  #log(level: LogLevel, message: string, fields: LogFields | undefined): void {
    if (SEVERITY[level] < this.#minimum) return;
    const now = this.#now();
    // logrus names the warn level "warning" in its output.
    const shownLevel = level === "warn" ? "warning" : level;
    if (this.#json) {
      const record: Record<string, unknown> = {
        ...fields,
        "@message": message,
        "@timestamp": rfc3339Nano(now),
        level: shownLevel,
      };
      const sorted = Object.fromEntries(
        Object.keys(record)
          .sort()
          .map((k) => [k, record[k]]),
      );
      this.#write(`${goJson(sorted)}\n`);
      return;
    }
    let line = `time=${goQuote(`${now.toISOString().slice(0, 19)}Z`)} level=${shownLevel}`;
    if (message !== "") line += ` msg=${quoted(message)}`;
    for (const key of Object.keys(fields ?? {}).sort()) line += ` ${key}=${quoted(String(fields![key]))}`;
    this.#write(`${line}\n`);
  }
}

let stderrGuarded = false;

/**
 * Writes a line to stderr. A closed or broken stderr (the log collector went away: EPIPE) makes logging a
 * no-op instead of an error: the daemon keeps serving without its log.
 */
function writeToStderr(line: string): void {
  if (!stderrGuarded) {
    stderrGuarded = true;
    process.stderr.on("error", () => {});
  }
  if (process.stderr.destroyed || process.stderr.writableEnded) return;
  process.stderr.write(line);
}

/** logrus quotes a value (Go `%q`) unless it only holds `[A-Za-z0-9-._/@^+]`; empty values stay bare. */
function quoted(value: string): string {
  return /^[A-Za-z0-9\-._/@^+]*$/.test(value) ? value : goQuote(value);
}

const GO_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\u0007": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\v": "\\v",
};

/** Go's `strconv.Quote` for the characters log lines carry: escapes, `\xHH` for other control bytes. */
function goQuote(value: string): string {
  const body = value.replace(
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is escaped
    /["\\\x00-\x1f\x7f]/g,
    (ch) => GO_ESCAPES[ch] ?? `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
  return `"${body}"`;
}

/** encoding/json output: like JSON.stringify, with `<`, `>`, `&`, U+2028 and U+2029 escaped. */
function goJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** RFC3339Nano: the fraction without trailing zeros, and without the dot when it is zero. */
function rfc3339Nano(date: Date): string {
  return date.toISOString().replace(/\.?0+Z$/, "Z");
}

/** A logger that drops everything (tests, tools). */
export const silentLogger = new Logger({ level: "panic", format: "text", write: () => {} });
