/** Rows (the first is the header) as aligned columns, two spaces apart; a row's last cell is not padded. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const columns = Math.max(0, ...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, col) => Math.max(0, ...rows.map((r) => (r[col] ?? '').length)));
  return rows.map((row) => row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]! + 2))).join('')).join('\n');
}
