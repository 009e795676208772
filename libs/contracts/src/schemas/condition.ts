import { Type, type Static } from '@sinclair/typebox';

/** A JSON Pointer into the value a condition looks at (`/order/total`; `""` is the whole value). */
export const FieldPointer = Type.String({ pattern: '^(/[^/]*)*$', maxLength: 512, description: 'JSON Pointer, e.g. /order/total' });

export const ConditionOperator = Type.Union(
  [
    Type.Literal('eq'),
    Type.Literal('ne'),
    Type.Literal('gt'),
    Type.Literal('gte'),
    Type.Literal('lt'),
    Type.Literal('lte'),
    Type.Literal('in'),
    Type.Literal('not_in'),
    Type.Literal('exists'),
    Type.Literal('missing'),
    Type.Literal('contains'),
    Type.Literal('starts_with'),
    Type.Literal('ends_with'),
  ],
  {
    description:
      'gt/gte/lt/lte compare numbers as numbers, two ISO 8601 date-times as instants, other strings by code point; in/not_in take a list; contains works on strings and lists',
  },
);
export type ConditionOperator = Static<typeof ConditionOperator>;

/** A JSON scalar a condition compares with (no objects: a comparison is about one field). */
const Scalar = Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean(), Type.Null()]);

/** One comparison: the field, an operator, and either a literal `value` or another field (`ref`). */
export const FieldTest = Type.Object(
  {
    field: FieldPointer,
    op: ConditionOperator,
    value: Type.Optional(Type.Union([Scalar, Type.Array(Scalar, { maxItems: 256 })])),
    ref: Type.Optional(FieldPointer),
  },
  { title: 'FieldTest', additionalProperties: false },
);
export type FieldTest = Static<typeof FieldTest>;

/** A condition: one field test, or tests combined with `all`, `any` and `not`. */
export type Condition = FieldTest | { all: Condition[] } | { any: Condition[] } | { not: Condition };

/**
 * A declarative test of a JSON value (a message payload, a tool's arguments): field tests combined
 * with `all`, `any` and `not`. Never code: `matchCondition` evaluates it, bounded in depth and size,
 * so a hostile condition or value cannot run anything or take long. The schema says only "object":
 * JSON Schema recursion needs an `$id`, which ajv refuses to see twice in one document, so the
 * shape is checked by `conditionProblems` (the same bounds, with paths).
 */
export const Condition = Type.Unsafe<Condition>(
  Type.Object(
    {},
    {
      title: 'Condition',
      additionalProperties: true,
      description: 'a field test { field, op, value | ref }, or { all: [...] }, { any: [...] }, { not: {...} }; at most 6 levels deep and 64 tests',
    },
  ),
);
