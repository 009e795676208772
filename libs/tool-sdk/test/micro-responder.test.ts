import {
  MICRO_TYPES,
  MicroServiceInfo,
  MicroServicePing,
  MicroServiceStats,
  TOOL_SPEC_METADATA,
  ToolSpec,
  validate,
  type ToolSpec as Spec,
} from '@hermes/contracts';
import { describe, expect, it } from 'vitest';
import { microReplies, MICRO_QUEUE } from '../src/micro-responder.js';

const spec: Spec = { name: 'add', description: 'adds', parameters: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] } };
const identity = { name: 'calc', id: 'inst-1', version: '1.2.3', description: 'Hermes tool provider calc' };
const endpoints = [{ name: 'add', subject: 'hermes.tools.exec.calc.add', spec }];

describe('the $SRV replies of a tool provider (ADR-32)', () => {
  it('PING names the service instance with the ping_response type', () => {
    const ping = microReplies(identity, endpoints, '2026-01-01T00:00:00.000Z', new Map()).PING();
    expect(validate(MicroServicePing, ping).ok).toBe(true);
    expect(ping).toMatchObject({ type: MICRO_TYPES.PING, name: 'calc', id: 'inst-1', version: '1.2.3' });
  });

  it('INFO lists one endpoint per tool in queue group q, its ToolSpec JSON in the metadata', () => {
    const info = microReplies(identity, endpoints, '', new Map()).INFO();
    expect(validate(MicroServiceInfo, info).ok).toBe(true);
    expect(info.type).toBe('io.nats.micro.v1.info_response');
    expect(info.endpoints).toHaveLength(1);
    const [endpoint] = info.endpoints;
    expect(endpoint).toMatchObject({ name: 'add', subject: 'hermes.tools.exec.calc.add', queue_group: MICRO_QUEUE });
    const carried: unknown = JSON.parse(endpoint!.metadata[TOOL_SPEC_METADATA]!);
    expect(validate(ToolSpec, carried).ok).toBe(true);
    expect(carried).toEqual(spec);
  });

  it('STATS reports counters per endpoint, the average in nanoseconds, zero before any call', () => {
    const counters = new Map([['add', { num_requests: 4, num_errors: 1, processing_time: 10_000 }]]);
    const stats = microReplies(identity, endpoints, '2026-01-01T00:00:00.000Z', counters).STATS();
    expect(validate(MicroServiceStats, stats).ok).toBe(true);
    expect(stats).toMatchObject({ type: MICRO_TYPES.STATS, started: '2026-01-01T00:00:00.000Z' });
    expect(stats.endpoints[0]).toMatchObject({ num_requests: 4, num_errors: 1, processing_time: 10_000, average_processing_time: 2_500 });
    const idle = microReplies(identity, endpoints, '', new Map()).STATS();
    expect(idle.endpoints[0]).toMatchObject({ num_requests: 0, num_errors: 0, average_processing_time: 0 });
  });

  it('SCHEMA carries each endpoint’s parameters schema as the request schema', () => {
    const schema = microReplies(identity, endpoints, '', new Map()).SCHEMA();
    expect(schema.type).toBe(MICRO_TYPES.SCHEMA);
    expect(JSON.parse(schema.endpoints[0]!.schema.request)).toEqual(spec.parameters);
  });
});
