import { Type } from '@sinclair/typebox';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { defineTool, type ToolContext } from '../src/index.js';

describe('defineTool', () => {
  it('types handler arguments from a TypeBox parameters schema', () => {
    const tool = defineTool(
      {
        name: 'weather',
        description: 'the weather in a city',
        parameters: Type.Object({ city: Type.String(), days: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
      },
      async (args, ctx) => {
        expectTypeOf(args).toEqualTypeOf<{ city: string; days?: number }>();
        expectTypeOf(ctx).toEqualTypeOf<ToolContext>();
        return { city: args.city };
      },
    );
    expect(tool.spec.name).toBe('weather');
  });

  it('takes the argument type from an annotated handler when the schema is plain JSON', () => {
    const tool = defineTool(
      { name: 'echo', description: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false } },
      async (args: { text: string }) => args.text,
    );
    expect(typeof tool.handler).toBe('function');
  });

  it('gives a plain JSON object to an unannotated handler of a plain JSON schema', () => {
    defineTool({ name: 'x', description: 'x', parameters: { type: 'object', additionalProperties: false } }, async (args) => {
      expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
      return null;
    });
  });
});
