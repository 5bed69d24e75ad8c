/**
 * Where `ratelimitd-admin` writes: results to stdout, errors and progress to stderr. The entry point
 * binds it to the process; the commands never touch `process` themselves.
 */
export interface AdminIo {
  /** Writes one line of results (a newline is added). */
  out(line: string): void;
  /** Writes one line to stderr (a newline is added). */
  err(line: string): void;
  /** Writes raw text to stderr (a progress bar redrawn in place). */
  errRaw(text: string): void;
  /** stderr is a terminal: progress is a bar redrawn in place rather than one line per batch. */
  readonly errIsTty: boolean;
  /** Width of that terminal (80 when unknown). */
  readonly errColumns: number;
}

/** The process's own streams. */
export function processIo(): AdminIo {
  return {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    errRaw: (text) => process.stderr.write(text),
    errIsTty: process.stderr.isTTY === true,
    errColumns: process.stderr.columns || 80,
  };
}
