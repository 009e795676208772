import type { ErrorObject } from 'ajv';
import type { ArgumentIssue } from './tool-types.js';

const MAX_ISSUES = 20;
const PREVIEW_CHARS = 120;

/**
 * Turns ajv errors (compiled with `verbose`) into issues a model can act on: which argument
 * (JSON Pointer), what is wrong, what was expected and what it sent.
 */
export function describeIssues(errors: readonly ErrorObject[]): ArgumentIssue[] {
  const seen = new Set<string>();
  const issues: ArgumentIssue[] = [];
  for (const e of errors) {
    const issue = toIssue(e);
    const id = `${issue.path}\u0000${issue.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    issues.push(issue);
    if (issues.length === MAX_ISSUES) break;
  }
  return issues;
}

function toIssue(e: ErrorObject): ArgumentIssue {
  const params = e.params as Record<string, unknown>;
  const parent = (e.parentSchema ?? {}) as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': {
      const name = String(params.missingProperty);
      const props = (parent.properties ?? {}) as Record<string, unknown>;
      return {
        path: `${e.instancePath}/${escapePointer(name)}`,
        message: 'is required',
        expected: describeSchema(props[name]) ?? 'a value',
        got: 'nothing (missing)',
      };
    }
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const known = Object.keys((parent.properties ?? {}) as Record<string, unknown>);
      const value = (e.data as Record<string, unknown> | undefined)?.[name];
      return {
        path: `${e.instancePath}/${escapePointer(name)}`,
        message: known.length ? `is not an allowed property (allowed: ${known.join(', ')})` : 'is not an allowed property (this object takes none)',
        expected: 'no such property',
        got: preview(value),
      };
    }
    case 'format':
      return {
        path: e.instancePath,
        message: `must match format "${String(params.format)}"`,
        expected: describeSchema(parent) ?? 'a formatted string',
        got: preview(e.data),
      };
    case 'enum':
      return {
        path: e.instancePath,
        message: 'must be one of the allowed values',
        expected: describeSchema(parent) ?? 'an allowed value',
        got: preview(e.data),
      };
    default:
      return {
        path: e.instancePath,
        message: e.message ?? 'is invalid',
        expected: describeSchema(parent) ?? `${e.keyword} ${JSON.stringify(e.schema)}`,
        got: preview(e.data),
      };
  }
}

/** A short description of what a schema accepts, e.g. `string (format date)` or `integer >= 1`. */
export function describeSchema(schema: unknown): string | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if ('const' in s) return `exactly ${JSON.stringify(s.const)}`;
  const type = Array.isArray(s.type) ? s.type.join(' or ') : typeof s.type === 'string' ? s.type : undefined;
  const details: string[] = [];
  if (typeof s.format === 'string') details.push(`format ${s.format}`);
  if (typeof s.pattern === 'string') details.push(`matching /${s.pattern}/`);
  for (const [key, words] of [
    ['minLength', 'at least %s characters'],
    ['maxLength', 'at most %s characters'],
    ['minimum', '>= %s'],
    ['exclusiveMinimum', '> %s'],
    ['maximum', '<= %s'],
    ['exclusiveMaximum', '< %s'],
    ['minItems', 'at least %s items'],
    ['maxItems', 'at most %s items'],
  ] as const) {
    if (typeof s[key] === 'number') details.push(words.replace('%s', String(s[key])));
  }
  if (!type && details.length === 0) return undefined;
  return [type ?? 'value', details.length ? `(${details.join(', ')})` : ''].filter(Boolean).join(' ');
}

/** The value as JSON, cut to a length that fits an error message. */
export function preview(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
