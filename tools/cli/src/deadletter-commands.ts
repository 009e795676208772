import { lastSeqOf, replaySubject, republishDeadLetter, type Bus } from '@hermes/bus';
import { DeadLetter, validate } from '@hermes/contracts';
import { CliError, EXIT, UsageError, stringOption, writeLine, type Command, type CommandContext } from './command.js';
import { formatTable } from './text-table.js';

const DEFAULT_LIST_LIMIT = 50;
const clip = (text: string, max = 70) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function seqArg(raw: string | undefined): number {
  const seq = Number(raw);
  if (!raw || !Number.isInteger(seq) || seq < 1)
    throw new UsageError(`"${raw ?? ''}" is not a dead-letter sequence (the SEQ column of hermes deadletter list)`);
  return seq;
}

function missingStream(bus: Bus) {
  return (err: Error): never => {
    throw new CliError(`there is no dead-letter stream ${bus.subjects.streams.deadLetters} (is the dispatcher running on this NATS?)`, EXIT.failed, {
      cause: err,
    });
  };
}

/** The latest `limit` dead letters (of one stream, or of all), oldest first. */
async function latestDeadLetters(bus: Bus, o: { stream?: string; limit: number; signal?: AbortSignal }): Promise<{ seq: number; record: DeadLetter }[]> {
  const dlStream = bus.subjects.streams.deadLetters;
  const subject = o.stream ? bus.subjects.deadLetter(o.stream) : bus.subjects.deadLetterAll;
  const onMissingStream = missingStream(bus);
  // Every record matches the wildcard, so the latest `limit` of them are the last sequences; one
  // stream's records are spread out, and are read from the start.
  const last = o.stream ? undefined : await lastSeqOf(bus, { stream: dlStream, subject, onMissingStream });
  const afterSeq = last !== undefined ? Math.max(0, last - o.limit) : undefined;
  const messages = await replaySubject(bus, {
    stream: dlStream,
    subject,
    onMissingStream,
    ...(afterSeq ? { afterSeq } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  return messages.slice(-o.limit).flatMap((m) => {
    const checked = validate(DeadLetter, m.value);
    return checked.ok ? [{ seq: m.seq, record: checked.value }] : [];
  });
}

/** One dead letter by its sequence in the dead-letter stream. */
async function deadLetterAt(bus: Bus, seq: number): Promise<DeadLetter> {
  const stream = bus.subjects.streams.deadLetters;
  const stored = await bus.storedMessage(stream, { seq }).catch((err: Error) => {
    if (err.name === 'StreamNotFoundError') missingStream(bus)(err);
    throw err;
  });
  if (!stored) throw new CliError(`no dead letter ${seq} in ${stream} (it may have aged out: they are kept 14 days)`);
  const checked = validate(DeadLetter, stored.json());
  if (!checked.ok) throw new CliError(`message ${seq} of ${stream} is not a dead-letter record`);
  return checked.value;
}

const errorText = (r: DeadLetter) => `${r.error.code}: ${r.error.message}`;

/** `hermes deadletter list`: the latest dead letters, one line each. */
export const deadLetterListCommand: Command = {
  path: ['deadletter', 'list'],
  summary: 'list the latest dead letters: work-queue messages Hermes gave up on, and why',
  args: '',
  minArgs: 0,
  maxArgs: 0,
  options: {
    stream: { type: 'string', valueName: 'name', description: 'only those from this stream, e.g. HERMES_TASK_SUBMIT' },
    limit: { type: 'string', valueName: 'n', description: `at most the latest n (default ${DEFAULT_LIST_LIMIT}, at most 10000)` },
    json: { type: 'boolean', description: 'print each record as one JSON line (with its seq)' },
  },
  async execute({ values }, ctx) {
    const stream = stringOption(values, 'stream');
    if (stream !== undefined && !/^[A-Za-z0-9_-]+$/.test(stream)) throw new UsageError(`"${stream}" is not a stream name`);
    const rawLimit = stringOption(values, 'limit');
    const limit = rawLimit === undefined ? DEFAULT_LIST_LIMIT : Number(rawLimit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
    const bus = await ctx.bus();
    const letters = await latestDeadLetters(bus, { limit, ...(stream ? { stream } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) });
    if (letters.length === 0) {
      writeLine(ctx.stderr, stream ? `no dead letters from ${stream}` : 'no dead letters');
      return EXIT.ok;
    }
    if (values.json === true) {
      for (const { seq, record } of letters) writeLine(ctx.stdout, JSON.stringify({ seq, ...record }));
      return EXIT.ok;
    }
    const rows = letters.map(({ seq, record: r }) => [
      String(seq),
      r.dead_lettered_at,
      r.stream,
      String(r.stream_seq),
      r.consumer,
      String(r.deliveries),
      clip(errorText(r)),
    ]);
    writeLine(ctx.stdout, formatTable([['SEQ', 'DEAD-LETTERED', 'STREAM', 'STREAM SEQ', 'CONSUMER', 'DELIVERIES', 'ERROR'], ...rows]));
    return EXIT.ok;
  },
};

/** `hermes deadletter show <seq>`: one dead letter in full, its body decoded. */
export const deadLetterShowCommand: Command = {
  path: ['deadletter', 'show'],
  summary: 'print one dead letter: where it was, why it was dropped, its headers and body',
  args: '<seq>',
  minArgs: 1,
  maxArgs: 1,
  options: { json: { type: 'boolean', description: 'print the record as JSON (the body stays base64)' } },
  async execute({ values, positionals }, ctx) {
    const seq = seqArg(positionals[0]);
    const r = await deadLetterAt(await ctx.bus(), seq);
    if (values.json === true) {
      writeLine(ctx.stdout, JSON.stringify({ seq, ...r }, null, 2));
      return EXIT.ok;
    }
    writeLine(ctx.stdout, formatDeadLetter(seq, r));
    return EXIT.ok;
  },
};

function formatDeadLetter(seq: number, r: DeadLetter): string {
  const fields = [
    ['dead letter', String(seq)],
    ['from', `${r.stream} seq ${r.stream_seq} (consumer ${r.consumer})`],
    ['subject', r.subject],
    ['published', r.published_at ?? '?'],
    ['dead-lettered', `${r.dead_lettered_at} after ${r.deliveries} deliver${r.deliveries === 1 ? 'y' : 'ies'}`],
    ['error', `${errorText(r)} (${r.error.retryable ? 'retryable' : 'not retryable'})`],
    ...(r.error.details ? [['details', JSON.stringify(r.error.details)]] : []),
  ];
  const width = Math.max(...fields.map(([k]) => k!.length)) + 2;
  const lines = fields.map(([k, v]) => `${`${k}:`.padEnd(width + 1)}${v}`);
  lines.push('headers:');
  for (const [name, list] of Object.entries(r.headers)) for (const v of list) lines.push(`  ${name}: ${v}`);
  lines.push(`body (${r.payload_bytes} bytes):`);
  lines.push(
    r.payload === undefined ? '  (not kept: too large for its record; cannot be replayed)' : indentBody(Buffer.from(r.payload, 'base64').toString('utf8')),
  );
  return lines.join('\n');
}

function indentBody(text: string): string {
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON (that may be why it was dropped): shown as it is.
  }
  return pretty
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

/**
 * `hermes deadletter replay <seq>`: publishes the original body with its original headers to its
 * original subject. Nats-Msg-Id is replaced by `replay:<seq>:<original id>`: with the original id,
 * JetStream would drop the replay as a duplicate while the stream's duplicate window (2 min, for
 * submissions TASK_DUPLICATE_WINDOW_MS) still remembers it, and a replay must re-drive the
 * message; with one per dead letter, replaying the same one twice within the window stores it once.
 */
export const deadLetterReplayCommand: Command = {
  path: ['deadletter', 'replay'],
  summary: 'publish a dead letter again, to its original subject, once its cause is fixed',
  help: [
    'The original body and headers go to the original subject; the replay is a new message, with a',
    'fresh delivery count. Its Nats-Msg-Id is replay:<seq>:<original Nats-Msg-Id>, not the original:',
    "with the original, JetStream would drop the replay as a duplicate for as long as the stream's",
    'duplicate window (2 min; TASK_DUPLICATE_WINDOW_MS for submissions) remembers it, and the replay',
    'would silently do nothing. Replaying the same dead letter twice within that window stores it once.',
    'Services still de-duplicate by their own ids (task id from the CloudEvent, job id), as for any',
    'redelivery: a replayed submission of a task that already ended changes nothing.',
  ].join('\n'),
  args: '<seq>',
  minArgs: 1,
  maxArgs: 1,
  options: {},
  async execute({ positionals }, ctx) {
    const seq = seqArg(positionals[0]);
    const bus = await ctx.bus();
    const r = await deadLetterAt(bus, seq);
    if (r.payload === undefined)
      throw new CliError(`dead letter ${seq} kept no body (${r.payload_bytes} bytes were too large for its record): it cannot be replayed`);
    return replay(ctx, bus, seq, r);
  },
};

async function replay(ctx: CommandContext, bus: Bus, seq: number, r: DeadLetter): Promise<number> {
  const originalId = Object.entries(r.headers).find(([name]) => name.toLowerCase() === 'nats-msg-id')?.[1][0];
  const msgId = `replay:${seq}:${originalId ?? `${r.stream}:${r.stream_seq}`}`;
  const ack = await republishDeadLetter(bus, r, msgId);
  if (ack.duplicate) {
    writeLine(
      ctx.stdout,
      `dead letter ${seq} was already replayed (${ack.stream} seq ${ack.seq}, Nats-Msg-Id ${msgId}); JetStream dropped this one as a duplicate`,
    );
  } else {
    writeLine(ctx.stdout, `replayed dead letter ${seq} to ${r.subject}: ${ack.stream} seq ${ack.seq} (Nats-Msg-Id ${msgId})`);
  }
  return EXIT.ok;
}

export const DEADLETTER_COMMANDS: readonly Command[] = [deadLetterListCommand, deadLetterShowCommand, deadLetterReplayCommand];
