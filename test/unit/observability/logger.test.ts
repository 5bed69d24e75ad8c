import t from "tap";
import { Logger, type LogLevel, logLevelFromSetting } from "../../../src/observability/logger.js";

/** A logger writing into an array, with a fixed clock. */
function capture(level: LogLevel, format: "text" | "json", iso = "2020-09-10T17:22:35.123Z") {
  const lines: string[] = [];
  const logger = new Logger({ level, format, write: (line) => lines.push(line), now: () => new Date(iso) });
  return { logger, lines };
}

// LOG_FORMAT=text is logrus's text format, RFC3339 time in seconds, values quoted only when needed.
t.test("text format is logrus's, byte for byte", (t) => {
  const { logger, lines } = capture("trace", "text");
  logger.debug("loading domain: messaging");
  logger.info("ready");
  logger.error("backend down", { url: "redis:6379", attempt: 3, fatal: false });
  logger.trace("x");
  t.strictSame(lines, [
    'time="2020-09-10T17:22:35Z" level=debug msg="loading domain: messaging"\n',
    'time="2020-09-10T17:22:35Z" level=info msg=ready\n',
    'time="2020-09-10T17:22:35Z" level=error msg="backend down" attempt=3 fatal=false url="redis:6379"\n',
    'time="2020-09-10T17:22:35Z" level=trace msg=x\n',
  ]);
  t.end();
});

t.test("text values are quoted only outside [A-Za-z0-9-._/@^+]", (t) => {
  const cases: [string, string][] = [
    ["a-b.c_d/e@f^g+h0", "a-b.c_d/e@f^g+h0"],
    ["/var/run/nutcracker/ratelimit.sock", "/var/run/nutcracker/ratelimit.sock"],
    ["two words", '"two words"'],
    ["k=v", '"k=v"'],
    ["a:b", '"a:b"'],
    ["(k=v)", '"(k=v)"'],
    ['say "hi"', '"say \\"hi\\""'],
    ["back\\slash", '"back\\\\slash"'],
    ["line\nbreak", '"line\\nbreak"'],
    ["tab\there", '"tab\\there"'],
  ];
  for (const [message, shown] of cases) {
    const { logger, lines } = capture("info", "text");
    logger.info(message);
    t.equal(lines[0], `time="2020-09-10T17:22:35Z" level=info msg=${shown}\n`, JSON.stringify(message));
  }
  t.end();
});

// logrus's TextFormatter quotes an empty value only with QuoteEmptyFields (unset in the reference), and leaves
// out msg= altogether when the message is empty.
t.test("text leaves empty values unquoted and drops an empty msg, as logrus", (t) => {
  const { logger, lines } = capture("info", "text");
  logger.info("pool", { user: "" });
  logger.info("", { attempt: 1 });
  t.strictSame(lines, [
    'time="2020-09-10T17:22:35Z" level=info msg=pool user=\n',
    'time="2020-09-10T17:22:35Z" level=info attempt=1\n',
  ]);
  t.end();
});

// logrus names the warn level "warning" in both formatters (Level.String()).
t.test("the warn level is written as logrus's 'warning'", (t) => {
  const text = capture("warn", "text");
  text.logger.warn("Listening for gRPC on '0.0.0.0:8081'");
  t.strictSame(text.lines, [
    `time="2020-09-10T17:22:35Z" level=warning msg="Listening for gRPC on '0.0.0.0:8081'"\n`,
  ]);
  const json = capture("warn", "json", "2020-09-10T17:22:44.926Z");
  json.logger.warn("Listening for HTTP on '0.0.0.0:8080'");
  t.strictSame(json.lines, [
    `{"@message":"Listening for HTTP on '0.0.0.0:8080'","@timestamp":"2020-09-10T17:22:44.926Z","level":"warning"}\n`,
  ]);
  t.end();
});

// LOG_FORMAT=json is logrus's JSON as the reference configures it:
// `{"@message":…,"@timestamp":<RFC3339Nano>,"level":…}`, keys sorted, fields alongside.
t.test("JSON format is logrus's, keys sorted", (t) => {
  const { logger, lines } = capture("debug", "json", "2020-09-10T17:22:44.926Z");
  logger.debug("loading domain: messaging");
  logger.info("connected", { zeta: 1, alpha: "x", ok: true });
  t.strictSame(lines, [
    '{"@message":"loading domain: messaging","@timestamp":"2020-09-10T17:22:44.926Z","level":"debug"}\n',
    '{"@message":"connected","@timestamp":"2020-09-10T17:22:44.926Z","alpha":"x","level":"info","ok":true,"zeta":1}\n',
  ]);
  t.end();
});

// RFC3339Nano drops trailing zeros of the fraction, and the dot when the fraction is zero.
t.test("JSON timestamps are RFC3339Nano", (t) => {
  const cases: [string, string][] = [
    ["2020-09-10T17:22:44.926Z", "2020-09-10T17:22:44.926Z"],
    ["2020-09-10T17:22:44.500Z", "2020-09-10T17:22:44.5Z"],
    ["2020-09-10T17:22:44.120Z", "2020-09-10T17:22:44.12Z"],
    ["2020-09-10T17:22:44.000Z", "2020-09-10T17:22:44Z"],
  ];
  for (const [at, shown] of cases) {
    const { logger, lines } = capture("info", "json", at);
    logger.info("m");
    t.equal(lines[0], `{"@message":"m","@timestamp":"${shown}","level":"info"}\n`, at);
  }
  t.end();
});

// logrus's JSONFormatter uses encoding/json with HTML escaping on (the reference does not disable it).
t.test("JSON escapes <, > and & as Go's encoding/json", (t) => {
  const { logger, lines } = capture("info", "json", "2020-09-10T17:22:44.926Z");
  logger.info("a<b>&c");
  t.strictSame(lines, [
    '{"@message":"a\\u003cb\\u003e\\u0026c","@timestamp":"2020-09-10T17:22:44.926Z","level":"info"}\n',
  ]);
  t.end();
});

// LOG_LEVEL (logrus levels) and checking the level first on the hot path.
t.test("lines below the level are dropped; debugEnabled follows the level", (t) => {
  const expectations: [LogLevel, string[], boolean][] = [
    ["trace", ["trace", "debug", "info", "warn", "error"], true],
    ["debug", ["debug", "info", "warn", "error"], true],
    ["info", ["info", "warn", "error"], false],
    ["warn", ["warn", "error"], false],
    ["error", ["error"], false],
    ["panic", [], false],
  ];
  for (const [level, written, debugEnabled] of expectations) {
    const { logger, lines } = capture(level, "json");
    logger.trace("trace");
    logger.debug("debug");
    logger.info("info");
    logger.warn("warn");
    logger.error("error");
    t.strictSame(
      lines.map((line) => (JSON.parse(line) as { "@message": string })["@message"]),
      written,
      `level ${level} writes ${written.join(",") || "nothing"}`,
    );
    t.equal(logger.debugEnabled, debugEnabled, `debugEnabled at ${level}`);
  }
  t.end();
});

t.test("LOG_LEVEL values map to logger levels case-insensitively", (t) => {
  const cases: [string, LogLevel][] = [
    ["WARN", "warn"],
    ["warning", "warn"],
    ["WARNING", "warn"],
    ["Debug", "debug"],
    ["trace", "trace"],
    ["ERROR", "error"],
  ];
  for (const [text, level] of cases) t.equal(logLevelFromSetting(text), level, text);
  t.end();
});
