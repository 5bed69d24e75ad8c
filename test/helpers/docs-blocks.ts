import { lexer, type Token } from "marked";

/**
 * The fenced blocks of the documentation, as docs/development.md ("Every example is a test") defines them.
 * A shell block (```sh) is either
 * - `sh runnable`: run by test/e2e/docs-examples.test.ts, top to bottom with the page's other blocks; it must
 *   exit 0, or the code `exit=N` names;
 * - `sh runnable background`: a daemon the reader starts in a terminal of its own; started, waited for until
 *   its HTTP port answers, and stopped (Ctrl-C, SIGINT) before the page's next background block or at its
 *   end;
 * - `sh not-runnable <reason>`: not run here, for a {@link NOT_RUNNABLE_REASONS reason} the test checks it
 *   some other way for.
 * A `text output` or `json output` block right after a runnable one is what it must print on stdout, where
 * `…` stands for anything the clock or the run decides. A `text stderr` block after a runnable one, or a
 * `text log` block after a background one, holds lines its stderr (a daemon's log) must show, in that order,
 * each the end of one of its lines (after the timestamp), other lines between them allowed; a `text log`
 * block after a runnable one, lines the page's background daemon has logged once the block has run.
 */
export interface DocBlock {
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The fence's language: `sh`, `json`, `yaml`, … */
  readonly language: string;
  /** The words after the language. */
  readonly markers: readonly string[];
  readonly text: string;
}

/** A shell block and what the docs say it prints. */
export interface ShellExample {
  readonly block: DocBlock;
  readonly kind: "runnable" | "background" | "not-runnable";
  /** The exit code it must end with (runnable). */
  readonly exitCode: number;
  /** not-runnable: why. */
  readonly reason: string | undefined;
  readonly stdout: DocBlock | undefined;
  readonly stderr: DocBlock | undefined;
  /** Lines the background daemon's log shows (once started, or once this runnable block has run). */
  readonly log: DocBlock | undefined;
}

/** Why a shell block may stay unrun, and what the test does with it instead. */
export const NOT_RUNNABLE_REASONS: Readonly<Record<string, string>> = {
  docker: "no container engine here: every line is a docker command; docker run lines are parsed and checked",
  kubectl: "no cluster here: every line is a kubectl command",
  install: "installs the project (npm ci, apt-get): what .ci/run does on a clean machine",
  suite: "tests, CI's checks and benchmarks: minutes to hours, run by CI (.ci/run) and by hand",
  "your-values": "names hosts, files or credentials of the reader's own (shown with <placeholders>)",
};

const SHELL_LANGUAGES = new Set(["sh", "bash", "shell", "console", "zsh"]);

/** Every fenced block of `source` in document order (inside lists and block quotes too). */
export function docBlocks(source: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  let cursor = 0;
  const visit = (tokens: readonly Token[]): void => {
    for (const token of tokens) {
      if (token.type === "code" && token.raw.trimStart().startsWith("```")) {
        const at = source.indexOf(token.raw.trimStart().split("\n")[0]!, cursor);
        cursor = at < 0 ? cursor : at + 1;
        const [language = "", ...markers] = (token.lang ?? "").trim().split(/\s+/);
        const line = at < 0 ? 0 : source.slice(0, at).split("\n").length;
        blocks.push({ line, language, markers, text: token.text });
      } else if (token.type === "list") {
        for (const item of token.items) visit(item.tokens);
      } else if (token.type === "blockquote") {
        visit(token.tokens ?? []);
      }
    }
  };
  visit(lexer(source, { gfm: true }));
  return blocks;
}

/** The page's shell blocks with their output blocks; throws on a block that breaks the convention. */
export function shellExamples(page: string, source: string): ShellExample[] {
  const blocks = docBlocks(source);
  const examples: ShellExample[] = [];
  const where = (block: DocBlock) => `${page}:${block.line}`;
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!;
    if (isShownOutput(block)) {
      const owner = examples.at(-1);
      const taken = owner?.stdout === block || owner?.stderr === block || owner?.log === block;
      if (!taken) throw new Error(`${where(block)}: an output block must follow a runnable sh block`);
      continue;
    }
    if (!SHELL_LANGUAGES.has(block.language)) continue;
    if (block.language !== "sh")
      throw new Error(`${where(block)}: shell blocks are \`sh\`, not ${block.language}`);
    const [first, ...rest] = block.markers;
    let example: ShellExample;
    if (first === "runnable") {
      const background = rest.includes("background");
      const exit = rest.find((word) => word.startsWith("exit="));
      const unknown = rest.filter((word) => word !== "background" && word !== exit);
      if (unknown.length > 0) throw new Error(`${where(block)}: unknown marker ${unknown.join(" ")}`);
      const outputs: DocBlock[] = [];
      for (
        let next = blocks[i + 1];
        next !== undefined && isShownOutput(next);
        next = blocks[i + 1 + outputs.length]
      )
        outputs.push(next);
      const stdout = outputs.find((next) => next.markers.includes("output"));
      const stderr = outputs.find((next) => next.markers.includes("stderr"));
      const log = outputs.find((next) => next.markers.includes("log"));
      if (background && (stdout ?? stderr))
        throw new Error(`${where(block)}: a background block shows its log, not an output`);
      example = {
        block,
        kind: background ? "background" : "runnable",
        exitCode: exit === undefined ? 0 : Number(exit.slice("exit=".length)),
        reason: undefined,
        stdout,
        stderr,
        log,
      };
    } else if (first === "not-runnable") {
      const reason = rest.join(" ");
      if (!(reason in NOT_RUNNABLE_REASONS))
        throw new Error(
          `${where(block)}: not-runnable needs one of: ${Object.keys(NOT_RUNNABLE_REASONS).join(", ")}`,
        );
      example = {
        block,
        kind: "not-runnable",
        exitCode: 0,
        reason,
        stdout: undefined,
        stderr: undefined,
        log: undefined,
      };
    } else {
      throw new Error(
        `${where(block)}: a sh block is \`sh runnable\`, \`sh runnable background\` or \`sh not-runnable <reason>\``,
      );
    }
    examples.push(example);
  }
  return examples;
}

function isShownOutput(block: DocBlock): boolean {
  return (
    block.markers.includes("output") || block.markers.includes("stderr") || block.markers.includes("log")
  );
}

/** Whether each line `expected` shows ends one of `log`'s lines, in that order (`…` standing for anything). */
export function logShows(expected: string, log: string): boolean {
  const lines = log.split("\n");
  let from = 0;
  for (const wanted of expected.replace(/\n+$/, "").split("\n")) {
    const pattern = linePattern(`…${wanted}`);
    const at = lines.findIndex((line, i) => i >= from && pattern.test(line));
    if (at < 0) return false;
    from = at + 1;
  }
  return true;
}

/** Lines of a shell block with `\` continuations joined and comments dropped. */
export function commandLines(text: string): string[] {
  const joined = text.replace(/\\\n\s*/g, " ");
  return joined
    .split("\n")
    .map((line) => line.replace(/(^|\s)#.*$/, "").trim())
    .filter((line) => line !== "");
}

/** Whether `actual` is what `expected` shows, `…` standing for any run of characters within a line. */
export function textMatches(expected: string, actual: string): boolean {
  const want = expected.replace(/\n+$/, "").split("\n");
  const got = actual.replace(/\n+$/, "").split("\n");
  return want.length === got.length && want.every((line, i) => linePattern(line).test(got[i]!));
}

/**
 * Whether the JSON text `actual` is the document `expected` shows: same keys and array lengths; a string
 * containing `…` matches any value whose text it matches (`"…"` matches anything).
 */
export function jsonMatches(expected: string, actual: string): boolean {
  let want: unknown;
  try {
    want = JSON.parse(expected);
  } catch (error) {
    throw new Error(`the page's json output block is not JSON: ${(error as Error).message}`);
  }
  let got: unknown;
  try {
    got = JSON.parse(actual);
  } catch {
    return false;
  }
  return valueMatches(want, got);
}

function valueMatches(want: unknown, got: unknown): boolean {
  if (typeof want === "string" && want.includes("…")) {
    return typeof got !== "object" || got === null ? linePattern(want).test(String(got)) : want === "…";
  }
  if (Array.isArray(want)) {
    return (
      Array.isArray(got) && got.length === want.length && want.every((item, i) => valueMatches(item, got[i]))
    );
  }
  if (typeof want === "object" && want !== null) {
    if (typeof got !== "object" || got === null || Array.isArray(got)) return false;
    const wantKeys = Object.keys(want).sort();
    const gotKeys = Object.keys(got).sort();
    return (
      wantKeys.join("\n") === gotKeys.join("\n") &&
      wantKeys.every((key) =>
        valueMatches((want as Record<string, unknown>)[key], (got as Record<string, unknown>)[key]),
      )
    );
  }
  return want === got;
}

function linePattern(line: string): RegExp {
  const parts = line.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*?")}$`, "s");
}
