import { FieldTest, type Condition } from './schemas/condition.js';
import type { ValidationIssue } from './schemas/common.js';
import { validate } from './validate.js';

/** How deep `all`/`any`/`not` may nest, and how many field tests one condition may hold. */
export const CONDITION_LIMITS = { maxDepth: 6, maxTests: 64 } as const;

const SCALAR_OPS = new Set(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'starts_with', 'ends_with']);
const LIST_OPS = new Set(['in', 'not_in']);
const PRESENCE_OPS = new Set(['exists', 'missing']);
// Long enough for any ISO 8601 date-time; a longer string is not compared as one (and is not parsed).
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const MAX_DATE_TIME_CHARS = 40;

/** Every problem with a condition's shape (JSON Pointer paths into it); empty when `matchCondition` may evaluate it. */
export function conditionProblems(condition: unknown, base = ''): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  let tests = 0;
  const visit = (node: unknown, path: string, depth: number): void => {
    if (issues.length >= 20) return;
    if (depth > CONDITION_LIMITS.maxDepth) {
      issues.push({ path, message: `nests deeper than ${CONDITION_LIMITS.maxDepth} levels` });
      return;
    }
    if (node === null || typeof node !== 'object' || Array.isArray(node)) {
      issues.push({ path, message: 'must be an object: { field, op, value } or { all | any: [...] } or { not: {...} }' });
      return;
    }
    const keys = Object.keys(node);
    const group = keys.length === 1 && (keys[0] === 'all' || keys[0] === 'any') ? keys[0] : undefined;
    if (group) {
      const list = (node as Record<string, unknown>)[group];
      if (!Array.isArray(list) || list.length === 0 || list.length > 32)
        issues.push({ path: `${path}/${group}`, message: 'must be a list of 1 to 32 conditions' });
      else list.forEach((c, i) => visit(c, `${path}/${group}/${i}`, depth + 1));
      return;
    }
    if (keys.length === 1 && keys[0] === 'not') {
      visit((node as { not: unknown }).not, `${path}/not`, depth + 1);
      return;
    }
    if (++tests > CONDITION_LIMITS.maxTests) {
      if (tests === CONDITION_LIMITS.maxTests + 1) issues.push({ path, message: `holds more than ${CONDITION_LIMITS.maxTests} field tests` });
      return;
    }
    const shape = validate(FieldTest, node);
    if (!shape.ok) {
      issues.push(...shape.issues.map((i) => ({ ...i, path: `${path}${i.path}` })));
      return;
    }
    const t = shape.value;
    const hasValue = t.value !== undefined;
    const hasRef = t.ref !== undefined;
    if (PRESENCE_OPS.has(t.op) && (hasValue || hasRef)) issues.push({ path, message: `"${t.op}" takes no value or ref` });
    else if (LIST_OPS.has(t.op) && (!Array.isArray(t.value) || hasRef)) issues.push({ path: `${path}/value`, message: `"${t.op}" needs a list value` });
    else if (SCALAR_OPS.has(t.op) && (hasValue === hasRef || Array.isArray(t.value))) {
      issues.push({ path, message: `"${t.op}" needs either a scalar value or a ref to another field` });
    }
  };
  visit(condition, base, 1);
  return issues;
}

/**
 * Whether `value` satisfies a condition `conditionProblems` accepted. Pure data access: fields are
 * read only from own properties (never a prototype's `__proto__` or `constructor`), nothing is
 * executed, and the work is bounded by the condition's size (each test reads one or two fields).
 */
export function matchCondition(condition: Condition, value: unknown, depth = 1): boolean {
  if (depth > CONDITION_LIMITS.maxDepth) return false;
  if ('all' in condition) return condition.all.every((c) => matchCondition(c, value, depth + 1));
  if ('any' in condition) return condition.any.some((c) => matchCondition(c, value, depth + 1));
  if ('not' in condition) return !matchCondition(condition.not, value, depth + 1);
  return matchTest(condition, value);
}

/** The fields a condition reads, in order (for naming the argument a broken rule is about). */
export function conditionFields(condition: Condition): string[] {
  if ('all' in condition) return condition.all.flatMap(conditionFields);
  if ('any' in condition) return condition.any.flatMap(conditionFields);
  if ('not' in condition) return conditionFields(condition.not);
  return condition.ref === undefined ? [condition.field] : [condition.field, condition.ref];
}

/** The value at a JSON Pointer, reading own properties only; undefined when any step is missing. */
export function valueAtPointer(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let at: unknown = value;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (at === null || typeof at !== 'object') return undefined;
    if (Array.isArray(at)) {
      if (!/^(0|[1-9]\d{0,8})$/.test(key)) return undefined;
      at = at[Number(key)];
      continue;
    }
    const own = Object.getOwnPropertyDescriptor(at, key);
    // A getter is not data (JSON never has one); reading it could run code.
    at = own && 'value' in own ? own.value : undefined;
  }
  return at;
}

function matchTest(t: FieldTest, root: unknown): boolean {
  const left = valueAtPointer(root, t.field);
  switch (t.op) {
    case 'exists':
      return left !== undefined;
    case 'missing':
      return left === undefined;
    case 'in':
      return Array.isArray(t.value) && t.value.some((v) => left === v);
    case 'not_in':
      return Array.isArray(t.value) && !t.value.some((v) => left === v);
  }
  const right = t.ref !== undefined ? valueAtPointer(root, t.ref) : t.value;
  if (left === undefined || right === undefined) return false;
  switch (t.op) {
    case 'eq':
      return left === right;
    case 'ne':
      return left !== right;
    case 'contains':
      if (typeof left === 'string') return typeof right === 'string' && left.includes(right);
      return Array.isArray(left) && left.some((v) => v === right);
    case 'starts_with':
      return typeof left === 'string' && typeof right === 'string' && left.startsWith(right);
    case 'ends_with':
      return typeof left === 'string' && typeof right === 'string' && left.endsWith(right);
    default: {
      const order = compare(left, right);
      if (order === undefined) return false;
      return t.op === 'gt' ? order > 0 : t.op === 'gte' ? order >= 0 : t.op === 'lt' ? order < 0 : order <= 0;
    }
  }
}

/** Numbers as numbers, two date-times with offsets as instants, strings by code point; otherwise not comparable. */
function compare(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) || Number.isNaN(b) ? undefined : a - b;
  if (typeof a !== 'string' || typeof b !== 'string') return undefined;
  if (isDateTime(a) && isDateTime(b)) {
    const diff = Date.parse(a.replace(' ', 'T')) - Date.parse(b.replace(' ', 'T'));
    if (!Number.isNaN(diff)) return diff;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

function isDateTime(s: string): boolean {
  return s.length <= MAX_DATE_TIME_CHARS && DATE_TIME.test(s);
}
