/**
 * A readable diff of two conversations, for a replay's divergence report: each message becomes
 * a few lines (`[2] tool: {...}`, `[1] assistant → lookup({"q":"x"})`), and the two line lists
 * are diffed (longest common subsequence), unchanged lines kept as context around each change.
 */
export function diffMessages(expected: readonly unknown[], actual: readonly unknown[], o: { context?: number; maxLines?: number } = {}): string {
  return diffLines(expected.flatMap(renderMessage), actual.flatMap(renderMessage), o);
}

/** The lines of one chat message: role and content, tool calls one per line; long contents cut. */
export function renderMessage(m: unknown, index: number): string[] {
  const msg = (m ?? {}) as { role?: string; content?: unknown; tool_calls?: { function?: { name?: string; arguments?: string } }[]; tool_call_id?: string };
  const content = typeof msg.content === 'string' ? msg.content : msg.content == null ? '' : JSON.stringify(msg.content);
  const head = `[${index}] ${msg.role ?? '?'}${msg.tool_call_id ? ` (${msg.tool_call_id})` : ''}:`;
  const lines = content.split('\n').map((l, i) => (i === 0 ? `${head} ${cut(l)}` : `    ${cut(l)}`));
  for (const c of msg.tool_calls ?? []) lines.push(`[${index}] assistant → ${c.function?.name ?? '?'}(${cut(c.function?.arguments ?? '')})`);
  return lines;
}

/** A unified-style diff of two line lists: `-` only in expected, `+` only in actual, `  ` context. */
export function diffLines(a: readonly string[], b: readonly string[], o: { context?: number; maxLines?: number } = {}): string {
  const context = o.context ?? 2;
  const maxLines = o.maxLines ?? 80;
  // LCS table from the end; conversations are tens of lines, so quadratic is fine.
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: { op: ' ' | '-' | '+'; line: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ op: ' ', line: a[i]! });
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i]![j + 1]! > lcs[i + 1]![j]!)) ops.push({ op: '+', line: b[j++]! });
    else ops.push({ op: '-', line: a[i++]! });
  }
  const keep = ops.map((o, k) => o.op !== ' ' || ops.slice(Math.max(0, k - context), k + context + 1).some((x) => x.op !== ' '));
  const out: string[] = [];
  ops.forEach((o, k) => {
    if (keep[k]) out.push(`${o.op} ${o.line}`);
    else if (keep[k - 1]) out.push('  …');
  });
  if (out.length > maxLines) return [...out.slice(0, maxLines), `  … ${out.length - maxLines} more lines`].join('\n');
  return out.join('\n');
}

function cut(s: string, max = 240): string {
  return s.length > max ? `${s.slice(0, max)}…(${s.length - max} more chars)` : s;
}
