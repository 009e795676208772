import { contracts, type MessageContract, type RequestContract, type ServiceName } from './catalog.js';
import { subjectsFor, type Subjects } from './subjects.js';
import { renderNatsUserEntry } from './nats-user-entry.js';
import { DEFAULT_TEAM } from './owner.js';
import { renderProviderUsers } from './provider-permissions.js';

export {
  PROVIDER_NAME,
  providerInboxPrefixFor,
  providerNatsPermissions,
  providerPasswordVariableFor,
  providerUserFor,
  renderProviderUsers,
} from './provider-permissions.js';
export type { ProviderPermissions } from './provider-permissions.js';

/** The five deployables, in start order (the dispatcher declares the streams the others use). */
export const HERMES_SERVICES = ['dispatcher', 'gateway', 'runtime', 'toolbus', 'memory'] as const;
export type HermesService = (typeof HERMES_SERVICES)[number];

/**
 * Users of the generated nats-server config: one per service, one for submitting teams, and one for
 * the `hermes` CLI (operators: tasks, audit, approvals, LLM pools, MCP, memory administration).
 */
export const NATS_USERS = [...HERMES_SERVICES, 'submitter', 'cli'] as const;
export type NatsUser = (typeof NATS_USERS)[number];

type StreamKey = keyof Subjects['streams'];
type ConsumerKey = keyof Subjects['consumers'];
type BucketKey = keyof Subjects['buckets'];

/**
 * What a party does with JetStream beyond publishing to a stream's subjects (which the catalog
 * already says). This is the only per-service knowledge not in the catalog: the catalog names
 * subjects, producers and consumers; this table names how each reads streams and which KV buckets
 * it keeps its state in. It mirrors the `streams`, `uses` and `consumers` each `main.ts` hands
 * to `hostService`, and the buckets it opens.
 */
export interface JetStreamRole {
  /** Streams it declares and keeps at its config (create, update, info). */
  readonly owns?: readonly StreamKey[];
  /** Streams it creates only when absent (info, create). */
  readonly uses?: readonly StreamKey[];
  /** Durable pull consumers it declares, pulls from and acks. */
  readonly durables?: readonly { readonly stream: StreamKey; readonly consumer: ConsumerKey }[];
  /**
   * Streams it replays with ordered consumers, each filtered to a subject the catalog lists it as
   * a consumer of (e.g. one task's events).
   */
  readonly follows?: readonly StreamKey[];
  /** Streams it purges messages of (by subject filter: forgetting a user's recordings). */
  readonly purges?: readonly StreamKey[];
  /** Streams it reads single messages from (last message of a subject). */
  readonly gets?: readonly StreamKey[];
  /** KV buckets it opens (created when absent), reads, writes and watches. */
  readonly buckets?: readonly BucketKey[];
  /** Durable consumers of other services it only reads the state of (admission control's queue gauge). */
  readonly gauges?: readonly { readonly stream: StreamKey; readonly consumer: ConsumerKey }[];
}

export const JETSTREAM_ROLES: Readonly<Record<NatsUser, JetStreamRole>> = {
  dispatcher: {
    owns: ['taskSubmit', 'taskEvents', 'runtimeJobs', 'runtimeJobsAhead', 'runtimeResults', 'deadLetters', 'teamEvents'],
    durables: [
      { stream: 'taskSubmit', consumer: 'dispatcherIntake' },
      { stream: 'runtimeResults', consumer: 'dispatcherResults' },
      { stream: 'teamEvents', consumer: 'dispatcherTriggers' },
    ],
    buckets: ['tasks', 'taskIndex', 'schedules', 'triggers'],
    // The last event of a task: on recovery (was its terminal event published?) and for `waiting_for` in taskGet.
    gets: ['taskEvents'],
    gauges: [
      { stream: 'runtimeJobs', consumer: 'runtimeJobs' },
      { stream: 'runtimeJobsAhead', consumer: 'runtimeJobsAhead' },
    ],
  },
  // GET /v1/llm/pools reads the semaphore's pools (as hermes llm status does); GET /v1/tasks/:id/audit replays the task's audit subject.
  gateway: {
    uses: ['taskSubmit', 'taskEvents'],
    follows: ['taskEvents', 'toolAudit'],
    gets: ['taskEvents', 'toolAudit'],
    buckets: ['llmSemaphore'],
    gauges: [
      { stream: 'runtimeJobs', consumer: 'runtimeJobs' },
      { stream: 'runtimeJobsAhead', consumer: 'runtimeJobsAhead' },
    ],
  },
  runtime: {
    // It declares the recordings stream (their retention is its setting) and reads a replay's source from it.
    owns: ['recordings'],
    uses: ['runtimeJobs', 'runtimeJobsAhead', 'runtimeResults', 'taskEvents', 'deadLetters'],
    durables: [
      { stream: 'runtimeJobs', consumer: 'runtimeJobs' },
      { stream: 'runtimeJobsAhead', consumer: 'runtimeJobsAhead' },
    ],
    follows: ['recordings'],
    gets: ['recordings'],
    buckets: ['llmSemaphore', 'checkpoints'],
  },
  toolbus: { owns: ['toolAudit'], uses: ['taskEvents'], buckets: ['toolCalls', 'toolApprovals', 'toolCache'] },
  memory: {
    owns: ['memoryJobs'],
    // Forgetting a user purges their recordings.
    uses: ['deadLetters', 'recordings'],
    purges: ['recordings'],
    durables: [
      { stream: 'memoryJobs', consumer: 'memoryExtract' },
      { stream: 'memoryJobs', consumer: 'memoryWrites' },
    ],
    buckets: ['llmSemaphore'],
  },
  submitter: { follows: ['taskEvents'] },
  // hermes run / status / trace follow and replay task events and audit records; hermes llm reads
  // and sets the semaphore's pools; hermes deadletter lists, shows and replays dead letters.
  cli: {
    follows: ['taskEvents', 'toolAudit', 'deadLetters', 'recordings'],
    gets: ['taskEvents', 'toolAudit', 'deadLetters', 'recordings'],
    buckets: ['llmSemaphore'],
  },
};

/** Publish and subscribe allow-lists of one user; everything else is denied. */
export interface NatsPermissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
  /** Responders may answer requests sent to them (once each) without any publish right on inboxes. */
  readonly allowResponses: boolean;
}

export interface NatsPermissionOptions {
  /** Subject prefix (default `hermes`). */
  readonly prefix?: string;
  /** Tool providers that get a user of their own (deploy/nats/tool-providers.json). */
  readonly providers?: readonly string[];
}

/**
 * The inbox prefix each user must connect with (`NATS_INBOX_PREFIX`): replies to its requests, JetStream
 * API answers and ordered-consumer deliveries arrive under it, and no other user may subscribe there.
 */
export const inboxPrefixFor = (user: NatsUser): string => `_INBOX_${user}`;

/**
 * A catalog subject as a permission: parameters (`{task_id}`, `{provider}`) become `*`. The
 * `submitter` user lives in the HERMES account and submits for the default team only; other
 * teams are accounts of their own (see nats-accounts.ts), so its `{team}` is `default`.
 */
const pattern = (subject: string, user: NatsUser) => (user === 'submitter' ? subject.replaceAll('{team}', DEFAULT_TEAM) : subject).replace(/\{[^}]+\}/g, '*');

type Contract = MessageContract | RequestContract;

function catalogRights(user: NatsUser, s: Subjects): { publish: string[]; subscribe: string[]; responds: boolean; consumes: Map<string, string[]> } {
  const publish: string[] = [];
  const subscribe: string[] = [];
  /** Stream name -> subjects of it this user consumes (for filtered ordered consumers). */
  const consumes = new Map<string, string[]>();
  let responds = false;
  const me = user as ServiceName;
  for (const c of Object.values(contracts) as Contract[]) {
    const subject = pattern(c.subject(s), user);
    if (c.kind === 'request') {
      if (c.requesters.includes(me)) publish.push(subject);
      if (c.responder === me) {
        subscribe.push(`${subject} ${s.queueGroup(c.responder)}`);
        responds = true;
      }
      continue;
    }
    if (c.producers.includes(me)) publish.push(subject);
    if (!c.consumers.includes(me)) continue;
    if (c.stream) {
      const stream = c.stream(s);
      consumes.set(stream, [...(consumes.get(stream) ?? []), subject]);
    } else {
      subscribe.push(subject);
    }
  }
  return { publish, subscribe, responds, consumes };
}

function jetStreamRights(role: JetStreamRole, s: Subjects, consumes: Map<string, string[]>, user: NatsUser): string[] {
  const api = '$JS.API';
  // Every client builds a JetStreamManager, which checks the account once.
  const out = [`${api}.INFO`];
  for (const key of role.owns ?? []) {
    const stream = s.streams[key];
    out.push(`${api}.STREAM.INFO.${stream}`, `${api}.STREAM.CREATE.${stream}`, `${api}.STREAM.UPDATE.${stream}`);
  }
  for (const key of role.uses ?? []) {
    const stream = s.streams[key];
    out.push(`${api}.STREAM.INFO.${stream}`, `${api}.STREAM.CREATE.${stream}`);
  }
  for (const { stream: key, consumer: ckey } of role.durables ?? []) {
    const stream = s.streams[key];
    const consumer = s.consumers[ckey];
    out.push(
      // Declared by name (nats-server 2.9 API, the filter subject as trailing tokens) or as a durable.
      `${api}.CONSUMER.CREATE.${stream}.${consumer}`,
      `${api}.CONSUMER.CREATE.${stream}.${consumer}.>`,
      `${api}.CONSUMER.DURABLE.CREATE.${stream}.${consumer}`,
      `${api}.CONSUMER.INFO.${stream}.${consumer}`,
      `${api}.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
      `$JS.ACK.${stream}.${consumer}.>`,
    );
  }
  for (const key of role.follows ?? []) {
    const stream = s.streams[key];
    const filters = consumes.get(stream) ?? [];
    if (!filters.length) throw new Error(`${user} follows ${stream} but the catalog lists it as consumer of none of its subjects`);
    // Ordered consumers have generated names; the filter subject in the create request is what is checked.
    for (const filter of filters) out.push(`${api}.CONSUMER.CREATE.${stream}.*.${filter}`);
    out.push(`${api}.STREAM.INFO.${stream}`, `${api}.CONSUMER.INFO.${stream}.*`, `${api}.CONSUMER.MSG.NEXT.${stream}.*`, `${api}.CONSUMER.DELETE.${stream}.*`);
  }
  for (const { stream, consumer } of role.gauges ?? []) out.push(`${api}.CONSUMER.INFO.${s.streams[stream]}.${s.consumers[consumer]}`);
  for (const key of role.purges ?? []) out.push(`${api}.STREAM.PURGE.${s.streams[key]}`);
  for (const key of role.gets ?? []) {
    const stream = s.streams[key];
    out.push(`${api}.STREAM.MSG.GET.${stream}`, `${api}.DIRECT.GET.${stream}`, `${api}.DIRECT.GET.${stream}.>`);
  }
  for (const key of role.buckets ?? []) {
    const bucket = s.buckets[key];
    const stream = `KV_${bucket}`;
    out.push(
      `${api}.STREAM.INFO.${stream}`,
      `${api}.STREAM.CREATE.${stream}`,
      `${api}.STREAM.UPDATE.${stream}`,
      // Writes (put, create, update, delete, purge) are JetStream publishes to the key's subject.
      `$KV.${bucket}.>`,
      // Reads: direct get by subject, or the stream message API on servers without direct get.
      `${api}.DIRECT.GET.${stream}`,
      `${api}.DIRECT.GET.${stream}.>`,
      `${api}.STREAM.MSG.GET.${stream}`,
      // Watches, key listings and histories are ordered push consumers with flow control.
      `${api}.CONSUMER.CREATE.${stream}`,
      `${api}.CONSUMER.CREATE.${stream}.>`,
      `${api}.CONSUMER.INFO.${stream}.*`,
      `${api}.CONSUMER.DELETE.${stream}.*`,
      `$JS.FC.${stream}.>`,
    );
  }
  return out;
}

const unique = (xs: string[]) => [...new Set(xs)];

/** The permissions of every user, derived from the contract catalog and {@link JETSTREAM_ROLES}. */
export function natsPermissions(opts: NatsPermissionOptions = {}): Record<NatsUser, NatsPermissions> {
  const s = subjectsFor(opts.prefix);
  const out = {} as Record<NatsUser, NatsPermissions>;
  for (const user of NATS_USERS) {
    const catalog = catalogRights(user, s);
    out[user] = {
      publish: unique([...catalog.publish, ...jetStreamRights(JETSTREAM_ROLES[user], s, catalog.consumes, user)]),
      subscribe: unique([...catalog.subscribe, `${inboxPrefixFor(user)}.>`]),
      allowResponses: catalog.responds,
    };
  }
  return out;
}

/** The environment variable nats-server reads a user's password from (`$NAME` in the config). */
export const passwordVariableFor = (user: NatsUser): string => `HERMES_NATS_PASSWORD_${user.toUpperCase()}`;

const HEADER = [
  '# Generated by scripts/generate-nats-permissions.mjs from libs/contracts — do not edit.',
  '# One user per Hermes service, one for submitting teams, one for the hermes CLI and one per tool provider of',
  '# deploy/nats/tool-providers.json; each may publish and subscribe only',
  '# to what it uses. Passwords come from environment variables of nats-server (or variables',
  '# defined before this file is included). Every user must connect with NATS_INBOX_PREFIX set to',
  '# _INBOX_<user>: replies reach it there and nobody else may subscribe to them. See docs/deploy.md.',
];

/**
 * The user entries of every Hermes user (services, submitter, CLI) and of the listed tool
 * providers, indented for a `users = [...]` list (of the users file or of the HERMES account).
 */
export function renderNatsUserEntries(opts: NatsPermissionOptions = {}, indent = '    '): string {
  const perms = natsPermissions(opts);
  const users = NATS_USERS.map((user) => renderNatsUserEntry({ user, passwordVariable: passwordVariableFor(user), ...perms[user] }, indent));
  return [...users, ...renderProviderUsers(opts.providers ?? [], opts, indent)].join('\n');
}

/** The `authorization { users = [...] }` block of nats-server.conf, for the given prefix. */
export function renderNatsUsersConf(opts: NatsPermissionOptions = {}): string {
  const prefix = opts.prefix ?? 'hermes';
  return [...HEADER, `# Subject prefix: ${prefix}`, 'authorization {', '  users = [', renderNatsUserEntries(opts), '  ]', '}', ''].join('\n');
}
