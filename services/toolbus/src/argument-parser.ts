import { jsonrepair } from 'jsonrepair';
import { PAYLOAD_LIMITS, parseBoundedJson, type BoundedDecode, type PayloadLimits } from '@hermes/contracts';
import { preview } from './argument-issues.js';
import { limitArgumentIssues } from './payload-limits.js';
import type { ArgumentIssue, ToolArguments } from './tool-types.js';

export type ParsedArguments = { ok: true; value: ToolArguments; repaired: boolean } | { ok: false; issues: ArgumentIssue[] };

/**
 * Reads the argument text a model produced, within the tool-argument limits (size and nesting
 * are measured on the text before it is parsed or repaired, the rest right after): arguments over
 * them are refused with issues naming the limit and path, before ajv or a tool sees them.
 * Models often emit almost-JSON (trailing commas,
 * single quotes, a Markdown code fence, raw newlines inside strings, a cut-off closing brace, or
 * the object encoded twice); those are repaired rather than bounced back, since the intent is
 * clear. Empty text means "no arguments".
 */
export function parseArguments(raw: string, limits: PayloadLimits = PAYLOAD_LIMITS.toolArguments): ParsedArguments {
  const text = raw.trim();
  if (text === '') return { ok: true, value: {}, repaired: false };
  let value: unknown;
  let repaired = false;
  const parsed = parseBoundedJson(text, limits, { what: 'arguments' });
  if (parsed.ok) value = parsed.value;
  else if (parsed.reason === 'limit') return overLimits(parsed);
  else {
    let fixed: BoundedDecode;
    try {
      fixed = parseBoundedJson(jsonrepair(text), limits, { what: 'arguments' });
    } catch (err) {
      return notAnObject(raw, `arguments are not valid JSON and could not be repaired (${(err as Error).message})`);
    }
    if (!fixed.ok)
      return fixed.reason === 'limit' ? overLimits(fixed) : notAnObject(raw, `arguments are not valid JSON and could not be repaired (${fixed.message})`);
    value = fixed.value;
    repaired = true;
  }
  // An object serialised twice arrives as a JSON string holding JSON.
  if (typeof value === 'string' && /^\s*\{/.test(value)) {
    const inner = parseArguments(value, limits);
    if (inner.ok) return { ok: true, value: inner.value, repaired: true };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return notAnObject(raw, 'arguments must be a JSON object');
  }
  return { ok: true, value: value as ToolArguments, repaired };
}

function overLimits(decoded: BoundedDecode & { ok: false }): ParsedArguments {
  return { ok: false, issues: limitArgumentIssues(decoded.limits) };
}

function notAnObject(raw: string, message: string): ParsedArguments {
  return { ok: false, issues: [{ path: '', message, expected: 'a JSON object, e.g. {"name": "value"}', got: preview(raw) }] };
}
