// LOG_FORMAT and LOG_LEVEL apply from the first line the process writes (envoyproxy/ratelimit PR #1192),
// including the warning of the image's /bin/ratelimit about the arguments it ignores.
import t from "tap";
import { distEntry, startDaemon } from "../helpers/daemon-process.js";

t.test("LOG_FORMAT=json: every line is JSON, the first one included", async (t) => {
  const daemon = await startDaemon(
    { LOG_FORMAT: "json", LOG_LEVEL: "debug", RUNTIME_ROOT: t.testdir({ config: {} }) },
    20_000,
    { entry: distEntry("ratelimit"), args: ["-unknown"] },
  );
  t.equal(await daemon.stop(), 0);
  const lines = daemon.logs().trimEnd().split("\n");
  t.ok(lines.length > 3, "start-up, debug lines included");
  const parsed = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, string>;
    } catch {
      return line;
    }
  });
  t.strictSame(
    parsed.filter((line) => typeof line === "string"),
    [],
    "no line in another format",
  );
  t.match(parsed[0], {
    level: "warning",
    "@message":
      'ignoring command-line arguments ["-unknown"]: ratelimit reads its settings from environment variables only',
  });
});
