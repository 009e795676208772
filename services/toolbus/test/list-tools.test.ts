import { describe, expect, it } from 'vitest';
import { validate, ToolsListReply, type ToolSpec } from '@hermes/contracts';
import { ArgumentValidator } from '../src/argument-validator.js';
import { echoTool, timeNowTool } from '../src/builtin-tools.js';
import { listTools } from '../src/list-tools.js';
import { ToolRegistry } from '../src/tool-registry.js';
import { InvalidToolDefinitionError } from '../src/toolbus-errors.js';
import type { BuiltinTool } from '../src/tool-types.js';

const closed = { type: 'object', properties: {}, additionalProperties: false };
const spec = (name: string, extra: Partial<ToolSpec> = {}): ToolSpec => ({ name, description: `tool ${name}`, parameters: closed, ...extra });
const builtin = (s: ToolSpec): BuiltinTool => ({ spec: s, run: async () => 'ok' });

function registry(builtins: BuiltinTool[] = [timeNowTool, echoTool]): ToolRegistry {
  return new ToolRegistry({ validator: new ArgumentValidator(), defaultTimeoutMs: 30_000, builtins });
}
const names = (reply: { tools: { name: string }[] }) => reply.tools.map((t) => t.name);

describe('listTools', () => {
  it('offers built-in tools and then the tools of remote providers', () => {
    const r = registry();
    r.announce({ provider: 'crm', instance_id: 'crm-1', tools: [spec('crm_lookup')], ttl_ms: 5000 });
    const reply = listTools(r, { roles: [] });
    expect(names(reply)).toEqual(['time_now', 'echo', 'crm_lookup']);
    expect(validate(ToolsListReply, reply).ok).toBe(true);
  });

  it('says where each tool runs and which need a person to approve their calls, for people reading the list', () => {
    const r = registry([echoTool, builtin(spec('wire_money', { require_confirm: true, idempotent: true }))]);
    r.announce({ provider: 'crm', instance_id: 'crm-1', tools: [spec('crm_lookup')], ttl_ms: 5000 });
    const reply = listTools(r, {});
    expect(reply.tools.map(({ name, origin, requires_approval, idempotent }) => ({ name, origin, requires_approval, idempotent }))).toEqual([
      { name: 'echo', origin: { kind: 'builtin' }, requires_approval: undefined, idempotent: true },
      // A tool that needs approval is never sent ahead of its checkpoint, whatever it declares.
      { name: 'wire_money', origin: { kind: 'builtin' }, requires_approval: true, idempotent: undefined },
      { name: 'crm_lookup', origin: { kind: 'provider', name: 'crm' }, requires_approval: undefined, idempotent: undefined },
    ]);
    expect(validate(ToolsListReply, reply).ok).toBe(true);
  });

  it('offers a tool with roles only to callers holding one of them', () => {
    const r = registry([builtin(spec('deploy', { roles: ['ops', 'admin'] })), builtin(spec('open'))]);
    expect(names(listTools(r, { roles: ['member'] }))).toEqual(['open']);
    expect(names(listTools(r, { roles: ['member', 'admin'] }))).toEqual(['deploy', 'open']);
    expect(names(listTools(r, {}))).toEqual(['open']);
  });

  it('narrows to the allow-list, ignoring unknown names; an empty list offers nothing', () => {
    const r = registry();
    expect(names(listTools(r, { allow: ['echo', 'no_such_tool'] }))).toEqual(['echo']);
    expect(listTools(r, { allow: [] }).tools).toEqual([]);
  });

  it('shows the model the closed schema of a remote tool that left additionalProperties open by omission', () => {
    const r = registry([]);
    r.announce({
      provider: 'p',
      instance_id: 'p-1',
      tools: [spec('t', { parameters: { type: 'object', properties: { a: { type: 'string' } } } })],
      ttl_ms: 5000,
    });
    expect(listTools(r, {}).tools[0]?.parameters).toEqual({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false });
  });
});

describe('ToolRegistry', () => {
  it('forgets a provider whose instances all stopped announcing within their TTL', () => {
    const r = registry([]);
    r.announce({ provider: 'p', instance_id: 'a', tools: [spec('t')], ttl_ms: 1000 }, 0);
    r.announce({ provider: 'p', instance_id: 'b', tools: [spec('t')], ttl_ms: 1000 }, 500);
    expect(r.resolve('t', 1200)?.provider).toBe('p');
    expect(r.resolve('t', 1500)).toBeUndefined();
  });

  it('lets the first provider keep a name another provider also offers, and built-ins keep theirs', () => {
    const r = registry([echoTool]);
    r.announce({ provider: 'first', instance_id: 'f', tools: [spec('lookup'), spec('echo')], ttl_ms: 5000 });
    r.announce({ provider: 'second', instance_id: 's', tools: [spec('lookup'), spec('other')], ttl_ms: 5000 });
    expect(r.all().map((t) => `${t.provider}/${t.spec.name}`)).toEqual(['builtin/echo', 'first/lookup', 'second/other']);
  });

  it('skips an announced tool whose schema is not valid, keeping the others', () => {
    const r = registry([]);
    r.announce({
      provider: 'p',
      instance_id: 'p',
      tools: [spec('bad', { parameters: { type: 'object', properties: { a: { type: 'strnig' } } } }), spec('good')],
      ttl_ms: 5000,
    });
    expect(r.all().map((t) => t.spec.name)).toEqual(['good']);
  });

  it('applies the default timeout to tools that declare none', () => {
    const r = registry([builtin(spec('a')), builtin(spec('b', { timeout_ms: 500 }))]);
    expect(r.all().map((t) => t.timeoutMs)).toEqual([30_000, 500]);
  });

  it('refuses a built-in tool whose arguments schema is not valid JSON Schema', () => {
    expect(() => registry([builtin(spec('probe', { parameters: { type: 'object', properties: { a: { type: 'strnig' } } } }))])).toThrow(
      /not a valid JSON Schema/,
    );
  });

  it('refuses a built-in tool whose arguments are not an object', () => {
    expect(() => registry([builtin(spec('probe', { parameters: { type: 'string' } }))])).toThrow(InvalidToolDefinitionError);
  });

  it('refuses a tool whose transforms or rules the ToolBus could not run, naming where', () => {
    let deep: Record<string, unknown> = { field: '/a', op: 'exists' };
    for (let i = 0; i < 1000; i++) deep = { not: deep };
    expect(() => registry([builtin(spec('probe', { rules: [{ name: 'deep', message: 'm', condition: deep as never }] }))])).toThrow(
      /\/rules\/0\/condition\/not.* nests deeper than 6 levels/,
    );
    expect(() => registry([builtin(spec('probe', { transforms: [{ op: 'unit', field: '/a', unit: 'parsec' }] }))])).toThrow(/\/transforms\/0\/unit/);
  });

  it('refuses a second built-in tool with the same name', () => {
    expect(() => registry([builtin(spec('same')), builtin(spec('same'))])).toThrow(/already registered/);
  });

  it('refuses a name a model API would reject', () => {
    expect(() => registry([builtin(spec('has space'))])).toThrow(InvalidToolDefinitionError);
  });
});
