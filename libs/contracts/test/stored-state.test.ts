import { readdirSync, readFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  StoredCacheEntry,
  StoredCallRecord,
  StoredCheckpoint,
  StoredCheckpointHead,
  StoredCheckpointTurn,
  StoredMemoryRecord,
  StoredPendingApproval,
  StoredPoolProfile,
  StoredRunnerCapacity,
  StoredStateError,
  StoredTask,
  Schedule,
  Trigger,
  decodeStored,
} from '../src/index.js';

// Records as the code of each release wrote them, captured by running the services (the e2e
// tests), one file per record: `stored.<kind>.<version>.<what>.json`, where `unversioned` is a
// record written before its shape carried `v`. A schema change that refuses one of them would
// break a rolling upgrade (the new replicas could not read what the old ones left), so they are
// never edited, only added to.
const fixturesDir = new URL('./fixtures/', import.meta.url);
const SCHEMAS: Record<string, TSchema> = {
  checkpoint: StoredCheckpoint,
  'checkpoint-head': StoredCheckpointHead,
  'checkpoint-turn': StoredCheckpointTurn,
  task: StoredTask,
  'call-record': StoredCallRecord,
  'pending-approval': StoredPendingApproval,
  'cache-entry': StoredCacheEntry,
  'memory-record': StoredMemoryRecord,
  schedule: Schedule,
  trigger: Trigger,
  'pool-profile': StoredPoolProfile,
  'runner-capacity': StoredRunnerCapacity,
};
const fixtures = readdirSync(fixturesDir)
  .filter((f) => f.startsWith('stored.') && f.endsWith('.json'))
  .map((file) => {
    const [, kind, version] = file.split('.');
    return { file, kind: kind!, version: version!, text: readFileSync(new URL(file, fixturesDir), 'utf8') };
  });

/** A KV entry as the stores read it: bucket, key and the stored text. */
const entry = (text: string, key = 'job.j1') => ({ bucket: 'hermes_test', key, string: () => text });

describe('stored-state fixtures', () => {
  it('cover every kind of stored record', () => {
    expect(new Set(fixtures.map((f) => f.kind))).toEqual(new Set(Object.keys(SCHEMAS)));
  });

  it.each(fixtures.map((f) => [f.file, f] as const))('%s still reads with its schema', (_file, f) => {
    const schema = SCHEMAS[f.kind];
    expect(schema, `no schema for the kind "${f.kind}"`).toBeDefined();
    const value = decodeStored(schema!, entry(f.text)) as { v?: number };
    // The file name says which version wrote it; `unversioned` records have no `v` (read as 1).
    expect(value.v).toBe(f.version === 'unversioned' ? undefined : Number(f.version.slice(1)));
  });
});

describe('decodeStored', () => {
  const checkpoint = () => JSON.parse(fixtures.find((f) => f.kind === 'checkpoint')!.text) as Record<string, unknown>;

  it('a record that fails its schema is a StoredStateError naming the bucket, the key and each issue', () => {
    const bad = { ...checkpoint(), step: -1, calls: undefined };

    let caught: unknown;
    try {
      decodeStored(StoredCheckpoint, entry(JSON.stringify(bad), 'job.t1-main'));
    } catch (err) {
      caught = err;
    }

    expect(caught).toBeInstanceOf(StoredStateError);
    const err = caught as StoredStateError;
    expect(err).toMatchObject({ code: 'corrupt_state', retryable: false, bucket: 'hermes_test', key: 'job.t1-main', record: 'StoredCheckpoint' });
    expect(err.issues.map((i) => i.path).sort()).toEqual(['/calls', '/step']);
    expect(err.message).toMatch(/^StoredCheckpoint at hermes_test\/job\.t1-main is unreadable: .*\/step/);
    expect(err.toWire()).toMatchObject({
      code: 'corrupt_state',
      retryable: false,
      details: { bucket: 'hermes_test', key: 'job.t1-main', record: 'StoredCheckpoint' },
    });
    expect(ERROR_CODES.corrupt_state.retryable).toBe(false);
  });

  it('bytes that are not JSON are a StoredStateError too, not a SyntaxError', () => {
    expect(() => decodeStored(StoredPendingApproval, entry('{"task_id": "t1",', 'k1'))).toThrow(StoredStateError);
    expect(() => decodeStored(StoredPendingApproval, entry('{"task_id": "t1",', 'k1'))).toThrow(/hermes_test\/k1 is unreadable: \/ is not JSON/);
  });

  it('refuses a version it does not know (a newer release wrote it)', () => {
    expect(() => decodeStored(StoredCheckpoint, entry(JSON.stringify({ ...checkpoint(), v: 2 })))).toThrow(/\/v must be 1/);
    const approval = { v: 2, task_id: 't1', tool: 'wire_money', expires_at: '2026-12-01T15:44:23.583Z' };
    expect(() => decodeStored(StoredPendingApproval, entry(JSON.stringify(approval)))).toThrow(StoredStateError);
  });

  it('reads a record with a top-level field it does not know (one a newer release added), except a task', () => {
    const record = JSON.parse(fixtures.find((f) => f.kind === 'call-record')!.text) as Record<string, unknown>;
    expect(decodeStored(StoredCallRecord, entry(JSON.stringify({ ...record, added_later: true })))).toMatchObject({ added_later: true });
    // Tasks stay as strict as TaskView, which the replicas of the previous release check them against.
    const task = JSON.parse(fixtures.find((f) => f.kind === 'task')!.text) as Record<string, unknown>;
    expect(() => decodeStored(StoredTask, entry(JSON.stringify({ ...task, added_later: true })))).toThrow(/added_later is not an allowed property/);
    expect(decodeStored(StoredTask, entry(JSON.stringify({ ...task, v: 1 })))).toMatchObject({ v: 1 });
  });

  it('checks what the agent loop relies on in a checkpointed message: a tool turn names its call', () => {
    const cp = checkpoint();
    const messages = [...(cp.messages as object[]), { role: 'tool', content: 'result without a call id' }];
    expect(() => decodeStored(StoredCheckpoint, entry(JSON.stringify({ ...cp, messages })))).toThrow(StoredStateError);
  });
});
