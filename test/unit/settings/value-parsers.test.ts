import t from "tap";
import {
  type Parsed,
  parseGoBool,
  parseGoDuration,
  parseGoFloat,
  parseGoInt,
  parseStringList,
  parseStringMap,
} from "../../../src/settings/value-parsers.js";

/** The assertions the table helper needs (the root `t` and every subtest have them). */
type Checks = Pick<typeof t, "strictSame" | "equal" | "type">;

/** Runs one parser over accepted (text → value) and rejected texts. */
function table<T>(
  t: Checks,
  parse: (text: string) => Parsed<T>,
  accepted: readonly (readonly [string, T])[],
  rejected: readonly string[],
): void {
  for (const [text, value] of accepted) {
    const parsed = parse(text);
    t.strictSame(parsed, { ok: true, value }, `accepts ${JSON.stringify(text)}`);
  }
  for (const text of rejected) {
    const parsed = parse(text);
    t.equal(parsed.ok, false, `rejects ${JSON.stringify(text)}`);
    if (!parsed.ok) t.type(parsed.reason, "string");
  }
}

// `bool` via Go strconv.ParseBool (exactly these twelve words).
t.test("parseGoBool accepts exactly strconv.ParseBool's words", (t) => {
  const accepted = [
    ...["1", "t", "T", "TRUE", "true", "True"].map((w) => [w, true] as const),
    ...["0", "f", "F", "FALSE", "false", "False"].map((w) => [w, false] as const),
  ];
  table(t, parseGoBool, accepted, [
    "",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "tRUE",
    "TRue",
    "fALSE",
    " true",
    "true ",
    "2",
    "-1",
  ]);
  t.end();
});

// `int` via strconv.ParseInt(s, 0, 64): base prefixes, leading-0 octal, Go underscores.
t.test("parseGoInt follows strconv.ParseInt base 0", (t) => {
  table(
    t,
    parseGoInt,
    [
      ["0", 0],
      ["42", 42],
      ["+42", 42],
      ["-42", -42],
      ["8080", 8080],
      ["0x1F", 31],
      ["0X1f", 31],
      ["-0x10", -16],
      ["0o17", 15],
      ["0O17", 15],
      ["017", 15],
      ["-017", -15],
      ["0b101", 5],
      ["0B11", 3],
      ["1_000", 1000],
      ["0x_1F", 31],
      ["0_17", 15],
      ["9007199254740991", 9007199254740991],
    ],
    [
      "",
      " 1",
      "1 ",
      "1.0",
      "1e3",
      "08",
      "09",
      "0x",
      "0b",
      "0xG",
      "0b102",
      "0o8",
      "_1",
      "1_",
      "1__0",
      "0x1F_",
      "abc",
      "--1",
      "+-1",
      "9223372036854775808",
    ],
  );
  t.end();
});

// `float32`/`float64` via strconv.ParseFloat.
t.test("parseGoFloat follows strconv.ParseFloat", (t) => {
  table(
    t,
    parseGoFloat,
    [
      ["0.8", 0.8],
      ["1", 1],
      ["-1.5", -1.5],
      ["+2", 2],
      [".5", 0.5],
      ["5.", 5],
      ["1e3", 1000],
      ["1E-2", 0.01],
      ["inf", Infinity],
      ["+Inf", Infinity],
      ["-Infinity", -Infinity],
      ["INF", Infinity],
    ],
    [
      "",
      "abc",
      ".",
      "e5",
      "1e",
      "1.2.3",
      " 1",
      "1 ",
      "+nan",
      "-NaN",
      "infin",
      "0x1",
      "1__0.5",
      "_1.5",
      "1,5",
    ],
  );
  for (const text of ["NaN", "nan", "NAN"]) {
    const parsed = parseGoFloat(text);
    t.ok(parsed.ok && Number.isNaN(parsed.value), `accepts ${text} as NaN`);
  }
  t.end();
});

// Go's ParseFloat also takes digit underscores and hex floats with a p exponent,
// and rejects overflow (ErrRange, which envconfig turns into a startup error). From Go's atof_test: "1_23.50_0_0e+1_2" → 1.235e14, "0x1p-2" → 0.25, "1e400" → ErrRange, "1e-400" → 0.
t.test("parseGoFloat matches Go on underscores, hexadecimal floats and overflow", (t) => {
  table(
    t,
    parseGoFloat,
    [
      ["1_000.5", 1000.5],
      ["1_23.50_0_0e+1_2", 1.235e14],
      ["0x1p-2", 0.25],
      ["0x1.8p1", 3],
      ["1e-400", 0],
    ],
    ["1e400", "-1e400", "0x1e2"],
  );
  t.end();
});

// `time.Duration` via time.ParseDuration, returned in milliseconds; bare "0" allowed.
t.test("parseGoDuration follows time.ParseDuration (result in ms)", (t) => {
  table(
    t,
    parseGoDuration,
    [
      ["0", 0],
      ["+0", 0],
      ["0s", 0],
      ["150us", 0.15],
      ["150µs", 0.15],
      ["150μs", 0.15],
      ["1ns", 0.000001],
      ["500ms", 500],
      ["10s", 10_000],
      ["1.5s", 1500],
      [".5s", 500],
      ["5.s", 5000],
      ["3m", 180_000],
      ["24h", 86_400_000],
      ["1h30m", 5_400_000],
      ["2m3.5s", 123_500],
      ["1h1m1s1ms", 3_661_001],
      ["-1s", -1000],
      ["+1s", 1000],
    ],
    [
      "",
      "5",
      "1.5",
      "-5",
      "s",
      ".s",
      "-",
      "10S",
      "1d",
      "1w",
      "1 s",
      " 1s",
      "1s ",
      "1s1",
      "--1s",
      "1e3s",
      "1..5s",
      "1h-5m",
    ],
  );
  t.end();
});

// `[]string` = comma-separated (envconfig: no trimming; blank = empty list).
t.test("parseStringList splits on commas without trimming", (t) => {
  table(
    t,
    parseStringList,
    [
      ["", []],
      ["  ", []],
      ["a", ["a"]],
      ["host1:11211,host2:11211", ["host1:11211", "host2:11211"]],
      ["a, b", ["a", " b"]],
      ["a,,b", ["a", "", "b"]],
      ["a,", ["a", ""]],
    ],
    [],
  );
  t.end();
});

// `map[string]string` = "k1:v1,k2:v2", each item exactly one colon (envconfig).
t.test("parseStringMap reads k1:v1,k2:v2 with exactly one colon per item", (t) => {
  table(
    t,
    parseStringMap,
    [
      ["", {}],
      [" ", {}],
      ["k1:v1,k2:v2", { k1: "v1", k2: "v2" }],
      ["env:prod", { env: "prod" }],
      ["k:", { k: "" }],
      [":v", { "": "v" }],
      ["k: v", { k: " v" }],
      ["k:1,k:2", { k: "2" }],
    ],
    ["k", "a=b", "k:v:w", "k1:v1,", "k1:v1,k2", "http://x:1"],
  );
  const bad = parseStringMap("k1:v1,k2");
  t.strictSame(bad, { ok: false, reason: 'invalid map item: "k2" (use k1:v1,k2:v2)' }, "names the bad item");
  t.end();
});
