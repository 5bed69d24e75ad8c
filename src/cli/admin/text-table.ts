/**
 * Rows as aligned columns under an upper-case header, two spaces apart, the last column unpadded: how the
 * list commands print without `--json`.
 */
export function textTable(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(headers.map((header) => header.toUpperCase())), ...rows.map(line)];
}

/** `-` for a missing value. */
export function orDash(value: string | number | null | undefined): string {
  return value === null || value === undefined || value === "" ? "-" : String(value);
}
