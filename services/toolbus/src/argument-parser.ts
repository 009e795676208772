import { jsonrepair } from 'jsonrepair';
import { preview } from './argument-issues.js';
import type { ArgumentIssue, ToolArguments } from './tool-types.js';

export type ParsedArguments = { ok: true; value: ToolArguments; repaired: boolean } | { ok: false; issue: ArgumentIssue };

/**
 * Reads the argument text a model produced. Models often emit almost-JSON (trailing commas,
 * single quotes, a Markdown code fence, raw newlines inside strings, a cut-off closing brace, or
 * the object encoded twice); those are repaired rather than bounced back, since the intent is
 * clear. Empty text means "no arguments".
 */
export function parseArguments(raw: string): ParsedArguments {
  const text = raw.trim();
  if (text === '') return { ok: true, value: {}, repaired: false };
  let value: unknown;
  let repaired = false;
  try {
    value = JSON.parse(text);
  } catch {
    try {
      value = JSON.parse(jsonrepair(text));
      repaired = true;
    } catch (err) {
      return notAnObject(raw, `arguments are not valid JSON and could not be repaired (${(err as Error).message})`);
    }
  }
  // An object serialised twice arrives as a JSON string holding JSON.
  if (typeof value === 'string' && /^\s*\{/.test(value)) {
    const inner = parseArguments(value);
    if (inner.ok) return { ok: true, value: inner.value, repaired: true };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return notAnObject(raw, 'arguments must be a JSON object');
  }
  return { ok: true, value: value as ToolArguments, repaired };
}

function notAnObject(raw: string, message: string): ParsedArguments {
  return { ok: false, issue: { path: '', message, expected: 'a JSON object, e.g. {"name": "value"}', got: preview(raw) } };
}
