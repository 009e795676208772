import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TEAM,
  isTeamName,
  ownerKey,
  ownerOf,
  teamOfSubject,
  ERROR_CODES,
  Id,
  TASK_EVENT_KINDS,
  TaskEvent,
  TaskAcceptedEvent,
  TaskRejectedEvent,
  TaskStartedEvent,
  TaskPlannedEvent,
  TaskStepEvent,
  TaskCompletedEvent,
  TaskFailedEvent,
  TaskCancelledEvent,
  TaskInputRequiredEvent,
  TaskReviewStartedEvent,
  TaskReviewVerdictEvent,
  TaskSubmitEvent,
  WireError,
  contracts,
  decodeCloudEvent,
  makeTaskEvent,
  precompile,
  subjectsFor,
  taskEventKind,
  taskIdFor,
  validate,
  wireError,
  RecordingEntry,
  ABSOLUTE_URI_PATTERN,
  PUBLISHED_ASYNCAPI_URL,
  defaultEventSourceBase,
  eventSourceFor,
} from '../src/index.js';
import type { HeaderLookup, TaskEventDataByKind, TaskEventKind, ValidationResult } from '../src/index.js';

const fixturesDir = new URL('./fixtures/', import.meta.url);

function readFixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(name, fixturesDir), 'utf8'));
}

/** NATS header lookup over a plain record, case-insensitive like the bus adapter. */
function headersOf(record: Record<string, string>): HeaderLookup {
  const lower = new Map(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));
  return (name) => lower.get(name.toLowerCase());
}

const noHeaders: HeaderLookup = () => undefined;
const bytes = (text: string) => new TextEncoder().encode(text);

function goodSubmission(): Record<string, unknown> & { data: Record<string, unknown> } {
  return structuredClone(readFixture('task-submit.v1.structured.json')) as Record<string, unknown> & { data: Record<string, unknown> };
}

function issuesOf<T>(result: ValidationResult<T>) {
  if (result.ok) throw new Error('expected validation to fail');
  return result.issues;
}

describe('validate(TaskSubmitEvent)', () => {
  it('accepts a complete structured submission, extension attributes included', () => {
    const result = validate(TaskSubmitEvent, goodSubmission());
    expect(result.ok).toBe(true);
  });

  it('reports a missing data.goal at /data/goal', () => {
    const event = goodSubmission();
    delete event.data.goal;
    expect(issuesOf(validate(TaskSubmitEvent, event))).toEqual([{ path: '/data/goal', message: 'is required', keyword: 'required' }]);
  });

  it('reports an unknown property of the task request at its own path', () => {
    const event = goodSubmission();
    event.data.colour = 'blue';
    expect(issuesOf(validate(TaskSubmitEvent, event))).toEqual([
      { path: '/data/colour', message: 'is not an allowed property', keyword: 'additionalProperties' },
    ]);
  });

  it('rejects an extension attribute that is not a scalar', () => {
    const event = { ...goodSubmission(), partitionkey: { nested: true } };
    const issues = issuesOf(validate(TaskSubmitEvent, event));
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.every((i) => i.path === '/partitionkey')).toBe(true);
  });

  it('rejects a specversion other than 1.0', () => {
    const event = { ...goodSubmission(), specversion: '0.3' };
    expect(issuesOf(validate(TaskSubmitEvent, event))).toEqual([{ path: '/specversion', message: 'must be "1.0"', keyword: 'const' }]);
  });

  it('rejects a time that is not RFC 3339', () => {
    const event = { ...goodSubmission(), time: '14/03/2025 09:26' };
    expect(issuesOf(validate(TaskSubmitEvent, event))).toEqual([expect.objectContaining({ path: '/time', keyword: 'format' })]);
  });

  it('lists every problem, not only the first', () => {
    const event = goodSubmission();
    event.type = 'com.example.other';
    delete event.data.user_id;
    const paths = issuesOf(validate(TaskSubmitEvent, event)).map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['/type', '/data/user_id']));
  });
});

describe('submission fixtures', () => {
  // Old payloads are kept: a schema change that rejects one of them breaks existing submitters.
  const files = readdirSync(fixturesDir).filter((f) => f.startsWith('task-submit.') && f.endsWith('.json'));

  it('are present for both content modes', () => {
    expect(files.some((f) => f.includes('.binary'))).toBe(true);
    expect(files.some((f) => f.includes('.structured'))).toBe(true);
  });

  it.each(files)('%s still decodes and validates as a TaskSubmitEvent', (file) => {
    const fixture = readFixture(file) as Record<string, unknown>;
    const binary = file.includes('.binary');
    const decoded = binary
      ? decodeCloudEvent(bytes(JSON.stringify(fixture.body)), headersOf(fixture.headers as Record<string, string>))
      : decodeCloudEvent(bytes(JSON.stringify(fixture)), noHeaders);
    if (!decoded.ok) throw new Error(`decode failed: ${JSON.stringify(decoded.issues)}`);
    expect(decoded.mode).toBe(binary ? 'binary' : 'structured');
    const result = validate(TaskSubmitEvent, decoded.event);
    expect(result.ok ? [] : result.issues).toEqual([]);
  });
});

describe('decodeCloudEvent', () => {
  it('binary mode: reads attributes from ce-* headers and the body as data', () => {
    const request = { user_id: 'u_dana', goal: 'Check the build.' };
    const decoded = decodeCloudEvent(
      bytes(JSON.stringify(request)),
      headersOf({
        'ce-specversion': '1.0',
        'ce-type': 'io.hermes.task.submit',
        'ce-source': 'urn:team:qa',
        'ce-id': 'evt-9',
        'ce-traceparent': '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        'ce-unlisted': 'ignored',
        'content-type': 'application/json; charset=utf-8',
      }),
    );
    expect(decoded).toEqual({
      ok: true,
      mode: 'binary',
      event: {
        specversion: '1.0',
        type: 'io.hermes.task.submit',
        source: 'urn:team:qa',
        id: 'evt-9',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        datacontenttype: 'application/json',
        data: request,
      },
    });
    if (decoded.ok) expect(validate(TaskSubmitEvent, decoded.event).ok).toBe(true);
  });

  it('structured mode: takes the whole JSON body as the event', () => {
    const event = goodSubmission();
    expect(decodeCloudEvent(bytes(JSON.stringify(event)), noHeaders)).toEqual({ ok: true, mode: 'structured', event });
  });

  it('structured mode: a datacontenttype with parameters reads as its bare media type', () => {
    const event = { ...goodSubmission(), datacontenttype: 'Application/JSON; charset="UTF-8"' };
    const decoded = decodeCloudEvent(bytes(JSON.stringify(event)), noHeaders);
    expect(decoded).toMatchObject({ ok: true, event: { datacontenttype: 'application/json' } });
    if (decoded.ok) expect(validate(TaskSubmitEvent, decoded.event).ok).toBe(true);
  });

  it('refuses a charset other than UTF-8 in either mode, naming datacontenttype', () => {
    const structured = decodeCloudEvent(bytes(JSON.stringify({ ...goodSubmission(), datacontenttype: 'application/json; charset=latin1' })), noHeaders);
    const binary = decodeCloudEvent(
      bytes('{}'),
      headersOf({ 'ce-specversion': '1.0', 'ce-source': 's', 'ce-id': 'i', 'content-type': 'application/json;charset=utf-16' }),
    );
    for (const decoded of [structured, binary]) {
      expect(decoded).toMatchObject({ ok: false, issues: [{ path: '/datacontenttype' }] });
    }
    expect(binary).toMatchObject({ ref: { source: 's', id: 'i' } });
  });

  it('structured mode: data_base64 is decoded into data', () => {
    const { data, ...attrs } = goodSubmission();
    const decoded = decodeCloudEvent(bytes(JSON.stringify({ ...attrs, data_base64: Buffer.from(JSON.stringify(data)).toString('base64') })), noHeaders);
    expect(decoded).toEqual({ ok: true, mode: 'structured', event: { ...attrs, data } });
  });

  it('data_base64 that is not base64, not JSON, over a limit, or beside data is an issue naming the event', () => {
    const { data, ...attrs } = goodSubmission();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...attrs, data_base64: 'not base64!' }, '/data_base64'],
      [{ ...attrs, data_base64: 42 }, '/data_base64'],
      [{ ...attrs, data_base64: Buffer.from('{"goal":').toString('base64') }, ''],
      [{ ...attrs, data, data_base64: Buffer.from('{}').toString('base64') }, '/data_base64'],
      [
        {
          ...attrs,
          data_base64: Buffer.from(JSON.stringify({ ...data, inputs: { deep: JSON.parse('['.repeat(80) + ']'.repeat(80)) as unknown } })).toString('base64'),
        },
        '/data/inputs',
      ],
    ];
    for (const [event, path] of cases) {
      const decoded = decodeCloudEvent(bytes(JSON.stringify(event)), noHeaders);
      expect(decoded.ok, JSON.stringify(event).slice(0, 80)).toBe(false);
      if (!decoded.ok) {
        expect(decoded.issues[0]!.path.startsWith(path)).toBe(true);
        expect(decoded.ref).toEqual({ source: attrs.source, id: attrs.id });
      }
    }
  });

  it('reports a body that is not JSON as an issue at the root', () => {
    const decoded = decodeCloudEvent(bytes('{"specversion": "1.0",'), noHeaders);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.issues).toEqual([expect.objectContaining({ path: '', keyword: 'json' })]);
  });

  it('reports a non-JSON body in binary mode too', () => {
    const decoded = decodeCloudEvent(bytes('goal: do it'), headersOf({ 'ce-specversion': '1.0' }));
    expect(decoded.ok).toBe(false);
  });

  it('rejects a structured body that is not a JSON object', () => {
    for (const body of ['[1, 2]', '"text"', '42', '']) {
      const decoded = decodeCloudEvent(bytes(body), noHeaders);
      expect(decoded.ok, body).toBe(false);
    }
  });
});

describe('taskIdFor', () => {
  it('is a pure function of team, source and id', () => {
    expect(taskIdFor('team-a', 'urn:team:a', 'evt-1')).toBe(taskIdFor('team-a', 'urn:team:a', 'evt-1'));
  });

  it('is, in the default team, t_ and the first 32 hex digits of sha256(source NUL id), as before teams', () => {
    const digest = createHash('sha256').update('urn:team:a\u0000evt-1').digest('hex');
    expect(taskIdFor(DEFAULT_TEAM, 'urn:team:a', 'evt-1')).toBe(`t_${digest.slice(0, 32)}`);
  });

  it('is, in any other team, t_ and the first 32 hex digits of sha256 of [team, source, id] as JSON', () => {
    const digest = createHash('sha256')
      .update(JSON.stringify(['team-a', 'urn:team:a', 'evt-1']))
      .digest('hex');
    expect(taskIdFor('team-a', 'urn:team:a', 'evt-1')).toBe(`t_${digest.slice(0, 32)}`);
  });

  it("differs by team for the same source and id, so no team can name (or pre-create) another team's task", () => {
    const ids = new Set(['team-a', 'team-b', DEFAULT_TEAM].map((team) => taskIdFor(team, '/hermes/gateway/alice', 'order-77')));
    expect(ids.size).toBe(3);
  });

  it("never gives a default-team source and id the id of another team's task", () => {
    // The default form hashes source NUL id: a source that spells out another team's JSON array still differs.
    expect(taskIdFor(DEFAULT_TEAM, '["team-a","s"', '"i"]')).not.toBe(taskIdFor('team-a', 's', 'i'));
  });

  it('differs by source for the same event id', () => {
    expect(taskIdFor(DEFAULT_TEAM, 'urn:team:a', 'evt-1')).not.toBe(taskIdFor(DEFAULT_TEAM, 'urn:team:b', 'evt-1'));
  });

  it('does not confuse where source ends and id begins', () => {
    expect(taskIdFor(DEFAULT_TEAM, 'ab', 'c')).not.toBe(taskIdFor(DEFAULT_TEAM, 'a', 'bc'));
    expect(taskIdFor('team-a', 'ab', 'c')).not.toBe(taskIdFor('team-a', 'a', 'bc'));
  });

  it('is one NATS subject token and a valid Id', () => {
    for (const team of [DEFAULT_TEAM, 'team-a']) {
      const id = taskIdFor(team, 'https://example.com/a.b.c', 'weird id with spaces.*>');
      expect(id).toMatch(/^t_[0-9a-f]{32}$/);
      expect(id).not.toMatch(/[.*>\s]/);
      expect(validate(Id, id).ok).toBe(true);
    }
  });
});

describe('owners', () => {
  it("keys the default team's users by their bare id (what stores held before teams) and others by team/user", () => {
    expect(ownerKey({ team: DEFAULT_TEAM, user_id: 'alice' })).toBe('alice');
    expect(ownerKey({ team: 'team-a', user_id: 'alice' })).toBe('team-a/alice');
    expect(ownerKey({ team: 'team-a', user_id: 'alice' })).not.toBe(ownerKey({ team: 'team-b', user_id: 'alice' }));
  });

  it("reads a record without a team as the default team's", () => {
    expect(ownerOf({ user_id: 'alice' })).toEqual({ team: DEFAULT_TEAM, user_id: 'alice' });
    expect(ownerOf({ user_id: 'alice', team: 'team-a' })).toEqual({ team: 'team-a', user_id: 'alice' });
  });

  it("takes the team from the last token of a subject, the bare subject being the default team's", () => {
    expect(teamOfSubject('hermes.tasks.submit.team-a', 'hermes.tasks.submit')).toBe('team-a');
    expect(teamOfSubject('hermes.tasks.submit', 'hermes.tasks.submit')).toBe(DEFAULT_TEAM);
    for (const bad of ['hermes.tasks.submit.Team-A', 'hermes.tasks.submit.a.b', 'hermes.tasks.submit.', 'hermes.tasks.get.team-a', 'hermes.tasks.submitx']) {
      expect(teamOfSubject(bad, 'hermes.tasks.submit'), bad).toBeUndefined();
    }
  });

  it('accepts as team names only one lower-case subject token', () => {
    for (const good of ['team-a', 'a', 'x'.repeat(32), DEFAULT_TEAM]) expect(isTeamName(good), good).toBe(true);
    for (const bad of ['', 'Team', 'a.b', '*', '>', '-a', 'a_b', 'x'.repeat(33), 'a/b']) expect(isTeamName(bad), bad).toBe(false);
  });
});

describe('subjectsFor', () => {
  it('defaults to the hermes prefix', () => {
    const s = subjectsFor();
    expect(s.prefix).toBe('hermes');
    expect(s.taskSubmit('team-a')).toBe('hermes.tasks.submit.team-a');
    expect(s.taskSubmitLegacy).toBe('hermes.tasks.submit');
    expect(s.taskEvents('team-a', 't_1')).toBe('hermes.tasks.events.team-a.t_1');
    expect(s.teamTaskEvents('team-a')).toBe('hermes.tasks.events.team-a.>');
    expect(s.taskEventsAll).toBe('hermes.tasks.events.>');
    expect(s.teamTaskGet('team-a')).toBe('hermes.tasks.get.team-a');
  });

  it.each(['a.b', 'hermes.', '*', '>', '', 'has space', 'x'.repeat(33)])('rejects the prefix %j', (prefix) => {
    expect(() => subjectsFor(prefix)).toThrow(/one NATS subject token/);
  });

  it('derives upper-case stream names with dashes turned into underscores', () => {
    const s = subjectsFor('acme-prod');
    expect(s.streams).toEqual({
      taskSubmit: 'ACME_PROD_TASK_SUBMIT',
      taskEvents: 'ACME_PROD_TASK_EVENTS',
      teamEvents: 'ACME_PROD_TEAM_EVENTS',
      runtimeJobs: 'ACME_PROD_RUNTIME_JOBS',
      runtimeJobsAhead: 'ACME_PROD_RUNTIME_JOBS_AHEAD',
      runtimeResults: 'ACME_PROD_RUNTIME_RESULTS',
      toolAudit: 'ACME_PROD_TOOL_AUDIT',
      memoryJobs: 'ACME_PROD_MEMORY_JOBS',
      deadLetters: 'ACME_PROD_DEAD_LETTERS',
      recordings: 'ACME_PROD_RECORDINGS',
    });
    expect(s.deadLetter(s.streams.taskSubmit)).toBe('acme-prod.deadletter.ACME_PROD_TASK_SUBMIT');
    expect(s.runtimeJobs).toBe('acme-prod.runtime.jobs');
    expect(s.buckets.tasks).toBe('acme-prod_tasks');
    expect(s.queueGroup('memory')).toBe('acme-prod.memory');
  });

  it("puts every catalog subject under the prefix, but the NATS services API's own $SRV verbs", () => {
    const s = subjectsFor('acme');
    const fixed = Object.values(contracts).filter((c) => c.subject(s).startsWith('$SRV.'));
    // Every client's services API answers on these exact subjects; a prefix would hide providers from it.
    expect(fixed.map((c) => c.name).sort()).toEqual(['microInfo', 'microPing', 'microSchema', 'microStats']);
    for (const c of Object.values(contracts)) if (!fixed.includes(c)) expect(c.subject(s), c.name).toMatch(/^acme\./);
  });
});

describe('makeTaskEvent', () => {
  const usage = { input_tokens: 120, output_tokens: 30 };
  const samples: { [K in TaskEventKind]: TaskEventDataByKind[K] } = {
    accepted: { task_id: 't_1', user_id: 'u_1', session_id: 's_1', goal: 'Say hello.', source_event: { source: 'urn:team:a', id: 'evt-1' } },
    rejected: {
      source_event: { source: 'urn:team:a', id: 'evt-2' },
      error: wireError('invalid_task_event', 'data.goal is required'),
      issues: [{ path: '/data/goal', message: 'is required', keyword: 'required' }],
    },
    planned: {
      task_id: 't_1',
      subtasks: [
        { id: 'a', intent: 'Fetch.', depends_on: [] },
        { id: 'b', intent: 'Sum up.', depends_on: ['a'], tools: ['http_get'] },
      ],
      replans: 0,
    },
    started: { task_id: 't_1', subtask_id: 'st_1', attempt: 1 },
    step: { task_id: 't_1', subtask_id: 'st_1', step: 1, kind: 'tool_call', model: 'gpt-test', usage, detail: { tool: 'http_get' } },
    input_required: {
      task_id: 't_1',
      subtask_id: 'main',
      call_id: 'call_1',
      question: 'Which region?',
      choices: ['eu', 'us'],
      deadline_at: '2025-03-15T10:00:00Z',
    },
    review_started: { task_id: 't_1', round: 1, subtasks: ['a', 'b'] },
    review_verdict: { task_id: 't_1', round: 1, verdict: 'revise', subtasks: [{ id: 'b', notes: 'cite the source' }] },
    completed: { task_id: 't_1', result: { output: 'Hello.', data: { greeting: 'hello' }, review: { accepted: true, rounds: 2 } }, usage },
    failed: { task_id: 't_1', error: wireError('llm_timeout', 'the model took too long'), usage },
    cancelled: { task_id: 't_1', reason: 'cancelled by the submitter' },
  };
  const schemaOf = {
    accepted: TaskAcceptedEvent,
    rejected: TaskRejectedEvent,
    planned: TaskPlannedEvent,
    started: TaskStartedEvent,
    step: TaskStepEvent,
    input_required: TaskInputRequiredEvent,
    review_started: TaskReviewStartedEvent,
    review_verdict: TaskReviewVerdictEvent,
    completed: TaskCompletedEvent,
    failed: TaskFailedEvent,
    cancelled: TaskCancelledEvent,
  } as const;

  it.each(TASK_EVENT_KINDS)('builds a %s event that validates as a TaskEvent', (kind) => {
    const event = makeTaskEvent(kind, {
      id: `t_1:${kind}`,
      source: 'hermes/dispatcher',
      taskId: 't_1',
      data: samples[kind],
      time: new Date('2025-03-14T10:00:00Z'),
    });
    const result = validate(TaskEvent, event);
    expect(result.ok ? [] : result.issues).toEqual([]);
    expect(validate(schemaOf[kind], event).ok).toBe(true);
    expect(event).toMatchObject({ specversion: '1.0', type: `io.hermes.task.${kind}`, subject: 't_1', time: '2025-03-14T10:00:00.000Z' });
    expect(taskEventKind(event)).toBe(kind);
  });

  it('carries traceparent and tracestate as CloudEvents extension attributes, with a dataschema into the published document', () => {
    const trace = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=opaque,other=1' };
    const event = makeTaskEvent('completed', { id: 't_1:completed', source: 'urn:hermes:hermes/dispatcher', taskId: 't_1', data: samples.completed, trace });
    expect(event).toMatchObject({ ...trace, dataschema: `${PUBLISHED_ASYNCAPI_URL}#/components/schemas/TaskCompletedData` });
    expect(validate(TaskEvent, event).ok).toBe(true);
    // The schema bounds the extension like the W3C header (512 characters), so an oversized one is refused.
    expect(validate(TaskEvent, { ...event, tracestate: 'x'.repeat(513) }).ok).toBe(false);
  });

  it('defaults the event source to an absolute URN naming the subject prefix, and refuses a relative source', () => {
    const source = eventSourceFor(defaultEventSourceBase('acme'), 'dispatcher');
    expect(source).toBe('urn:hermes:acme/dispatcher');
    expect(new RegExp(ABSOLUTE_URI_PATTERN).test(source)).toBe(true);
    expect(eventSourceFor('https://hermes.example.test/prod/', 'runtime')).toBe('https://hermes.example.test/prod/runtime');
    expect(new RegExp(ABSOLUTE_URI_PATTERN).test('hermes/dispatcher')).toBe(false);
  });

  it('does not let an event of one kind pass as another', () => {
    const event = makeTaskEvent('started', { id: 'x', source: 'hermes/runtime', taskId: 't_1', data: samples.started });
    expect(validate(TaskCompletedEvent, event).ok).toBe(false);
  });
});

describe('wireError', () => {
  it('uses the default retryability of the code', () => {
    for (const [code, { retryable }] of Object.entries(ERROR_CODES)) {
      expect(wireError(code as keyof typeof ERROR_CODES, 'm').retryable, code).toBe(retryable);
    }
    expect(wireError('timeout', 'slow').retryable).toBe(true);
    expect(wireError('invalid_payload', 'bad').retryable).toBe(false);
  });

  it('lets the producer override retryability', () => {
    expect(wireError('internal', 'disk full', undefined, false).retryable).toBe(false);
  });

  it('includes details only when given, and always matches the WireError schema', () => {
    const plain = wireError('not_found', 'no such task');
    expect(plain).toEqual({ code: 'not_found', message: 'no such task', retryable: false });
    const detailed = wireError('forbidden', 'not yours', { task_id: 't_1' });
    expect(detailed.details).toEqual({ task_id: 't_1' });
    expect(validate(WireError, plain).ok).toBe(true);
    expect(validate(WireError, detailed).ok).toBe(true);
  });
});

describe('catalog', () => {
  it('every schema on the wire compiles', () => {
    for (const c of Object.values(contracts)) {
      if (c.kind === 'message') precompile(c.payload);
      else precompile(c.request, c.reply);
    }
  });

  it('names each contract after its key', () => {
    for (const [key, c] of Object.entries(contracts)) expect(c.name).toBe(key);
  });
});

describe('recording fixtures', () => {
  // Recordings outlive releases (RECORDING_MAX_AGE_MS): an entry written by an older runtime must still read, or replay and eval lose it.
  const files = readdirSync(fixturesDir).filter((f) => f.startsWith('recording.') && f.endsWith('.json'));

  it('cover every kind of entry', () => {
    const kinds = files.map((f) => (readFixture(f) as { kind: string }).kind).sort();
    expect([...new Set(kinds)]).toEqual(['divergence', 'llm', 'script', 'tool']);
  });

  it.each(files)('%s still validates as a RecordingEntry', (file) => {
    const result = validate(RecordingEntry, readFixture(file));
    expect(result.ok ? [] : result.issues).toEqual([]);
  });

  it('an entry of an unknown kind does not validate', () => {
    expect(validate(RecordingEntry, { ...(readFixture('recording.v1.script.json') as object), kind: 'note' }).ok).toBe(false);
  });
});
