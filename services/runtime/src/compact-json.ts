/** Appended to a rendering that was cut at its bound; a prompt ending in it is never sent (see opening-budget.ts). */
export const CUT_MARKER = '…[cut: too large to render]';

/** What {@link renderCompactJson} produced. */
export interface CompactJson {
  text: string;
  /** False when the value did not fit into `maxChars` and `text` ends in {@link CUT_MARKER}. */
  complete: boolean;
}

type Frame = { close: string; items: Iterator<[string | undefined, unknown]>; first: boolean };

/**
 * JSON without indentation, written without recursion: a value nested thousands deep renders in
 * time and size linear in the value (pretty-printing adds its depth in spaces to every line,
 * quadratic in the depth) and cannot overflow the stack. Writing stops once `maxChars` is passed,
 * so a huge value costs no more than the bound; the text is then cut there and marked.
 */
export function renderCompactJson(value: unknown, opts: { maxChars: number }): CompactJson {
  const parts: string[] = [];
  let length = 0;
  const write = (s: string): boolean => {
    parts.push(s);
    length += s.length;
    return length <= opts.maxChars;
  };
  const stack: Frame[] = [];
  // A value to write next, with the key it is written under inside an object.
  let pending: { key: string | undefined; value: unknown } | undefined = { key: undefined, value };
  let fits = true;
  while (fits && (pending || stack.length > 0)) {
    if (!pending) {
      const frame = stack.at(-1)!;
      const next = frame.items.next();
      if (next.done) {
        stack.pop();
        fits = write(frame.close);
        continue;
      }
      const [key, item] = next.value;
      // As JSON.stringify: object members that have no JSON form are left out (in arrays they are null).
      if (key !== undefined && !hasJsonForm(item)) continue;
      if (!frame.first) fits = write(',');
      frame.first = false;
      pending = { key, value: item };
      continue;
    }
    const { key, value: current } = pending;
    pending = undefined;
    if (key !== undefined) fits = write(`${JSON.stringify(key)}:`);
    if (!fits) break;
    if (Array.isArray(current)) {
      fits = write('[');
      stack.push({ close: ']', items: arrayItems(current), first: true });
    } else if (current !== null && typeof current === 'object') {
      fits = write('{');
      stack.push({ close: '}', items: objectItems(current as Record<string, unknown>), first: true });
    } else {
      fits = write(primitive(current, opts.maxChars - length));
    }
  }
  const text = parts.join('');
  return fits ? { text, complete: true } : { text: `${text.slice(0, opts.maxChars)}${CUT_MARKER}`, complete: false };
}

function* arrayItems(items: readonly unknown[]): Iterator<[string | undefined, unknown]> {
  for (const item of items) yield [undefined, item];
}

function* objectItems(object: Record<string, unknown>): Iterator<[string | undefined, unknown]> {
  for (const key of Object.keys(object)) yield [key, object[key]];
}

function hasJsonForm(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}

/** A primitive as JSON; a string longer than what is left is only escaped up to there. */
function primitive(value: unknown, room: number): string {
  if (typeof value === 'string') return JSON.stringify(value.length > room ? value.slice(0, Math.max(0, room) + 1) : value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  return 'null';
}
