import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from '@sinclair/typebox';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  PAYLOAD_LIMITS,
  ToolProviderAnnouncement,
  decodeBoundedJson,
  replyEnvelope,
  subjectsFor,
  ToolExecReply,
  validate,
  type ToolExecRequest,
  type WireError,
} from '@hermes/contracts';
import { cleanupAll, eventually, startNatsServer } from '@hermes/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  defineTool,
  hostToolProvider,
  ToolFailure,
  ToolProviderConfigError,
  type HostToolProviderOptions,
  type ToolContext,
  type ToolProvider,
} from '../src/index.js';

// A plain NATS connection, as a team hosting tools has: the SDK needs nothing of Hermes' bus library.
let nc: NatsConnection;
const subjects = subjectsFor();
const encodeJson = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const decodeJson = (data: Uint8Array) => decodeBoundedJson(data, PAYLOAD_LIMITS.envelope, { what: 'body' });
const running: ToolProvider[] = [];
let providers = 0;

beforeAll(async () => {
  const nats = await startNatsServer();
  nc = await connect({ servers: nats.url, name: 'tool-sdk-test' });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop(1000)));
});

afterAll(async () => {
  await nc?.drain();
  await cleanupAll();
});

/** A provider name of its own per test, so announcements and calls of tests never meet. */
const providerName = (label: string) => `${label}-${++providers}`;

async function host(opts: Partial<HostToolProviderOptions> & Pick<HostToolProviderOptions, 'provider' | 'tools'>): Promise<ToolProvider> {
  const provider = await hostToolProvider({ nc, ...opts });
  running.push(provider);
  return provider;
}

const addSpec = {
  name: 'add',
  description: 'adds two numbers',
  parameters: Type.Object({ a: Type.Number(), b: Type.Number() }, { additionalProperties: false }),
};

/** A tool that counts its runs, optionally waiting before it answers. */
function countingTool(delayMs = 0) {
  const calls: { args: Record<string, unknown>; ctx: ToolContext }[] = [];
  const tool = defineTool(addSpec, async (args, ctx) => {
    calls.push({ args, ctx });
    if (delayMs > 0) await sleep(delayMs);
    return { sum: args.a + args.b, run: calls.length };
  });
  return { tool, calls };
}

function execRequest(overrides: Partial<ToolExecRequest> = {}): ToolExecRequest {
  return {
    idempotency_key: `t1:s1:1:${Math.random()}`,
    tool: 'add',
    arguments: { a: 2, b: 3 },
    context: { task_id: 't1', user_id: 'alice', roles: ['user'] },
    ...overrides,
  };
}

/** A toolExec reply: the envelope's result is a ToolExecReply holding the tool's result. */
type Envelope = { ok: true; result: { result: unknown } } | { ok: false; error: WireError };

/** Sends a toolExec request the way the ToolBus does and returns the contract-checked envelope. */
async function exec(provider: string, payload: unknown): Promise<Envelope> {
  const msg = await nc.request(subjects.toolExec(provider), encodeJson(payload), { timeout: 5000 });
  const decoded = decodeJson(msg.data);
  if (!decoded.ok) throw new Error(decoded.message);
  const checked = validate(replyEnvelope(ToolExecReply), decoded.value);
  if (!checked.ok) throw new Error(`reply does not match the toolExec envelope: ${JSON.stringify(checked.issues)}`);
  return checked.value as Envelope;
}

/** Every announcement of `provider` seen from now on, with the time it arrived. */
function watchAnnouncements(provider: string) {
  const seen: { at: number; value: ToolProviderAnnouncement }[] = [];
  // Only on its own subject: that is where the toolbus listens for this provider.
  const sub = nc.subscribe(subjects.toolProviderAnnounce(provider), {
    callback: (_err, msg) => {
      const decoded = decodeJson(msg.data);
      const value = decoded.ok ? (decoded.value as ToolProviderAnnouncement) : undefined;
      if (value?.provider === provider) seen.push({ at: Date.now(), value });
    },
  });
  return { seen, stop: () => sub.unsubscribe() };
}

describe('announcements', () => {
  it('are off by default: nothing at start nor on a discover message, and the provider answers $SRV.INFO with its tools', async () => {
    const name = providerName('quiet');
    const watch = watchAnnouncements(name);
    await nc.flush();
    await host({ provider: name, tools: [countingTool().tool], ttlMs: 1000, announceEveryMs: 100, instanceId: 'q1' });
    nc.publish(subjects.toolProvidersDiscover, encodeJson({ toolbus_id: 'tb-quiet' }));
    // Found the way the ToolBus finds it: its $SRV.INFO names the endpoint and carries the spec.
    const info = decodeJson((await nc.request(`$SRV.INFO.${name}`, undefined, { timeout: 2000 })).data) as {
      value: { id: string; endpoints: { subject: string; metadata: Record<string, string> }[] };
    };
    expect(info.value.id).toBe('q1');
    expect(info.value.endpoints.map((e) => e.subject)).toEqual([subjects.toolExecEndpoint(name, 'add')]);
    expect(JSON.parse(info.value.endpoints[0]!.metadata['hermes.tool_spec']!)).toMatchObject({ name: 'add' });
    // Several announce intervals and the discover message later, still nothing announced.
    await sleep(400);
    watch.stop();
    expect(watch.seen).toEqual([]);
  });

  it('announce the provider, instance, tools and ttl at start, then every announceEveryMs', async () => {
    const name = providerName('announce');
    const watch = watchAnnouncements(name);
    await nc.flush();
    const { tool } = countingTool();
    const provider = await host({ provider: name, tools: [tool], announce: true, ttlMs: 3000, announceEveryMs: 200, instanceId: 'inst-a' });
    await sleep(750);
    watch.stop();
    expect(watch.seen.length).toBeGreaterThanOrEqual(3);
    expect(watch.seen.length).toBeLessThanOrEqual(5);
    const first = watch.seen[0]!.value;
    expect(validate(ToolProviderAnnouncement, first).ok).toBe(true);
    expect(first).toEqual({
      provider: name,
      instance_id: 'inst-a',
      ttl_ms: 3000,
      tools: [
        {
          name: 'add',
          description: 'adds two numbers',
          parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
        },
      ],
    });
    expect(provider.instanceId).toBe('inst-a');
    expect(provider.subject).toBe(subjects.toolExec(name));
  });

  it('repeat every ttlMs / 3 by default', async () => {
    const name = providerName('cadence');
    const watch = watchAnnouncements(name);
    await nc.flush();
    await host({ provider: name, tools: [countingTool().tool], announce: true, ttlMs: 1500 });
    await sleep(1200);
    watch.stop();
    const gaps = watch.seen.slice(1).map((s, i) => s.at - watch.seen[i]!.at);
    expect(gaps.length).toBeGreaterThanOrEqual(2);
    for (const gap of gaps) {
      expect(gap).toBeGreaterThan(350);
      expect(gap).toBeLessThan(900);
    }
  });

  it('answer a discover message at once, from every instance', async () => {
    const name = providerName('discover');
    const watch = watchAnnouncements(name);
    await nc.flush();
    await host({ provider: name, tools: [countingTool().tool], announce: true, ttlMs: 180_000, announceEveryMs: 60_000, instanceId: 'one' });
    await host({ provider: name, tools: [countingTool().tool], announce: true, ttlMs: 180_000, announceEveryMs: 60_000, instanceId: 'two' });
    await expect.poll(() => watch.seen.length).toBe(2);
    const asked = Date.now();
    nc.publish(subjects.toolProvidersDiscover, encodeJson({ toolbus_id: 'tb-1' }));
    await expect.poll(() => watch.seen.length, { timeout: 1000, interval: 10 }).toBe(4);
    expect(
      watch.seen
        .slice(2)
        .map((s) => s.value.instance_id)
        .sort(),
    ).toEqual(['one', 'two']);
    expect(watch.seen[3]!.at - asked).toBeLessThan(500);
    watch.stop();
  });

  it('stop after stop(), which also stops answering discover messages and calls', async () => {
    const name = providerName('stop');
    const watch = watchAnnouncements(name);
    await nc.flush();
    const provider = await host({ provider: name, tools: [countingTool().tool], announce: true, ttlMs: 1000, announceEveryMs: 100 });
    await expect.poll(() => watch.seen.length).toBeGreaterThanOrEqual(2);
    await provider.stop();
    const count = watch.seen.length;
    nc.publish(subjects.toolProvidersDiscover, encodeJson({ toolbus_id: 'tb-2' }));
    await sleep(400);
    expect(watch.seen.length).toBe(count);
    await expect(exec(name, execRequest())).rejects.toThrow(/no responders/i);
    watch.stop();
  });
});

describe('calls', () => {
  it('run the handler with the arguments and context, and reply { ok, result }', async () => {
    const name = providerName('exec');
    const { tool, calls } = countingTool();
    await host({ provider: name, tools: [tool] });
    const reply = await exec(name, execRequest({ idempotency_key: 't1:s1:1:0', arguments: { a: 40, b: 2 } }));
    expect(reply).toEqual({ ok: true, result: { result: { sum: 42, run: 1 } } });
    expect(calls).toHaveLength(1);
    const { ctx } = calls[0]!;
    expect({ key: ctx.idempotencyKey, task: ctx.taskId, user: ctx.userId, roles: ctx.roles }).toEqual({
      key: 't1:s1:1:0',
      task: 't1',
      user: 'alice',
      roles: ['user'],
    });
    expect(ctx.signal.aborted).toBe(false);
  });

  it('send a handler returning nothing as result null', async () => {
    const name = providerName('void');
    await host({ provider: name, tools: [defineTool(addSpec, async () => undefined)] });
    expect(await exec(name, execRequest())).toEqual({ ok: true, result: { result: null } });
  });

  it('with the same idempotency key run the handler once and replay the result', async () => {
    const name = providerName('once');
    const { tool, calls } = countingTool();
    await host({ provider: name, tools: [tool] });
    const req = execRequest({ idempotency_key: 't9:s1:3:1' });
    const first = await exec(name, req);
    const second = await exec(name, req);
    expect(first).toEqual({ ok: true, result: { result: { sum: 5, run: 1 } } });
    expect(second).toEqual(first);
    expect(calls).toHaveLength(1);
    expect(await exec(name, execRequest({ idempotency_key: 't9:s1:3:2' }))).toEqual({ ok: true, result: { result: { sum: 5, run: 2 } } });
  });

  it('with the same key in flight twice run the handler once and answer both', async () => {
    const name = providerName('concurrent');
    const { tool, calls } = countingTool(300);
    await host({ provider: name, tools: [tool] });
    const req = execRequest({ idempotency_key: 't9:s1:4:0' });
    const [a, b] = await Promise.all([exec(name, req), exec(name, req)]);
    expect(calls).toHaveLength(1);
    expect(a).toEqual({ ok: true, result: { result: { sum: 5, run: 1 } } });
    expect(b).toEqual(a);
  });

  it('forget a finished key after exactlyOnce.ttlMs, and the least recently used beyond maxEntries', async () => {
    const name = providerName('forget');
    const { tool, calls } = countingTool();
    await host({ provider: name, tools: [tool], exactlyOnce: { ttlMs: 300, maxEntries: 2 } });
    const k = (n: number) => execRequest({ idempotency_key: `k${n}` });
    const runs = async (...keys: number[]) => {
      const before = calls.length;
      for (const n of keys) await exec(name, k(n));
      return calls.length - before;
    };
    expect(await runs(1, 1)).toBe(1);
    await sleep(400);
    expect(await runs(1)).toBe(1); // expired: runs again
    expect(await runs(2, 3)).toBe(2); // remembered now: 1, 2, 3 is one too many, so 1 goes
    expect(await runs(2)).toBe(0); // 2 becomes the most recently used
    expect(await runs(4)).toBe(1); // 3 goes
    expect(await runs(2, 4)).toBe(0);
    expect(await runs(1, 3)).toBe(2);
  });

  it('report a thrown error as tool_failed with its message and no stack, and replay it', async () => {
    const name = providerName('throws');
    let runs = 0;
    const tool = defineTool(addSpec, async () => {
      runs++;
      throw new Error('the ledger is locked');
    });
    await host({ provider: name, tools: [tool] });
    const req = execRequest();
    const reply = await exec(name, req);
    expect(reply).toEqual({ ok: false, error: { code: 'tool_failed', message: 'the ledger is locked', retryable: false } });
    expect(JSON.stringify(reply)).not.toMatch(/\n\s+at |\.ts:\d+/);
    expect(await exec(name, req)).toEqual(reply);
    expect(runs).toBe(1);
  });

  it('let a handler mark its failure retryable, and then run it again on retry', async () => {
    const name = providerName('retryable');
    let runs = 0;
    const tool = defineTool(addSpec, async () => {
      if (++runs === 1) throw new ToolFailure('upstream busy', { retryable: true, details: { retry_after_ms: 100 } });
      return 'ok';
    });
    await host({ provider: name, tools: [tool] });
    const req = execRequest();
    expect(await exec(name, req)).toEqual({
      ok: false,
      error: { code: 'tool_failed', message: 'upstream busy', retryable: true, details: { retry_after_ms: 100 } },
    });
    expect(await exec(name, req)).toEqual({ ok: true, result: { result: 'ok' } });
    expect(runs).toBe(2);
  });

  it("abort the handler's signal at the tool's timeout and report tool_timeout", async () => {
    const name = providerName('timeout');
    const tool = defineTool({ ...addSpec, timeout_ms: 150 }, async (_args, ctx) => {
      await sleep(10_000, undefined, { signal: ctx.signal });
      return 'never';
    });
    await host({ provider: name, tools: [tool] });
    const started = Date.now();
    const reply = await exec(name, execRequest());
    expect(Date.now() - started).toBeLessThan(2000);
    expect(reply).toMatchObject({ ok: false, error: { code: 'tool_timeout', retryable: false } });
  });

  it('answer an unknown tool with tool_not_found', async () => {
    const name = providerName('unknown');
    const { tool, calls } = countingTool();
    await host({ provider: name, tools: [tool] });
    const reply = await exec(name, execRequest({ tool: 'subtract' }));
    expect(reply).toMatchObject({ ok: false, error: { code: 'tool_not_found', retryable: false } });
    expect(calls).toHaveLength(0);
  });

  it('answer an invalid request with invalid_payload and its issues, and keep serving', async () => {
    const name = providerName('invalid');
    const { tool, calls } = countingTool();
    await host({ provider: name, tools: [tool] });
    const reply = await exec(name, { tool: 'add', arguments: [] });
    expect(reply.ok).toBe(false);
    const error = (reply as { error: WireError }).error;
    expect(error.code).toBe('invalid_payload');
    const paths = (error.details?.issues as { path: string }[]).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['/idempotency_key', '/context', '/arguments']));
    const notJson = await nc.request(subjects.toolExec(name), new TextEncoder().encode('{nope'), { timeout: 5000 });
    expect(decodeJson(notJson.data)).toMatchObject({ ok: true, value: { ok: false, error: { code: 'invalid_payload' } } });
    expect((await exec(name, execRequest())).ok).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it('answer arguments over the tool-argument limits with payload_limit naming limit and path, and never run the handler', async () => {
    const name = providerName('limits');
    const { tool, calls } = countingTool();
    await host({ provider: name, tools: [tool] });
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    const tooDeep = await exec(name, execRequest({ arguments: { a: 1, b: 2, c: deep } }));
    expect(tooDeep).toMatchObject({ ok: false, error: { code: 'payload_limit', retryable: false, details: { limit: 'maxDepth', max: 32, actual: 41 } } });
    expect((tooDeep as { error: WireError }).error.details?.path).toMatch(/^\/arguments\/c(\/0)+$/);
    const polluted = JSON.parse('{"a":1,"b":2,"__proto__":{"isAdmin":true}}') as Record<string, unknown>;
    expect(await exec(name, execRequest({ arguments: polluted }))).toMatchObject({
      ok: false,
      error: { code: 'payload_limit', details: { limit: 'forbiddenKey', path: '/arguments/__proto__' } },
    });
    expect(calls).toHaveLength(0);
    expect((await exec(name, execRequest())).ok).toBe(true);
  });

  it('share calls between instances of one provider (one queue group), each call answered once', async () => {
    const name = providerName('shared');
    const a = countingTool();
    const b = countingTool();
    await host({ provider: name, tools: [a.tool] });
    await host({ provider: name, tools: [b.tool] });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => exec(name, execRequest({ idempotency_key: `share:${i}` }))));
    process.off('warning', onWarning);
    expect(replies.every((r) => r.ok)).toBe(true);
    // Many calls in flight at once each listen for the provider's stop: normal, not a leak warning.
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    expect(a.calls.length + b.calls.length).toBe(30);
    expect(a.calls.length).toBeGreaterThan(0);
    expect(b.calls.length).toBeGreaterThan(0);
  });

  it('are answered before stop() resolves when they were already taken', async () => {
    const name = providerName('drain');
    const { tool, calls } = countingTool(300);
    const provider = await host({ provider: name, tools: [tool] });
    const pending = exec(name, execRequest());
    await expect.poll(() => calls.length).toBe(1);
    await provider.stop();
    expect(await pending).toMatchObject({ ok: true });
  });
});

describe('configuration', () => {
  const reject = (opts: Pick<HostToolProviderOptions, 'provider' | 'tools'> & Partial<HostToolProviderOptions>) =>
    expect(hostToolProvider({ nc, ...opts })).rejects.toThrow(ToolProviderConfigError);

  it('refuses tools the ToolBus could not offer, duplicate names, bad timings and a provider nobody could find', async () => {
    const open = defineTool({ name: 'open', description: 'x', parameters: { type: 'object' } }, async () => null);
    const badName = defineTool({ name: 'has space', description: 'x', parameters: { type: 'object', additionalProperties: false } }, async () => null);
    const unknownKeyword = defineTool(
      { name: 'typo', description: 'x', parameters: { type: 'object', additionalProperties: false, properties: { a: { type: 'string', maxLenght: 3 } } } },
      async () => null,
    );
    const { tool } = countingTool();
    await reject({ provider: providerName('cfg'), tools: [open] });
    await reject({ provider: providerName('cfg'), tools: [badName] });
    await reject({ provider: providerName('cfg'), tools: [unknownKeyword] });
    await reject({ provider: providerName('cfg'), tools: [tool, tool] });
    await reject({ provider: providerName('cfg'), tools: [] });
    await reject({ provider: 'bad.name', tools: [tool] });
    await reject({ provider: providerName('cfg'), tools: [tool], ttlMs: 500 });
    await reject({ provider: providerName('cfg'), tools: [tool], ttlMs: 2000, announceEveryMs: 2000 });
    // Neither a micro service nor announcing: no ToolBus could find it.
    await reject({ provider: providerName('cfg'), tools: [tool], micro: false });
  });

  it('refuses transforms and rules the ToolBus could not run, and hosts a tool with date-time arguments, transforms and rules', async () => {
    const parameters = Type.Object({ at: Type.String({ format: 'date-time' }), wait_s: Type.Integer() }, { additionalProperties: false });
    const withPolicy = (extra: object) => defineTool({ name: 'timed', description: 'x', parameters, ...extra }, async () => null);
    await reject({ provider: providerName('cfg'), tools: [withPolicy({ transforms: [{ op: 'unit', field: '/wait_s', unit: 'fortnight' }] })] });
    await reject({ provider: providerName('cfg'), tools: [withPolicy({ transforms: [{ op: 'trim', field: '/__proto__' }] })] });
    await reject({
      provider: providerName('cfg'),
      tools: [withPolicy({ rules: [{ name: 'r', message: 'm', condition: { field: '/at', op: 'regex', value: '.*' } }] })],
    });
    const good = withPolicy({
      transforms: [{ op: 'unit', field: '/wait_s', unit: 's' }],
      rules: [{ name: 'soon', message: 'wait at most an hour', condition: { field: '/wait_s', op: 'lte', value: 3600 } }],
    });
    const name = providerName('timed');
    const watch = watchAnnouncements(name);
    await nc.flush();
    await host({ provider: name, tools: [good], announce: true });
    // The transforms and rules travel in the announcement: the ToolBus runs them.
    const announced = await eventually(
      () => watch.seen[0]?.value,
      5000,
      () => `an announcement of ${name}`,
    );
    watch.stop();
    expect(announced.tools[0]).toMatchObject({ name: 'timed', transforms: good.spec.transforms, rules: good.spec.rules });
  });
});
