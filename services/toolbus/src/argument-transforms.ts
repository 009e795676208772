import { FORBIDDEN_KEYS, UNIT_FACTORS, dimensionOf, valueAtPointer, type ArgumentAdjustment, type ArgumentTransform } from '@hermes/contracts';
import { preview } from './argument-issues.js';
import { formatClock, parseDateInput } from './date-input.js';
import type { ArgumentIssue, ToolArguments } from './tool-types.js';

export interface ShapedArguments {
  value: ToolArguments;
  adjustments: ArgumentAdjustment[];
  /** Arguments no transform could make sense of (a unit of another dimension, a natural-language time). */
  issues: ArgumentIssue[];
}

/** Told to the model for a `date-time` argument that is not one: tools get instants, not phrases. */
export const DATE_TIME_HINT =
  'must be an ISO 8601 date-time with an offset, e.g. "2026-12-03T09:00:00+01:00"; resolve words like "tomorrow" or "next Monday" with the time_now tool (and date_add) first, then call this tool again with the result';

// Spellings models use for the units of UNIT_FACTORS.
const UNIT_WORDS: Record<string, string> = {
  msec: 'ms',
  millisecond: 'ms',
  milliseconds: 'ms',
  sec: 's',
  secs: 's',
  second: 's',
  seconds: 's',
  m: 'min',
  mins: 'min',
  minute: 'min',
  minutes: 'min',
  hr: 'h',
  hrs: 'h',
  hour: 'h',
  hours: 'h',
  day: 'd',
  days: 'd',
  meter: 'm',
  meters: 'm',
  metre: 'm',
  metres: 'm',
  kilometer: 'km',
  kilometers: 'km',
  gram: 'g',
  grams: 'g',
  kilogram: 'kg',
  kilograms: 'kg',
  bytes: 'B',
};
const COMPLETE_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}(?::?\d{2})?)$/;
const QUANTITY = /^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-zµ]{1,16})?\s*$/;

/**
 * The second step of a call (repair → transform → validate → rules): the tool's declared
 * transforms in order, then every `format: date-time` argument made an ISO 8601 string with an
 * explicit offset (none written: UTC, as `date_add` reads it). Works on a copy; each change is
 * reported so the model learns what the tool really received.
 */
export function shapeArguments(args: ToolArguments, transforms: readonly ArgumentTransform[], schema: Record<string, unknown>): ShapedArguments {
  const value = structuredClone(args);
  const out: ShapedArguments = { value, adjustments: [], issues: [] };
  for (const t of transforms) applyTransform(out, t);
  for (const path of dateTimePaths(schema, value, '')) normaliseDateTime(out, path);
  return out;
}

function applyTransform(out: ShapedArguments, t: ArgumentTransform): void {
  const slot = slotOf(out.value, t.field);
  if (!slot) return;
  const { parent, key } = slot;
  if (t.op === 'alias') {
    if (Object.hasOwn(parent, key)) return; // sent under its own name: an alias beside it is left for validation to refuse
    const alias = t.aliases.find((a) => Object.hasOwn(parent, a) && !FORBIDDEN_KEYS.includes(a));
    if (alias === undefined) return;
    setOwn(parent, key, parent[alias]);
    delete parent[alias];
    const base = t.field.slice(0, t.field.lastIndexOf('/'));
    out.adjustments.push({ path: t.field, transform: 'alias', from: `${base}/${alias}`, to: t.field });
    return;
  }
  if (!Object.hasOwn(parent, key)) return;
  const before = parent[key];
  let after: unknown = before;
  if (t.op === 'trim' && typeof before === 'string') after = before.trim();
  else if (t.op === 'case' && typeof before === 'string') after = t.to === 'lower' ? before.toLowerCase() : before.toUpperCase();
  else if (t.op === 'unit' && typeof before === 'string') {
    const converted = convertUnit(before, t.unit);
    if (typeof converted === 'string') {
      out.issues.push({ path: t.field, message: converted, expected: `a number in ${t.unit}, or a string such as "90 ${t.unit}"`, got: preview(before) });
      return;
    }
    after = converted;
  }
  if (after === before) return;
  setOwn(parent, key, after);
  out.adjustments.push({ path: t.field, transform: t.op, from: preview(before), to: preview(after) });
}

/** "1.5 h" in `unit` (a number), or why it cannot be read as a quantity of that dimension. */
function convertUnit(text: string, unit: string): number | string {
  const m = QUANTITY.exec(text);
  if (!m) return `is not a quantity in ${unit} (a number with an optional unit)`;
  const dimension = dimensionOf(unit)!;
  const factors = UNIT_FACTORS[dimension]!;
  const raw = m[2];
  // The dimension's own symbols first, so `m` is metres for a length and minutes for a duration.
  const from = raw === undefined ? unit : Object.hasOwn(factors, raw) ? raw : (UNIT_WORDS[raw.toLowerCase()] ?? raw);
  if (!Object.hasOwn(factors, from)) return `has the unit "${raw}", which is not a ${dimension} unit (${Object.keys(factors).join(', ')})`;
  const result = (Number(m[1]) * factors[from]!) / factors[unit]!;
  // Float noise from the factors (0.1 km → 100.00000000000001 m) is not what anyone meant.
  return Number(result.toPrecision(12));
}

function normaliseDateTime(out: ShapedArguments, path: string): void {
  const slot = slotOf(out.value, path);
  if (!slot || !Object.hasOwn(slot.parent, slot.key)) return;
  const before = slot.parent[slot.key];
  if (typeof before !== 'string') return; // the schema's type check reports it
  // Already ISO 8601 with an offset: kept exactly (sub-millisecond digits, `+0100`), the format check judges it.
  if (COMPLETE_DATE_TIME.test(before)) return;
  let normal: string | undefined;
  try {
    const d = parseDateInput(before, path);
    if (!d.dateOnly) normal = formatClock(d.clockMs, d.offsetMinutes, false);
  } catch {
    normal = undefined;
  }
  if (normal === undefined) {
    out.issues.push({ path, message: DATE_TIME_HINT, expected: 'string (format date-time, with an offset)', got: preview(before) });
    return;
  }
  if (normal === before) return;
  setOwn(slot.parent, slot.key, normal);
  out.adjustments.push({ path, transform: 'date_time', from: preview(before), to: preview(normal) });
}

/** Pointers of the values in `value` that the schema declares `format: date-time` (through properties and items). */
function dateTimePaths(schema: unknown, value: unknown, at: string, depth = 0): string[] {
  if (depth > 16 || !schema || typeof schema !== 'object') return [];
  const s = schema as Record<string, unknown>;
  if (s.format === 'date-time') return [at];
  const paths: string[] = [];
  const props = s.properties;
  if (props && typeof props === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [name, sub] of Object.entries(props as Record<string, unknown>)) {
      if (Object.hasOwn(value, name)) paths.push(...dateTimePaths(sub, (value as Record<string, unknown>)[name], `${at}/${escape(name)}`, depth + 1));
    }
  }
  if (s.items && typeof s.items === 'object' && Array.isArray(value)) {
    value.forEach((v, i) => paths.push(...dateTimePaths(s.items, v, `${at}/${i}`, depth + 1)));
  }
  return paths;
}

/** The object holding the value at `pointer` and its key there; undefined when the parent is not an object. */
function slotOf(root: ToolArguments, pointer: string): { parent: Record<string, unknown>; key: string } | undefined {
  const cut = pointer.lastIndexOf('/');
  if (cut < 0) return undefined;
  const parent = valueAtPointer(root, pointer.slice(0, cut));
  const key = pointer
    .slice(cut + 1)
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
  if (!parent || typeof parent !== 'object' || FORBIDDEN_KEYS.includes(key)) return undefined;
  return { parent: parent as Record<string, unknown>, key };
}

/** An own data property even for a key like `__proto__` (assignment would set the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

function escape(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
