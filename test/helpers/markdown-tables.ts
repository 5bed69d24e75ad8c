import { lexer, type Token } from "marked";

/** A table as a GFM renderer sees it: cell texts as written (inline Markdown kept). */
export interface MarkdownTable {
  /** 1-based line of its header row. */
  readonly line: number;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** A run of lines that start with `|` but that the parser did not take as a table (its first line). */
export interface UnrenderedTable {
  readonly line: number;
  readonly text: string;
}

/** What {@link markdownTables} found. */
export interface MarkdownTables {
  readonly tables: readonly MarkdownTable[];
  readonly unrendered: readonly UnrenderedTable[];
}

const PIPE_ROW = /^\s*\|/;

/**
 * Parses `source` with marked (GFM, as GitHub renders READMEs) and returns its tables, and every block of
 * `|`-led lines outside code that did not become a table — a missing `|---|` row, a row with the wrong
 * number of cells before it, a blank line splitting a table from its header.
 */
export function markdownTables(source: string): MarkdownTables {
  const tables: MarkdownTable[] = [];
  const unrendered: UnrenderedTable[] = [];
  // Tokens come in document order; each is looked up in the source from where the previous one was found.
  let cursor = 0;
  const lineAt = (text: string): number => {
    const at = source.indexOf(text, cursor);
    if (at < 0) return 0;
    cursor = at;
    return source.slice(0, at).split("\n").length;
  };
  const visit = (tokens: readonly Token[]): void => {
    for (const token of tokens) {
      if (token.type === "table") {
        const line = lineAt(token.raw.split("\n")[0]!);
        const cells = (row: readonly { text: string }[]) => row.map((cell) => cell.text);
        tables.push({ line, header: cells(token.header), rows: token.rows.map(cells) });
      } else if (token.type === "list") {
        for (const item of token.items) visit(item.tokens);
      } else if (token.type === "blockquote") {
        visit(token.tokens ?? []);
      } else if (token.type !== "code" && token.type !== "html") {
        let previousWasPipe = false;
        for (const text of token.raw.split("\n")) {
          const pipe = PIPE_ROW.test(text);
          if (pipe && !previousWasPipe) unrendered.push({ line: lineAt(text), text });
          previousWasPipe = pipe;
        }
      }
    }
  };
  visit(lexer(source, { gfm: true }));
  return { tables, unrendered };
}
