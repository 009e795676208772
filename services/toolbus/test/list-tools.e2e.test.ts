import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contracts, type ToolsListReply } from '@hermes/contracts';
import { Bus, decodeJson, encodeJson, request } from '@hermes/bus';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, startNatsServer } from '@hermes/testkit';
import { builtinTools } from '../src/builtin-tools.js';
import { serveToolsList } from '../src/list-tools.js';
import { ToolRegistry } from '../src/tool-registry.js';

describe('toolsList over NATS', () => {
  let bus: Bus;

  beforeAll(async () => {
    const nats = await startNatsServer();
    bus = await Bus.connect({ servers: nats.url, name: 'toolbus-test', logger: createLogger({ service: 'test', level: 'silent' }) });
    serveToolsList({ bus, registry: new ToolRegistry({ tools: builtinTools }) });
  });

  afterAll(async () => {
    await bus?.drain();
    await cleanupAll();
  });

  it('answers with the built-in tools and their argument schemas', async () => {
    const reply = await request(bus, contracts.toolsList, {});
    expect(reply.tools.map((t) => t.name)).toEqual(['time_now', 'echo']);
    expect(reply.tools.find((t) => t.name === 'echo')?.parameters).toMatchObject({ required: ['text'], additionalProperties: false });
  });

  it('filters by the allow-list', async () => {
    const reply: ToolsListReply = await request(bus, contracts.toolsList, { user_id: 'u1', roles: ['member'], allow: ['time_now'] });
    expect(reply.tools.map((t) => t.name)).toEqual(['time_now']);
  });

  it('answers a request that breaks the contract with invalid_payload', async () => {
    const msg = await bus.nc.request(bus.subjects.toolsList, encodeJson({ allow: 'echo' }), { timeout: 5000 });
    const body = decodeJson(msg.data);
    expect(body).toMatchObject({ ok: true, value: { ok: false, error: { code: 'invalid_payload', retryable: false } } });
  });
});
