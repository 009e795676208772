// Helpers shared by the AsyncAPI and OpenAPI generators: schemas as plain JSON, hoisted by title.
import { readFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Keywords whose value is a schema, an array of schemas, or a map of name to schema. */
const ONE_SCHEMA = [
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
];
const SCHEMA_LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SCHEMA_MAP = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'];

/** Applies `fn` to each direct subschema of a schema node. */
export function mapSubschemas(node: JsonObject, fn: (child: JsonObject) => JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (ONE_SCHEMA.includes(key) && isObject(value)) out[key] = fn(value);
    else if (SCHEMA_LIST.includes(key) && Array.isArray(value)) out[key] = value.map((v) => (isObject(v) ? fn(v) : v));
    else if (SCHEMA_MAP.includes(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isObject(v) ? fn(v) : v]));
    else if (key === 'items' && Array.isArray(value)) out[key] = value.map((v) => (isObject(v) ? fn(v) : v));
    else out[key] = value;
  }
  return out;
}

/** Reading order for schema keywords; the rest follow alphabetically. Property maps keep their declared order. */
const KEYWORD_ORDER = [
  '$ref',
  'title',
  'description',
  'type',
  'const',
  'enum',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'items',
  'required',
  'properties',
  'patternProperties',
  'additionalProperties',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
];

export function orderSchemaKeys(node: JsonObject): JsonObject {
  const rank = (k: string) => {
    const i = KEYWORD_ORDER.indexOf(k);
    return i === -1 ? KEYWORD_ORDER.length : i;
  };
  const keys = Object.keys(node).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const sortedNode: JsonObject = {};
  for (const k of keys) sortedNode[k] = node[k]!;
  return mapSubschemas(sortedNode, orderSchemaKeys);
}

/** The schema as plain JSON: TypeBox's symbol keys ([Kind], [Optional]) dropped. */
export function plain(schema: TSchema): JsonObject {
  return JSON.parse(JSON.stringify(schema)) as JsonObject;
}

export const ref = (pointer: string): JsonObject => ({ $ref: pointer });

export const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export function sortedByKey(obj: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.keys(obj)
      .sort()
      .map((k) => [k, obj[k]!]),
  );
}

export function packageVersion(): string {
  // src/ and dist/ both sit one level below the package root.
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Collects titled schemas under components.schemas, replacing each (at any depth) by a `$ref`;
 * one title must always mean one schema.
 */
export class SchemaRegistry {
  private readonly byTitle = new Map<string, JsonObject>();
  private readonly text = new Map<string, string>();

  /** A `$ref` to the schema, which must have a title. */
  ref(schema: TSchema): JsonObject {
    const node = plain(schema);
    if (typeof node.title !== 'string') throw new Error(`a message payload needs a titled schema: ${JSON.stringify(node).slice(0, 120)}`);
    return this.hoist(nameNested(node, node.title));
  }

  sorted(): JsonObject {
    return sortedByKey(Object.fromEntries(this.byTitle));
  }

  private hoist(node: JsonObject): JsonObject {
    const inner = mapSubschemas(node, (child) => this.hoist(child));
    if (typeof node.title !== 'string') return inner;
    const title = node.title;
    const ordered = orderSchemaKeys(inner);
    const text = JSON.stringify(ordered);
    const seen = this.text.get(title);
    if (seen !== undefined && seen !== text) throw new Error(`two different schemas are titled "${title}"`);
    this.byTitle.set(title, ordered);
    this.text.set(title, text);
    return ref(`#/components/schemas/${title}`);
  }
}

/**
 * Gives every nested schema that code generators turn into a type of its own (objects, unions,
 * enums) a title derived from where it sits — `TaskAcceptedDataSourceEvent`, the `items` of an
 * array `…Item`, a map's values `…Value`, union members `…Option<n>` — unless it has one. Without
 * titles, generators such as modelina name them `AnonymousSchema_<n>` by position, so every
 * change to the document renames other teams' types. The reply envelope's members are named by
 * their role: `<Reply>Ok`, and the one failure shape `ErrorReply` shared by every request.
 */
export function nameNested(schema: JsonObject, title: string): JsonObject {
  const node = recordAsMap(schema);
  const named = (child: JsonObject, name: string): JsonObject =>
    nameNested(needsName(child) && typeof child.title !== 'string' ? { ...child, title: name } : child, typeof child.title === 'string' ? child.title : name);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isObject(v) ? named(v, title + pascalWords(k)) : v]));
    else if (key === 'items' && isObject(value)) out[key] = named(value, `${title}Item`);
    else if ((key === 'additionalProperties' || key === 'patternProperties') && isObject(value)) {
      out[key] =
        key === 'additionalProperties'
          ? named(value, `${title}Value`)
          : Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isObject(v) ? named(v, `${title}Value`) : v]));
    } else if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(value))
      out[key] = value.map((v, i) => (isObject(v) ? named(v, unionMemberName(title, v, i)) : v));
    else out[key] = value;
  }
  return out;
}

/**
 * TypeBox writes `Record<string, X>` as `patternProperties: { "^(.*)$": X }`, which every key
 * matches: the same as `additionalProperties: X`, which generators read as a map of X (with the
 * pattern form they union X with "anything", an anonymous type of its own).
 */
function recordAsMap(node: JsonObject): JsonObject {
  const patterns = node.patternProperties;
  if (!isObject(patterns) || node.properties !== undefined || node.additionalProperties !== undefined) return node;
  const keys = Object.keys(patterns);
  if (keys.length !== 1 || keys[0] !== '^(.*)$' || !isObject(patterns[keys[0]])) return node;
  const { patternProperties: _patterns, ...rest } = node;
  return { ...rest, additionalProperties: patterns[keys[0]]! };
}

/** Whether generators make a type of this schema (an object with properties, a union, an enum). */
function needsName(node: JsonObject): boolean {
  return (node.type === 'object' && isObject(node.properties)) || Array.isArray(node.anyOf) || Array.isArray(node.oneOf) || Array.isArray(node.enum);
}

/** A reply envelope's members by their role; any other union's by position. */
function unionMemberName(title: string, member: JsonObject, index: number): string {
  const ok = isObject(member.properties) ? (member.properties as JsonObject).ok : undefined;
  if (isObject(ok) && ok.const === false) return 'ErrorReply';
  if (isObject(ok) && ok.const === true) return `${title.replace(/Envelope$/, '')}Ok`;
  return `${title}Option${index + 1}`;
}

/** `task_id` → `TaskId`, `data_base64` → `DataBase64`. */
const pascalWords = (name: string) =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map(pascal)
    .join('');

const pascal = (name: string) => name[0]!.toUpperCase() + name.slice(1);
