// The documentation's conventions (docs/development.md, "Every example is a test"), checked without a daemon:
// every shell block is marked runnable or not-runnable with a reason, the blocks that cannot run here are
// checked the way their reason says, every variable the docs set for a daemon is a setting ratelimitd reads,
// and the output matching the runner uses is as strict as the page says. test/e2e/docs-examples.test.ts runs
// the runnable blocks.
import { readFileSync } from "node:fs";
import * as yaml from "js-yaml";
import t from "tap";
import { SETTINGS_TABLE } from "../../src/settings/settings-table.js";
import { dockerCommands, parseDockerRunLines } from "../helpers/docker-run-line.js";
import {
  commandLines,
  docBlocks,
  jsonMatches,
  logShows,
  NOT_RUNNABLE_REASONS,
  type ShellExample,
  shellExamples,
  textMatches,
} from "../helpers/docs-blocks.js";
import { docsPages } from "../helpers/docs-pages.js";
import { moved } from "../helpers/docs-runner.js";

const SETTINGS = new Set(Object.values(SETTINGS_TABLE).map((spec) => spec.env));
const pages = docsPages();
const examples = new Map<string, ShellExample[]>();

t.test("every shell block of every page is marked", async (t) => {
  for (const page of pages) {
    t.doesNotThrow(() => examples.set(page.name, shellExamples(page.name, page.source)), page.name);
  }
  const all = [...examples.values()].flat();
  const runnable = all.filter((example) => example.kind !== "not-runnable").length;
  const shown = all.filter((example) => example.stdout ?? example.stderr ?? example.log).length;
  t.comment(
    `${runnable} runnable blocks (${shown} with what they print), ${all.length - runnable} not runnable`,
  );
  t.ok(runnable >= 50, "the pages' commands are run, not merely listed");
});

t.test("a block's marker is checked: unmarked, unknown reason, stray output", async (t) => {
  t.throws(() => shellExamples("x.md", "```sh\nls\n```\n"), { message: /^x\.md:1: a sh block is/ });
  t.throws(() => shellExamples("x.md", "```bash runnable\nls\n```\n"), { message: /shell blocks are `sh`/ });
  t.throws(() => shellExamples("x.md", "```sh not-runnable lazy\nls\n```\n"), {
    message: /not-runnable needs/,
  });
  t.throws(() => shellExamples("x.md", "```text output\nx\n```\n"), { message: /must follow a runnable/ });
  t.throws(() => shellExamples("x.md", "```sh runnable fast\nls\n```\n"), { message: /unknown marker fast/ });
  const [one] = shellExamples("x.md", "text\n\n```sh runnable exit=2\nls\n```\n\n```text stderr\nno\n```\n");
  t.equal(one?.kind, "runnable");
  t.equal(one?.exitCode, 2);
  t.equal(one?.stderr?.text, "no");
  t.equal(one?.block.line, 3);
});

/** The not-runnable blocks of every page, by reason. */
function notRunnable(reason: string): { where: string; lines: string[]; text: string }[] {
  return [...examples.entries()].flatMap(([page, list]) =>
    list
      .filter((example) => example.reason === reason)
      .map((example) => ({
        where: `${page}:${example.block.line}`,
        lines: commandLines(example.block.text),
        text: example.block.text,
      })),
  );
}

t.test(
  "docker blocks: docker commands only; run lines parse, with known images and real settings",
  async (t) => {
    const blocks = notRunnable("docker");
    t.ok(blocks.length >= 2, "the image's lines and compose");
    for (const { where, lines, text } of blocks) {
      for (const line of lines) t.match(line, /^docker /, `${where}: ${line.slice(0, 40)}`);
      const runs = parseDockerRunLines(text);
      for (const run of runs) {
        t.ok(["ratelimitd", "redis:7-alpine"].includes(run.image), `${where}: image ${run.image}`);
        t.strictSame(
          Object.keys(run.env).filter((name) => !SETTINGS.has(name)),
          [],
          `${where}: every -e is a setting`,
        );
      }
      for (const words of dockerCommands(text)) {
        t.ok(["build", "run", "network", "compose"].includes(words[0]!), `${where}: docker ${words[0]}`);
        if (words[0] === "compose") {
          const compose = yaml.load(readFileSync(new URL("../../compose.yaml", import.meta.url), "utf8"));
          t.ok(compose !== null && typeof compose === "object", `${where}: compose.yaml parses`);
        }
      }
    }
  },
);

t.test("other not-runnable blocks hold what their reason says", async (t) => {
  t.strictSame(Object.keys(NOT_RUNNABLE_REASONS).sort(), [
    "docker",
    "install",
    "kubectl",
    "suite",
    "your-values",
  ]);
  for (const { where, lines } of notRunnable("kubectl")) {
    for (const line of lines) t.match(line, /^kubectl /, where);
  }
  for (const { where, lines } of notRunnable("install")) {
    for (const line of lines) t.match(line, /^(npm ci\b|(sudo )?apt-get )/, where);
  }
  for (const { where, lines } of notRunnable("suite")) {
    for (const line of lines) t.match(line, /^([A-Z_]+=\S* )*(npm test|npm run \S+|npx tap )/, where);
  }
  for (const { where, text } of notRunnable("your-values")) t.match(text, /<[^>]+>/, where);
});

t.test("variables set for a daemon in the docs are settings ratelimitd reads", async (t) => {
  const daemon = /(^|\s)(npm start|node (--env-file=\S+ )?dist\/cmd\/ratelimitd\.js|npx ratelimitd)(\s|$)/;
  let checked = 0;
  for (const page of pages) {
    for (const block of docBlocks(page.source).filter((candidate) => candidate.language === "sh")) {
      for (const line of commandLines(block.text).filter((candidate) => daemon.test(candidate))) {
        const assignments = [...line.matchAll(/(?:^|\s)([A-Z][A-Z0-9_]*)=/g)].map((match) => match[1]!);
        checked += assignments.length;
        t.strictSame(
          assignments.filter((name) => !SETTINGS.has(name)),
          [],
          `${page.name}:${block.line}: ${line.slice(0, 60)}`,
        );
      }
    }
  }
  t.ok(checked >= 10, `${checked} variables checked`);
});

t.test("output matching: `…` is the only looseness", async (t) => {
  t.ok(textMatches("a 1\nb …s", "a 1\nb 803s\n"));
  t.notOk(textMatches("a 1\nb …s", "a 2\nb 803s"), "exact outside …");
  t.notOk(textMatches("a 1", "a 1\nb"), "no extra lines");
  t.notOk(textMatches("a 1\nb", "a 1"), "no missing lines");
  t.notOk(textMatches("x (y)", "x yy"), "regular-expression characters are literal");
  t.ok(jsonMatches('{"a":1,"b":"…s","c":"…"}', '{"c":{"deep":true},"b":"4s","a":1}'), "keys in any order");
  t.notOk(jsonMatches('{"a":1}', '{"a":1,"b":2}'), "no extra keys");
  t.notOk(jsonMatches('{"a":[1,2]}', '{"a":[1,2,3]}'), "arrays of the same length");
  t.notOk(jsonMatches('{"a":"1"}', '{"a":1}'), "types count");
  t.notOk(jsonMatches('{"a":1}', "not json"));
  t.throws(() => jsonMatches("{oops", "{}"), { message: /is not JSON/ });
  t.ok(
    logShows('level=warning msg="b …"', 'time="t" level=info msg="a"\ntime="t" level=warning msg="b c"\n'),
  );
  t.ok(logShows("one\nthree", "x one\ntwo\nx three"), "other lines between");
  t.notOk(logShows("three\none", "x one\ntwo\nx three"), "in order");
  t.equal(
    moved(
      "curl localhost:8080/json 18080 8080x -port 8081 10.0.8080",
      new Map([
        [8080, 40001],
        [8081, 40002],
      ]),
    ),
    "curl localhost:40001/json 18080 8080x -port 40002 10.0.8080",
    "whole port numbers only",
  );
});

t.test("the README says what the project requires of a newcomer", async (t) => {
  const readme = pages.find((page) => page.name === "README.md")!.source;
  for (const needed of [
    "npm ci && npm start",
    "npm test",
    "redis-server",
    "memcached",
    "chromium",
    "PostgreSQL",
    "h2load",
    "openssl",
    "docs/architecture.md#dependencies-and-why",
    "## Who may reach what",
  ]) {
    t.ok(readme.includes(needed), needed);
  }
  t.ok(readme.split("\n").length <= 180, `short: ${readme.split("\n").length} lines`);
});

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");
}

t.test("every relative link of the docs leads to a file, and to a heading of it", async (t) => {
  const root = new URL("../../", import.meta.url);
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = (file: string): Set<string> => {
    let found = anchors.get(file);
    if (found === undefined) {
      const source = readFileSync(new URL(file, root), "utf8");
      const headings = [...source.replace(/```[\s\S]*?```/g, "").matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!);
      found = new Set(headings.map(anchorOf));
      anchors.set(file, found);
    }
    return found;
  };
  let checked = 0;
  for (const page of pages) {
    const dir = page.name.includes("/") ? page.name.slice(0, page.name.lastIndexOf("/") + 1) : "";
    const text = page.source.replace(/```[\s\S]*?```/g, "");
    for (const [, target = ""] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [path = "", anchor] = target.split("#");
      const file = path === "" ? page.name : new URL(path, new URL(dir, "file:///r/")).pathname.slice(3);
      checked++;
      t.doesNotThrow(() => readFileSync(new URL(file, root)), `${page.name}: ${target} exists`);
      if (anchor !== undefined && file.endsWith(".md")) {
        t.ok(anchorsOf(file).has(anchor), `${page.name}: ${target} is a heading of ${file}`);
      }
    }
  }
  t.ok(checked >= 50, `${checked} links checked`);
});

t.test("a single test file run covers nothing and still exits 0 (.taprc)", async (t) => {
  const taprc = yaml.load(readFileSync(new URL("../../.taprc", import.meta.url), "utf8")) as Record<
    string,
    unknown
  >;
  t.equal(
    taprc["allow-empty-coverage"],
    true,
    "an end-to-end or docs file alone: no `# No coverage generated` exit 1",
  );
  t.equal(taprc["allow-incomplete-coverage"], true);
});
