// Issue 30's before/after table: the experiment of cluster-failover.test.ts (a primary of a 6-node cluster
// SIGKILLed under 50 decisions/s on its slots and 20/s on each other primary's, until 1.5 s after its slots
// answer again) per daemon setting, for this checkout's dist/ and, when BEFORE_ENTRY names another build's
// dist/cmd/ratelimitd.js, for that one too. Not part of the suite (not a *.test.ts); run it by hand:
//
//   npm run build && BEFORE_ENTRY=/path/to/old/dist/cmd/ratelimitd.js \
//     npx tap --disable-coverage --timeout 900 test/e2e/outages/cluster-failover-table.ts
//
// It prints the table on stderr (and writes it to $TABLE_OUT when set): errors / decisions on the dead primary's slots and on each healthy
// primary's, and how long after the replica's promotion the dead slots answered again.
import { writeFileSync } from "node:fs";
import t from "tap";
import { requireBinaries } from "../../helpers/redis-servers.js";
import { counted, killPrimaryUnderLoad } from "./cluster-load.js";

const SETTINGS: readonly { name: string; env: Record<string, string> }[] = [
  { name: "defaults (breaker on)", env: {} },
  {
    name: "`REDIS_PIPELINE_WINDOW=1ms`, `REDIS_PIPELINE_LIMIT=8`, breaker off",
    env: { REDIS_PIPELINE_WINDOW: "1ms", REDIS_PIPELINE_LIMIT: "8", BACKEND_BREAKER_FAILURES: "0" },
  },
  { name: "defaults, breaker off", env: { BACKEND_BREAKER_FAILURES: "0" } },
  {
    name: "`REDIS_PIPELINE_WINDOW=1ms`, `REDIS_PIPELINE_LIMIT=8`, breaker on",
    env: { REDIS_PIPELINE_WINDOW: "1ms", REDIS_PIPELINE_LIMIT: "8" },
  },
  {
    name: "`BACKEND_FAILURE_MODE=allow` (failure answers counted as errors)",
    env: { BACKEND_FAILURE_MODE: "allow" },
  },
];

const builds: { name: string; entry: string | undefined }[] = [
  ...(process.env.BEFORE_ENTRY ? [{ name: "before", entry: process.env.BEFORE_ENTRY }] : []),
  { name: "after", entry: undefined },
];

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  const rows: string[] = [];
  for (const setting of SETTINGS) {
    for (const build of builds) {
      t.test(`${build.name}: ${setting.name}`, async (t) => {
        const { groups, promotedMs, firstAnswered } = await killPrimaryUnderLoad(t, setting.env, build.entry);
        const errors = groups.map(
          (g) => `${g.decisions.filter((d) => !counted(d)).length}/${g.decisions.length}`,
        );
        const reasons = new Set(
          groups
            .slice(1)
            .flatMap((g) => g.decisions.flatMap((d) => (d.outcome.error ? [d.outcome.error.details] : []))),
        );
        const healthy = `${errors[1]}, ${errors[2]}${reasons.size > 0 ? ` — ${[...reasons].map((r) => `\`${r}\``).join(", ")}` : ""}`;
        const answered = Math.max(0, firstAnswered.doneMs - promotedMs).toFixed(0);
        rows.push(`| ${setting.name} | ${build.name} | ${errors[0]} | ${healthy} | ${answered} ms |`);
      });
    }
  }
  t.teardown(() => {
    const table = [
      "| daemon settings | build | errors on the dead primary's slots | errors on the healthy primaries' slots | promotion → dead slots answer |",
      "|---|---|---|---|---|",
      ...rows,
    ].join("\n");
    process.stderr.write(`${table}\n`);
    if (process.env.TABLE_OUT) writeFileSync(process.env.TABLE_OUT, `${table}\n`);
  });
}
