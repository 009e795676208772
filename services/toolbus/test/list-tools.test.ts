import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { validate, ToolsListReply, type ToolDefinition } from '@hermes/contracts';
import { builtinTools } from '../src/builtin-tools.js';
import { listTools } from '../src/list-tools.js';
import { ToolRegistry } from '../src/tool-registry.js';
import { InvalidToolDefinitionError } from '../src/toolbus-errors.js';

const registry = new ToolRegistry({ tools: builtinTools });
const names = (reply: { tools: ToolDefinition[] }) => reply.tools.map((t) => t.name);

describe('listTools', () => {
  it('offers every built-in tool when the request has no allow-list', () => {
    const reply = listTools(registry, {});
    expect(names(reply)).toEqual(['time_now', 'echo']);
    expect(validate(ToolsListReply, reply).ok).toBe(true);
  });

  it('offers only the tools the allow-list names, ignoring unknown names', () => {
    expect(names(listTools(registry, { allow: ['echo', 'no_such_tool'] }))).toEqual(['echo']);
  });

  it('offers no tools under an empty allow-list', () => {
    expect(listTools(registry, { allow: [] }).tools).toEqual([]);
  });

  it('accepts roles without filtering on them yet', () => {
    expect(names(listTools(registry, { user_id: 'u1', roles: ['guest'] }))).toEqual(['time_now', 'echo']);
  });
});

describe('built-in tool schemas', () => {
  const ajv = new Ajv({ strict: true, allErrors: true });
  const validatorFor = (name: string) => {
    const tool = builtinTools.find((t) => t.name === name);
    if (!tool) throw new Error(`no built-in tool ${name}`);
    return ajv.compile(tool.parameters);
  };

  it.each(builtinTools.map((t) => [t.name, t] as const))('%s has a strict, closed object schema', (_name, tool) => {
    expect(ajv.validateSchema(tool.parameters)).toBe(true);
    expect(tool.parameters).toMatchObject({ type: 'object', additionalProperties: false });
  });

  it('time_now takes an optional timezone and nothing else', () => {
    const check = validatorFor('time_now');
    expect(check({})).toBe(true);
    expect(check({ timezone: 'Europe/Paris' })).toBe(true);
    expect(check({ tz: 'Europe/Paris' })).toBe(false);
    expect(check({ timezone: 3 })).toBe(false);
  });

  it('echo requires text and rejects extra arguments', () => {
    const check = validatorFor('echo');
    expect(check({ text: 'hi' })).toBe(true);
    expect(check({})).toBe(false);
    expect(check({ text: 'hi', loud: true })).toBe(false);
  });
});

describe('ToolRegistry', () => {
  const tool = (parameters: Record<string, unknown>, name = 'probe'): ToolDefinition => ({ name, description: 'test tool', parameters });

  it('refuses a tool whose arguments schema is open to extra properties', () => {
    expect(() => new ToolRegistry({ tools: [tool({ type: 'object', properties: {} })] })).toThrow(InvalidToolDefinitionError);
  });

  it('refuses a tool whose arguments schema is not valid JSON Schema', () => {
    expect(() => new ToolRegistry({ tools: [tool({ type: 'object', properties: { a: { type: 'strnig' } }, additionalProperties: false })] })).toThrow(
      /not a valid JSON Schema/,
    );
  });

  it('refuses a second tool with the same name', () => {
    const ok = tool({ type: 'object', additionalProperties: false });
    expect(() => new ToolRegistry({ tools: [ok, ok] })).toThrow(/already registered/);
  });

  it('refuses a name a model API would reject', () => {
    expect(() => new ToolRegistry({ tools: [tool({ type: 'object', additionalProperties: false }, 'has space')] })).toThrow(InvalidToolDefinitionError);
  });
});
