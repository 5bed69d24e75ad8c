// Requests naming a domain no rule defines: answered OK as the reference does, and said at warn once per
// domain, at most a line a second, with bounded memory (docs/rules.md, "A domain no rule defines").
import t from "tap";
import type { Counter, EngineStats, RuleStats } from "../../../src/engine/rule-set.js";
import { ThrottledLog } from "../../../src/observability/throttled-log.js";
import { UnknownDomainLog, unknownDomainLine } from "../../../src/service/unknown-domain-log.js";

/** An UnknownDomainLog over a ThrottledLog on a fake clock (its held lines written by `flush`). */
function unknownDomains(known: string[], maxDomains?: number) {
  const lines: string[] = [];
  let now = 1000;
  const throttled = new ThrottledLog({
    logger: { warn: (line) => lines.push(`warn: ${line}`), error: (line) => lines.push(`error: ${line}`) },
    nowMs: () => now,
    schedule: () => () => {},
  });
  const log = new UnknownDomainLog({
    log: throttled,
    knownDomains: () => known,
    ...(maxDomains === undefined ? {} : { maxDomains }),
  });
  const later = (ms: number) => {
    now += ms;
  };
  return { log, lines, later, flush: () => throttled.flush() };
}

t.test("the line names the domain and the loaded ones", async (t) => {
  t.equal(
    unknownDomainLine("rl2", ["rl", "api", "beyond", "ai-gateway"]),
    'domain "rl2" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: ai-gateway, api, beyond, rl)',
  );
  t.equal(
    unknownDomainLine("x", []),
    'domain "x" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: none)',
  );
  const many = Array.from({ length: 12 }, (_, i) => `d${String(i).padStart(2, "0")}`);
  t.equal(
    unknownDomainLine("x", many),
    'domain "x" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: d00, d01, d02, d03, d04, d05, d06, d07, d08, d09 and 2 more)',
  );
  t.equal(
    unknownDomainLine(`${"a".repeat(100)}"tail`, ["rl"]),
    `domain "${"a".repeat(100)}…" (105 characters) is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: rl)`,
    "a long domain is cut, and quotes in it are escaped",
  );
});

t.test("once per domain; a second domain within the second is held, then written", async (t) => {
  const { log, lines, later, flush } = unknownDomains(["rl"]);
  log.notice("rl2");
  log.notice("rl2");
  later(5000);
  log.notice("rl2");
  t.strictSame(lines, [
    'warn: domain "rl2" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: rl)',
  ]);
  log.notice("other");
  later(10);
  log.notice("third");
  t.equal(lines.length, 2, "one line a second at most");
  flush();
  t.strictSame(lines.slice(1), [
    'warn: domain "other" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: rl)',
    'warn: domain "third" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: rl)',
  ]);
});

t.test("a burst of distinct domains within a second is one line with its count", async (t) => {
  const { log, lines, flush } = unknownDomains(["rl"]);
  for (let i = 0; i < 50; i++) log.notice(`typo${i}`);
  flush();
  t.strictSame(lines, [
    'warn: domain "typo0" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: rl)',
    'warn: domain "typo49" is not in the loaded rules, so its requests are answered OK with no limit (loaded domains: rl) (and 48 more in the last 0.0 s)',
  ]);
});

t.test("memory: past maxDomains the remembered set starts over", async (t) => {
  const { log, lines, later } = unknownDomains([], 3);
  for (const domain of ["a", "b", "c"]) {
    log.notice(domain);
    later(1000);
  }
  log.notice("a");
  later(1000);
  t.equal(lines.length, 3, "a, b and c said once each; a again is remembered");
  log.notice("d");
  later(1000);
  log.notice("a");
  t.strictSame(
    lines.slice(3).map((line) => /domain "(\w+)"/.exec(line)?.[1]),
    ["d", "a"],
    "the fourth domain starts the set over, so a is said again",
  );
});

t.test("reset (a rule reload) forgets what was said", async (t) => {
  const { log, lines, later } = unknownDomains(["rl"]);
  log.notice("rl2");
  later(1000);
  log.reset();
  log.notice("rl2");
  t.equal(lines.length, 2);
});

t.test("watching: only domain_not_found is told, and still counted", async (t) => {
  const { log, lines } = unknownDomains(["rl"]);
  const counted: string[] = [];
  const counter = (name: string): Counter => ({ add: (n) => counted.push(`${name}+${n}`) });
  const ruleStats = { key: "rl.k" } as RuleStats;
  const stats: EngineStats = {
    ruleStats: () => ruleStats,
    domainNotFound: (domain) => counter(`${domain}.domain_not_found`),
    globalShadowMode: counter("global_shadow_mode"),
  };
  const watched = log.watching(stats);
  t.equal(watched.ruleStats("rl.k"), ruleStats);
  t.equal(watched.globalShadowMode, stats.globalShadowMode);
  t.equal(lines.length, 0, "asking for rule stats says nothing");
  watched.domainNotFound("rl2").add(1);
  t.strictSame(counted, ["rl2.domain_not_found+1"]);
  t.equal(lines.length, 1);
});
