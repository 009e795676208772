import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import * as addFormatsModule from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import type { ValidationIssue } from './schemas/common.js';

// ajv-formats ships CommonJS; under NodeNext its default import is the module object.
type AddFormats = (ajv: Ajv, formats: string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default: { default?: AddFormats } & AddFormats }).default.default ??
  (addFormatsModule as unknown as { default: AddFormats }).default) as AddFormats;

// Two compilations of each schema: `allErrors` lists every problem of an invalid value, but makes
// every valid one pay too (each failed branch of a union collects its errors: ~15 µs for a task
// event). Values are checked by the fast one, and only a failure is explained by the thorough one.
const options = { strict: true, strictTypes: false, allowUnionTypes: true } as const;
const fast = addFormats(new Ajv({ ...options, allErrors: false }), ['date-time', 'uri', 'email']);
const thorough = addFormats(new Ajv({ ...options, allErrors: true }), ['date-time', 'uri', 'email']);

interface Validators {
  check: ValidateFunction;
  explain?: ValidateFunction;
}
const compiled = new WeakMap<TSchema, Validators>();

/** The compiled validators for a schema; compiled once per schema object, then reused. */
function validatorsFor(schema: TSchema): Validators {
  let v = compiled.get(schema);
  if (!v) {
    v = { check: fast.compile(schema) };
    compiled.set(schema, v);
  }
  return v;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** Validates `value` against `schema`; on failure, lists every problem with a JSON Pointer path. */
export function validate<S extends TSchema>(schema: S, value: unknown): ValidationResult<Static<S>> {
  const v = validatorsFor(schema);
  if (v.check(value)) return { ok: true, value: value as Static<S> };
  v.explain ??= thorough.compile(schema);
  v.explain(value);
  return { ok: false, issues: toIssues(v.explain.errors ?? []) };
}

/** Compiles a schema ahead of use, so a broken schema fails at start-up rather than on a message. */
export function precompile(...schemas: TSchema[]): void {
  // The thorough one too: a schema only it rejects would otherwise fail on the first bad message.
  for (const s of schemas) validatorsFor(s).explain ??= thorough.compile(s);
}

function toIssues(errors: ErrorObject[]): ValidationIssue[] {
  const issues = errors.map((e) => {
    const params = e.params as Record<string, unknown>;
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      path = `${path}/${params.additionalProperty}`;
      message = 'is not an allowed property';
    } else if (e.keyword === 'required' && typeof params.missingProperty === 'string') {
      path = `${path}/${params.missingProperty}`;
      message = 'is required';
    } else if (e.keyword === 'const' && 'allowedValue' in params) {
      message = `must be ${JSON.stringify(params.allowedValue)}`;
    }
    return { path, message, keyword: e.keyword };
  });
  // allErrors plus unions report the same spot several times; keep each (path, message) once.
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.path}\u0000${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
