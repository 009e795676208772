import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  contracts,
  type RequestContract,
  type ToolAuditRecord,
  type ToolCallReply,
  type ToolCallRequest,
  type ToolExecRequest,
  type ToolSpec,
} from '@hermes/contracts';
import { Bus, decodeJson, request, serve, ReplyError } from '@hermes/bus';
import { createLogger } from '@hermes/telemetry';
import { cleanupAll, eventually, startNatsServer } from '@hermes/testkit';
import { startToolbus, type Toolbus } from '../src/toolbus.js';
import { defaultToolbusSettings, type ToolbusSettings } from '../src/toolbus-settings.js';
import type { BuiltinTool } from '../src/tool-types.js';
import { natsHandles } from '@hermes/bus/internal';

const silent = createLogger({ service: 'toolbus-test', level: 'silent' });

/** A unique subject prefix, so tests sharing one nats-server never see each other's subjects, buckets or streams. */
export function freshPrefix(): string {
  return `tb${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

export function connect(url: string, prefix: string, name = 'toolbus-test'): Promise<Bus> {
  return Bus.connect({ servers: url, name, logger: silent, prefix, waitOnFirstConnect: false });
}

/** A toolbus replica with test-sized timings. */
export function startTestToolbus(bus: Bus, settings: Partial<ToolbusSettings> = {}, extraBuiltins: BuiltinTool[] = []): Promise<Toolbus> {
  // No dispatcher runs in these tests, so calls are not checked against task records unless a test
  // asks (task-authority.e2e.test.ts serves taskGet); the full stack in tests/e2e runs with the check.
  return startToolbus({
    bus,
    // Discovery every 300 ms: @hermes/tool-sdk providers do not announce by default, so they are found by a round.
    settings: {
      ...defaultToolbusSettings(),
      TOOL_CALL_LEASE_MS: 600,
      TOOL_DISCOVERY_GRACE_MS: 0,
      TOOL_TASK_CHECK: false,
      TOOL_SRV_DISCOVERY_INTERVAL_MS: 300,
      ...settings,
    },
    extraBuiltins,
  });
}

let counter = 0;
/** A tool call request as the agent loop sends it; each gets its own step (so its own idempotency key). */
export function callRequest(over: Partial<ToolCallRequest> = {}): ToolCallRequest {
  counter += 1;
  const taskId = over.task_id ?? 't_test';
  return {
    idempotency_key: `${taskId}:main:${counter}:0`,
    task_id: taskId,
    subtask_id: 'main',
    step: counter,
    call_index: 0,
    tool_call_id: `call_${counter}`,
    user_id: 'u1',
    roles: ['member'],
    tool: 'echo',
    arguments: '{}',
    ...over,
  };
}

export function callTool(bus: Bus, req: ToolCallRequest, timeoutMs = 10_000): Promise<ToolCallReply> {
  return request(bus, contracts.toolCall, req, { timeoutMs });
}

export interface StandInProvider {
  /** Every exec request received, in order. */
  readonly received: ToolExecRequest[];
  announce(): Promise<void>;
  /** Stops heartbeats and answering discover requests; calls are still served. */
  stopAnnouncing(): void;
  stop(): void;
}

/**
 * A remote tool provider built from plain bus calls: it serves `toolExec` on its own subject,
 * announces its tools at start, every third of its TTL, and whenever a toolbus asks.
 */
export async function startStandInProvider(
  bus: Bus,
  o: { provider: string; tools: ToolSpec[]; run: (req: ToolExecRequest) => Promise<unknown>; ttlMs?: number; instanceId?: string },
): Promise<StandInProvider> {
  const received: ToolExecRequest[] = [];
  const ttl = o.ttlMs ?? 5000;
  const exec: RequestContract<typeof contracts.toolExec.request, typeof contracts.toolExec.reply> = {
    ...contracts.toolExec,
    subject: (s) => s.toolExec(o.provider),
  };
  const served = serve(bus, exec, async (req) => {
    received.push(req);
    try {
      return { result: await o.run(req) };
    } catch (err) {
      throw new ReplyError({ code: 'provider_error', message: (err as Error).message, retryable: false });
    }
  });
  const announce = async () => {
    const announcement = { provider: o.provider, instance_id: o.instanceId ?? `${o.provider}-1`, tools: o.tools, ttl_ms: ttl };
    await bus.publish(contracts.toolProvidersAnnounce, announcement, { subject: bus.subjects.toolProviderAnnounce(o.provider) });
  };
  const discover = natsHandles(bus).nc.subscribe(bus.subjects.toolProvidersDiscover, { callback: () => void announce() });
  const heartbeat = setInterval(() => void announce(), Math.floor(ttl / 3));
  await natsHandles(bus).nc.flush();
  await announce();
  await natsHandles(bus).nc.flush();
  const stopAnnouncing = () => {
    clearInterval(heartbeat);
    discover.unsubscribe();
  };
  return {
    received,
    announce,
    stopAnnouncing,
    stop() {
      stopAnnouncing();
      served.unsubscribe();
    },
  };
}

/** A tool spec with a closed schema taking an optional string `q`. */
export function remoteTool(name: string, extra: Partial<ToolSpec> = {}): ToolSpec {
  return {
    name,
    description: `test tool ${name}`,
    parameters: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false },
    ...extra,
  };
}

/** Waits until toolsList (with these roles) offers the tool. */
export async function waitForTool(bus: Bus, name: string, roles: string[] = []): Promise<void> {
  await eventually(async () => (await request(bus, contracts.toolsList, { roles })).tools.some((t) => t.name === name), 5000, `tool ${name} in toolsList`);
}

/** Every message on a stream whose subject is `subject`, decoded. */
export async function streamMessages<T>(bus: Bus, stream: string, subject: string): Promise<T[]> {
  const info = await natsHandles(bus).jsm.streams.info(stream);
  const out: T[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const msg = await natsHandles(bus)
      .jsm.streams.getMessage(stream, { seq })
      .catch(() => null);
    if (!msg || msg.subject !== subject) continue;
    const decoded = decodeJson(msg.data);
    if (decoded.ok) out.push(decoded.value as T);
  }
  return out;
}

export function auditRecords(bus: Bus, taskId: string): Promise<ToolAuditRecord[]> {
  return streamMessages<ToolAuditRecord>(bus, bus.subjects.streams.toolAudit, bus.subjects.toolAudit(taskId));
}

/**
 * Subscribes to a core subject now (flushed, so the server knows it) and returns a promise of the
 * next message's JSON.
 */
export async function nextMessage<T>(bus: Bus, subject: string, timeoutMs = 5000): Promise<{ next: Promise<T> }> {
  let sub: ReturnType<Bus['nc']['subscribe']> | undefined;
  const next = new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      sub?.unsubscribe();
      reject(new Error(`no message on ${subject} within ${timeoutMs} ms`));
    }, timeoutMs);
    sub = natsHandles(bus).nc.subscribe(subject, {
      max: 1,
      callback: (_err, msg) => {
        clearTimeout(timer);
        const decoded = decodeJson(msg.data);
        resolve((decoded.ok ? decoded.value : undefined) as T);
      },
    });
  });
  await natsHandles(bus).nc.flush();
  return { next };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * One nats-server for a test file, started before its tests, and a list of cleanups that run
 * after each test, last added first. Call at the top level of the file.
 */
export function natsForFile(): { readonly url: string; readonly cleanups: (() => Promise<void> | void)[] } {
  let url = '';
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeAll(async () => {
    url = (await startNatsServer()).url;
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await cleanupAll();
  });
  return {
    get url() {
      return url;
    },
    cleanups,
  };
}
