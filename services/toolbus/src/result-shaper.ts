/**
 * What a tool returned, as JSON the model is given: structured results stay structured, text is
 * wrapped as `{ "result": "..." }`, and anything that does not survive JSON is dropped.
 */
export function normalizeResult(value: unknown): unknown {
  if (typeof value === 'string') return { result: value };
  if (value === undefined) return { result: null };
  const text = JSON.stringify(value);
  return text === undefined ? { result: null } : (JSON.parse(text) as unknown);
}

export interface ShapedResult {
  result: unknown;
  truncated: boolean;
}

/**
 * Fits a normalized result into `maxChars` of JSON. A longer one is cut (text results keep being
 * text; a structured one becomes the beginning of its JSON text) and ends with a marker telling
 * the model that it sees only part, and where the whole is kept.
 */
export function shapeResult(normalized: unknown, maxChars: number, fullResultRef: string): ShapedResult {
  const json = JSON.stringify(normalized);
  if (json.length <= maxChars) return { result: normalized, truncated: false };
  const isText = isTextResult(normalized);
  const whole = isText ? normalized.result : json;
  let keep = maxChars;
  for (;;) {
    const marker = `\n…[truncated: the first ${keep} of ${whole.length} characters${isText ? '' : ' of the JSON result'}; the full result is kept as ${fullResultRef}]`;
    const shown = { result: cut(whole, keep) + marker };
    const size = JSON.stringify(shown).length;
    if (size <= maxChars || keep === 0) return { result: shown, truncated: true };
    keep = Math.max(0, Math.floor((keep * maxChars) / size) - 16);
  }
}

function isTextResult(value: unknown): value is { result: string } {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 1 && typeof (value as { result?: unknown }).result === 'string';
}

/** The first `n` characters, never ending in half a surrogate pair. */
function cut(text: string, n: number): string {
  const part = text.slice(0, n);
  const last = part.charCodeAt(part.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? part.slice(0, -1) : part;
}
