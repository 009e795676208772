import { Ajv, type ValidateFunction } from 'ajv';
import * as addFormatsModule from 'ajv-formats';
import { describeIssues } from './argument-issues.js';
import { parseDateInput } from './date-input.js';
import type { ArgumentIssue } from './tool-types.js';

// ajv-formats ships CommonJS; under NodeNext its default import is the module object.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default: { default?: AddFormats } & AddFormats }).default.default ??
  (addFormatsModule as unknown as { default: AddFormats }).default) as AddFormats;

/** A calendar date or a date-time (offset optional, UTC when absent): what people and models write. */
export function isDateOrDateTime(text: string): boolean {
  try {
    parseDateInput(text, '');
    return true;
  } catch {
    return false;
  }
}

/**
 * Compiles tool argument schemas strictly (unknown keywords and schema mistakes are errors) and
 * checks arguments against them. Object schemas are closed (`additionalProperties: false`) unless
 * they say otherwise, so a model cannot slip in arguments a tool would silently ignore.
 */
export class ArgumentValidator {
  private readonly ajv = new Ajv({ strict: true, allErrors: true, verbose: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
    this.ajv.addFormat('date-or-date-time', { type: 'string', validate: isDateOrDateTime });
  }

  /** The closed schema and its validator, compiled once per distinct schema; throws when the schema is invalid. */
  prepare(parameters: Record<string, unknown>): { schema: Record<string, unknown>; validate: ValidateFunction } {
    const schema = closeObjectSchemas(parameters) as Record<string, unknown>;
    const text = JSON.stringify(schema);
    let validate = this.compiled.get(text);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(text, validate);
    }
    return { schema, validate };
  }

  /** Every problem with `args`, written for the model; empty when they are valid. */
  check(validate: ValidateFunction, args: unknown): ArgumentIssue[] {
    return validate(args) ? [] : describeIssues(validate.errors ?? []);
  }
}

const SUBSCHEMA_MAPS = ['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas'];
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'prefixItems'];
const SUBSCHEMAS = ['items', 'additionalItems', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'];

/**
 * Adds `additionalProperties: false` to every object schema that does not decide it. Schemas
 * combined with `allOf` are left open: closing each part would reject the other parts' properties.
 */
export function closeObjectSchemas(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const s = { ...(schema as Record<string, unknown>) };
  for (const key of SUBSCHEMA_MAPS) {
    const map = s[key];
    if (map && typeof map === 'object' && !Array.isArray(map)) {
      s[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, closeObjectSchemas(v)]));
    }
  }
  for (const key of SUBSCHEMA_LISTS) {
    const list = s[key];
    if (Array.isArray(list)) s[key] = list.map(closeObjectSchemas);
  }
  for (const key of SUBSCHEMAS) {
    const sub = s[key];
    if (Array.isArray(sub)) s[key] = sub.map(closeObjectSchemas);
    else if (sub !== undefined) s[key] = closeObjectSchemas(sub);
  }
  const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object')) || s.properties !== undefined;
  const decided = ['additionalProperties', 'unevaluatedProperties', 'patternProperties', 'allOf', '$ref'].some((k) => s[k] !== undefined);
  if (isObject && !decided) s.additionalProperties = false;
  return s;
}
