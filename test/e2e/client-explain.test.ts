// ratelimit-client -explain against the built daemon (docs/cli.md "ratelimit-client"): the printed tree, -json, and that
// explaining counts nothing — the real decision after it gets what the explain said it would.
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { freePort } from "../helpers/free-port.js";
import { runCommand } from "../helpers/run-command.js";
import { stayInsideWindow } from "../helpers/window-guard.js";

const RULES = `domain: cli
descriptors:
  - key: k
    value: v
    rate_limit: { unit: day, requests_per_unit: 50 }
  - key: path
    value: /up*
    rate_limit: { unit: minute, requests_per_unit: 3 }
`;

t.test("ratelimit-client -explain", async (t) => {
  const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }) });
  t.teardown(() => daemon.stop());
  const dial = ["-dial_string", `127.0.0.1:${daemon.grpcPort}`];
  const debug = ["-debug_addr", `127.0.0.1:${daemon.debugPort}`];
  const request = [
    "-domain",
    "cli",
    "-descriptors",
    "k=v",
    "-descriptors",
    "path=/upload",
    "-descriptors",
    "x=y",
  ];
  const decide = async () =>
    JSON.parse((await runCommand("ratelimit-client", [...dial, ...request, "-json"])).stdout);

  // Five client runs must share one minute window (the path rule's): the counters must not start over.
  await stayInsideWindow(60, 15);
  // Two real decisions first, so that the counters the explain reads are not zero.
  await decide();
  t.equal((await decide()).statuses[0].limitRemaining, 48);

  const text = await runCommand("ratelimit-client", ["-explain", ...debug, ...request]);
  t.equal(text.code, 0);
  t.equal(text.stderr, "");
  t.equal(
    text.stdout
      .replace(/loaded \S+;/, "loaded <time>;")
      .replace(/_\d{10}\b/g, "_<window>")
      .replace(/reset \d+s/g, "reset <s>")
      .replace(/\(\S*r\.yaml:/g, "(r.yaml:"),
    `domain "cli": OK (rules: file, loaded <time>; store: memory)
descriptor 1: k=v (hits 1)
├─ search
│  └─ level 1: k=v → k_v (exact)
│     └─ ✓ k_v (exact)
├─ rule: cli.k_v (r.yaml:3)
├─ why: matched rule cli.k_v
├─ limit (unnamed): fixed_window, 50 per DAY×1, window 86400s
│  ├─ counter cli_k_v_<window> = 2
│  └─ local cache: miss
└─ status: OK, remaining 47, reset <s>
descriptor 2: path=/upload (hits 1)
├─ search
│  └─ level 1: path=/upload → path_/up* (wildcard)
│     ├─ ✗ path_/upload (exact)
│     └─ ✓ path_/up* (wildcard)
├─ rule: cli.path_/up* (r.yaml:6)
├─ why: matched rule cli.path_/up*
├─ limit (unnamed): fixed_window, 3 per MINUTE×1, window 60s
│  ├─ counter cli_path_/upload_<window> = 2
│  └─ local cache: miss
└─ status: OK, remaining 0, reset <s>
descriptor 3: x=y (hits 1)
├─ search
│  └─ level 1: x=y → no match
│     ├─ ✗ x_y (exact)
│     ├─ ✗ path_/up* (wildcard)
│     └─ ✗ x (key only)
├─ rule: none
├─ why: no rule matched: domain 'cli' searched at levels x
├─ limits: none
└─ status: OK
`,
  );

  const explainedAtMs = Date.now();
  const json = await runCommand("ratelimit-client", ["-explain", "-json", ...debug, ...request]);
  t.equal(json.code, 0);
  const answer = JSON.parse(json.stdout);
  t.equal(json.stdout, `${JSON.stringify(answer, null, 2)}\n`, "-json: the answer, pretty");
  t.equal(answer.overallCode, "OK");
  t.strictSame(
    answer.descriptors.map((d: { rule: string | null }) => d.rule),
    ["cli.k_v", "cli.path_/up*", null],
  );
  const explained = answer.descriptors.map((d: { status: unknown }) => d.status);

  // The real decision: what the explain said, so neither explain above counted.
  const decided = await decide();
  // The seconds that may have passed between the two (a CLI process starts in between; under load, more
  // than one): the reset is compared within them, everything else exactly.
  const elapsedSeconds = Math.ceil((Date.now() - explainedAtMs) / 1000);
  t.equal(decided.overallCode, answer.overallCode);
  const withoutReset = (statuses: { durationUntilReset?: string }[]) =>
    statuses.map(({ durationUntilReset, ...rest }) => rest);
  const seconds = (statuses: { durationUntilReset?: string }[]) =>
    statuses.map((status) => Number.parseInt(status.durationUntilReset ?? "-1", 10));
  t.strictSame(withoutReset(decided.statuses), withoutReset(explained));
  seconds(decided.statuses).forEach((after, i) => {
    const before = seconds(explained)[i]!;
    t.ok(
      after <= before && after >= before - elapsedSeconds,
      `descriptor ${i + 1}: reset ${before}s then ${after}s, ${elapsedSeconds}s apart at most`,
    );
  });
  t.equal(decided.statuses[0].limitRemaining, 47);

  // The path rule is used up now (3 of 3): the explain says the next one would be refused, and it is.
  const over = await runCommand("ratelimit-client", ["-explain", ...debug, ...request]);
  t.equal(over.code, 0, "an OVER_LIMIT answer is still an answer");
  const normalised = over.stdout.replace(/loaded \S+;/, "loaded <time>;").replace(/reset \d+s/g, "reset <s>");
  t.equal(normalised.split("\n")[0], 'domain "cli": OVER_LIMIT (rules: file, loaded <time>; store: memory)');
  t.strictSame(
    normalised.split("\n").filter((line) => line.startsWith("└─ status: ")),
    [
      "└─ status: OK, remaining 46, reset <s>",
      "└─ status: OVER_LIMIT, remaining 0, reset <s>",
      "└─ status: OK",
    ],
  );
  t.match(over.stdout, /^│ {2}├─ counter cli_path_\/upload_\d{10} = 3$/m);
  const refused = await decide();
  t.equal(refused.overallCode, "OVER_LIMIT");
  t.equal(refused.statuses[0].limitRemaining, 46);
});

t.test(
  "ratelimit-client -explain errors: one line on stderr, exit 1; a bad -debug_addr is a flag error",
  async (t) => {
    const port = await freePort();
    const closed = await runCommand("ratelimit-client", [
      "-explain",
      "-debug_addr",
      `127.0.0.1:${port}`,
      "-domain",
      "cli",
      "-descriptors",
      "k=v",
    ]);
    t.strictSame(closed, {
      code: 1,
      stdout: "",
      stderr: `explain error: POST http://127.0.0.1:${port}/explain: connect ECONNREFUSED 127.0.0.1:${port}\n`,
    });

    const daemon = await startDaemon({ RUNTIME_ROOT: t.testdir({ config: { "r.yaml": RULES } }) });
    t.teardown(() => daemon.stop());
    const address = `127.0.0.1:${daemon.debugPort}`;
    const refused = await runCommand("ratelimit-client", [
      "-explain",
      "-debug_addr",
      address,
      "-descriptors",
      "k=v",
    ]);
    t.strictSame(refused, {
      code: 1,
      stdout: "",
      stderr: `explain error: POST http://${address}/explain: HTTP 400: rate limit domain must not be empty\n`,
    });

    const bad = await runCommand("ratelimit-client", ["-explain", "-debug_addr", "6070"]);
    t.equal(bad.code, 2);
    t.match(
      bad.stderr,
      /^invalid value "6070" for flag -debug_addr: want <host>:<port>\nUsage of ratelimit-client:\n/,
    );
  },
);
