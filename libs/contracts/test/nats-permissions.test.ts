import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEAM, contracts, subjectsFor } from '../src/index.js';
import {
  HERMES_SERVICES,
  JETSTREAM_ROLES,
  NATS_USERS,
  inboxPrefixFor,
  natsPermissions,
  passwordVariableFor,
  providerNatsPermissions,
  renderNatsUsersConf,
} from '../src/nats-permissions.js';

const confPath = fileURLToPath(new URL('../../../deploy/nats/hermes-users.conf', import.meta.url));
const perms = natsPermissions();
const s = subjectsFor();

/** NATS subject matching: `*` one token, `>` the rest. */
function matches(pattern: string, subject: string): boolean {
  const p = pattern.split(' ')[0]!.split('.');
  const t = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return t.length > i;
    if (i >= t.length || (p[i] !== '*' && p[i] !== t[i])) return false;
  }
  return p.length === t.length;
}
const mayPublish = (user: keyof typeof perms, subject: string) => perms[user].publish.some((p) => matches(p, subject));
const maySubscribe = (user: keyof typeof perms, subject: string) => perms[user].subscribe.some((p) => matches(p, subject));

describe('deploy/nats/hermes-users.conf', () => {
  it('is exactly what the contracts generate', () => {
    let current: string | undefined;
    try {
      current = readFileSync(confPath, 'utf8');
    } catch {
      current = undefined;
    }
    const providers = JSON.parse(readFileSync(fileURLToPath(new URL('../../../deploy/nats/tool-providers.json', import.meta.url)), 'utf8')) as string[];
    expect(current, 'deploy/nats/hermes-users.conf is missing or stale: run `npm run build && npm run nats-permissions`').toBe(
      renderNatsUsersConf({ providers }),
    );
  });

  it('names every user once, with its password from a variable, and no wildcard that opens everything', () => {
    const text = renderNatsUsersConf();
    for (const user of NATS_USERS) {
      expect(text.split(`user: "${user}"`)).toHaveLength(2);
      expect(text).toContain(`password: $${passwordVariableFor(user)}`);
    }
    for (const user of NATS_USERS) {
      for (const p of [...perms[user].publish, ...perms[user].subscribe]) {
        expect(p, user).not.toMatch(/^(>|\*\.>|\$JS\.API\.>|\$JS\.>|_INBOX\.>|\$KV\.>)$/);
      }
    }
  });
});

describe('natsPermissions', () => {
  it('lets each party publish what the catalog says it produces or requests, and nothing of the others', () => {
    for (const user of NATS_USERS) {
      for (const c of Object.values(contracts)) {
        // The submitter user submits and reads for the default team only (teams are accounts of their own).
        const subject = c
          .subject(s)
          .replace('{team}', user === 'submitter' ? DEFAULT_TEAM : 'team-a')
          .replace(/\{[^}]+\}/g, 'x1');
        const sends = c.kind === 'request' ? (c.requesters as readonly string[]).includes(user) : (c.producers as readonly string[]).includes(user);
        expect(mayPublish(user, subject), `${user} publish ${c.name}`).toBe(sends);
      }
    }
  });

  it('lets only the responder of a request subscribe to it, in its queue group, and allows it to answer', () => {
    for (const c of Object.values(contracts)) {
      if (c.kind !== 'request') continue;
      const subject = c.subject(s).replace(/\{[^}]+\}/g, 'x1');
      for (const user of NATS_USERS) expect(maySubscribe(user, subject), `${user} serve ${c.name}`).toBe(c.responder === user);
      if ((NATS_USERS as readonly string[]).includes(c.responder)) {
        const responder = c.responder as (typeof NATS_USERS)[number];
        expect(perms[responder].subscribe).toContain(`${c.subject(s).replace(/\{[^}]+\}/g, '*')} ${s.queueGroup(c.responder)}`);
        expect(perms[responder].allowResponses).toBe(true);
      }
    }
  });

  it('gives each user its own inbox and no one else’s', () => {
    for (const user of NATS_USERS) {
      for (const other of NATS_USERS) expect(maySubscribe(user, `${inboxPrefixFor(other)}.abc.1`), `${user} -> ${other}`).toBe(user === other);
      expect(maySubscribe(user, '_INBOX.abc.1')).toBe(false);
    }
  });

  it('keeps the toolbus from publishing task results and the submitter away from jobs, audit, KV and other streams', () => {
    expect(mayPublish('toolbus', s.runtimeResults)).toBe(false);
    // The submitter user is inside the HERMES account: it submits and reads for the default team only.
    expect(mayPublish('submitter', s.taskSubmit(DEFAULT_TEAM))).toBe(true);
    expect(mayPublish('submitter', s.taskSubmit('team-a'))).toBe(false);
    expect(mayPublish('submitter', s.taskSubmitLegacy)).toBe(false);
    expect(mayPublish('submitter', s.taskEvents(DEFAULT_TEAM, 't_1'))).toBe(false);
    expect(mayPublish('submitter', `$JS.API.CONSUMER.CREATE.${s.streams.taskEvents}.c1.${s.taskEvents(DEFAULT_TEAM, 't_1')}`)).toBe(true);
    expect(mayPublish('submitter', `$JS.API.CONSUMER.CREATE.${s.streams.taskEvents}.c1.${s.taskEvents('team-a', 't_1')}`)).toBe(false);
    expect(mayPublish('submitter', s.teamTaskGet(DEFAULT_TEAM))).toBe(true);
    expect(mayPublish('submitter', s.teamTaskGet('team-a'))).toBe(false);
    expect(mayPublish('submitter', s.taskGet)).toBe(false);
    for (const denied of [
      `$JS.API.CONSUMER.CREATE.${s.streams.toolAudit}.c1.${s.toolAudit('t_1')}`,
      `$JS.API.CONSUMER.MSG.NEXT.${s.streams.runtimeJobs}.${s.consumers.runtimeJobs}`,
      `$JS.API.STREAM.INFO.${s.streams.toolAudit}`,
      `$JS.API.DIRECT.GET.KV_${s.buckets.tasks}`,
      `$KV.${s.buckets.tasks}.t_1`,
      `$JS.API.STREAM.CREATE.${s.streams.taskEvents}`,
      `$JS.API.STREAM.DELETE.${s.streams.taskEvents}`,
    ]) {
      expect(mayPublish('submitter', denied), denied).toBe(false);
    }
    expect(maySubscribe('submitter', s.runtimeJobs)).toBe(false);
    expect(perms.submitter.allowResponses).toBe(false);
  });

  it('lets the CLI read audit records, task events and dead letters, manage LLM pools and replay work, but not run as a service', () => {
    expect(mayPublish('cli', `$JS.API.CONSUMER.CREATE.${s.streams.toolAudit}.c1.${s.toolAudit('t_1')}`)).toBe(true);
    expect(mayPublish('cli', `$JS.API.CONSUMER.CREATE.${s.streams.taskEvents}.c1.${s.taskEvents('team-a', 't_1')}`)).toBe(true);
    expect(mayPublish('cli', `$KV.${s.buckets.llmSemaphore}.pool`)).toBe(true);
    expect(mayPublish('cli', `$KV.${s.buckets.tasks}.t_1`)).toBe(false);
    expect(mayPublish('cli', `$JS.API.CONSUMER.CREATE.${s.streams.deadLetters}.c1.${s.deadLetterAll}`)).toBe(true);
    expect(mayPublish('cli', `$JS.API.STREAM.MSG.GET.${s.streams.deadLetters}`)).toBe(true);
    // A replay publishes the dead letter's message again, on its own subject...
    expect(mayPublish('cli', s.runtimeJobs)).toBe(true);
    // ...but the CLI neither takes work from a queue nor writes dead letters or task events.
    expect(mayPublish('cli', `$JS.API.CONSUMER.MSG.NEXT.${s.streams.runtimeJobs}.${s.consumers.runtimeJobs}`)).toBe(false);
    expect(mayPublish('cli', s.deadLetter(s.streams.runtimeJobs))).toBe(false);
    expect(mayPublish('cli', s.taskEvents('team-a', 't_1'))).toBe(false);
    expect(maySubscribe('cli', s.toolCall)).toBe(false);
    expect(perms.cli.allowResponses).toBe(false);
  });

  it('opens exactly the KV buckets and durable consumers of each role, and no stream deletion to anyone', () => {
    for (const user of NATS_USERS) {
      const role = JETSTREAM_ROLES[user];
      for (const [key, bucket] of Object.entries(s.buckets)) {
        const has = (role.buckets ?? []).includes(key as keyof typeof s.buckets);
        expect(mayPublish(user, `$KV.${bucket}.k1`), `${user} ${bucket}`).toBe(has);
        expect(mayPublish(user, `$JS.API.STREAM.INFO.KV_${bucket}`), `${user} ${bucket} info`).toBe(has);
      }
      // Every durable consumer, on the stream it reads: only its role may pull from and ack it.
      for (const { stream, consumer } of Object.values(JETSTREAM_ROLES).flatMap((r) => r.durables ?? [])) {
        const has = (role.durables ?? []).some((d) => d.consumer === consumer);
        const [name, durable] = [s.streams[stream], s.consumers[consumer]];
        expect(mayPublish(user, `$JS.API.CONSUMER.MSG.NEXT.${name}.${durable}`), `${user} ${name}/${durable}`).toBe(has);
        expect(mayPublish(user, `$JS.ACK.${name}.${durable}.1.2.3.4.5`), `${user} ack ${name}/${durable}`).toBe(has);
      }
      expect(perms[user].publish.some((p) => p.includes('.DELETE.') && !p.includes('.CONSUMER.DELETE.'))).toBe(false);
    }
  });

  it('writes the subjects, streams and buckets of another prefix', () => {
    const acme = natsPermissions({ prefix: 'acme' });
    expect(acme.dispatcher.publish).toContain('acme.runtime.jobs');
    expect(acme.dispatcher.publish).toContain('$KV.acme_tasks.>');
    expect(acme.runtime.publish).toContain('$JS.API.CONSUMER.MSG.NEXT.ACME_RUNTIME_JOBS.runtime-jobs');
    expect(JSON.stringify(acme)).not.toContain('hermes');
  });

  it('has one user per deployable service plus the submitter and the CLI', () => {
    expect([...NATS_USERS]).toEqual([...HERMES_SERVICES, 'submitter', 'cli']);
    expect(Object.keys(JETSTREAM_ROLES).sort()).toEqual([...NATS_USERS].sort());
  });
});

describe('provider users', () => {
  it('let a provider announce only on its own subject and take only its own calls', () => {
    const p = providerNatsPermissions('sec-tools');
    expect(p.publish).toEqual(['hermes.toolbus.providers.announce.sec-tools', '$JS.API.INFO']);
    expect(p.publish.some((x) => matches(x, 'hermes.toolbus.providers.announce.evil-tools'))).toBe(false);
    expect(p.subscribe).toContain('hermes.tools.exec.sec-tools hermes.tool-provider.sec-tools');
    expect(p.subscribe.some((x) => matches(x, 'hermes.tools.exec.evil-tools'))).toBe(false);
    expect(() => providerNatsPermissions('bad.name')).toThrow(/must match/);
  });

  it('are rendered after the service users, each with its password variable', () => {
    const text = renderNatsUsersConf({ providers: ['sec-tools', 'sec-tools', 'crm'] });
    expect(text.split('user: "provider-sec-tools"')).toHaveLength(2);
    expect(text).toContain('password: $HERMES_NATS_PASSWORD_PROVIDER_SEC_TOOLS');
    expect(text).toContain('user: "provider-crm"');
    expect(renderNatsUsersConf()).not.toContain('provider-');
  });
});
