import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { subjectsFor } from '../src/index.js';
import { HERMES_ACCOUNT, renderNatsAccountsConf, teamAccountFor, teamImports, teamPasswordVariableFor } from '../src/nats-accounts.js';

const at = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const s = subjectsFor();

describe('renderNatsAccountsConf', () => {
  it('matches the committed deploy/nats/hermes-accounts.conf for deploy/nats/teams.json (run npm run nats-permissions)', () => {
    const teams = JSON.parse(readFileSync(at('deploy/nats/teams.json'), 'utf8')) as string[];
    const providers = JSON.parse(readFileSync(at('deploy/nats/tool-providers.json'), 'utf8')) as string[];
    expect(readFileSync(at('deploy/nats/hermes-accounts.conf'), 'utf8')).toBe(renderNatsAccountsConf({ teams, providers }));
  });

  it('puts the tool providers in the HERMES account, beside the services whose toolbus calls them', () => {
    const conf = renderNatsAccountsConf({ teams: ['team-a'], providers: ['sec-tools'] });
    const hermes = conf.slice(conf.indexOf(`${HERMES_ACCOUNT}: {`), conf.indexOf(`${teamAccountFor('team-a')}: {`));
    expect(hermes).toContain('user: "provider-sec-tools"');
    expect(hermes).toContain('"hermes.toolbus.providers.announce.sec-tools"');
    expect(conf.split('user: "provider-sec-tools"')).toHaveLength(2);
    expect(renderNatsAccountsConf({ teams: ['team-a'] })).not.toContain('provider-');
  });

  it('gives a team only its own submit subject, task queries and events, mapped from the plain names', () => {
    const { services, streams } = teamImports('team-a', s);
    expect(services).toEqual([
      { subject: 'hermes.tasks.submit.team-a', as: 'hermes.tasks.submit' },
      { subject: 'hermes.tasks.get.team-a', as: 'hermes.tasks.get' },
      { subject: 'hermes.tasks.list.team-a', as: 'hermes.tasks.list' },
      { subject: 'hermes.tasks.cancel.team-a', as: 'hermes.tasks.cancel' },
    ]);
    expect(streams).toEqual(['hermes.tasks.events.team-a.>', 'hermes.tasks.rejected.team-a']);
  });

  it("imports each team's events.> into HERMES as that team's own events, and denies the team user the prefix's events", () => {
    const conf = renderNatsAccountsConf({ teams: ['team-a', 'team-b'] });
    const hermes = conf.slice(conf.indexOf(`${HERMES_ACCOUNT}: {`), conf.indexOf(`${teamAccountFor('team-a')}: {`));
    expect(hermes).toContain(`{ stream: { account: ${teamAccountFor('team-a')}, subject: "events.>" }, to: "hermes.events.team-a.>" }`);
    expect(hermes).toContain(`{ stream: { account: ${teamAccountFor('team-b')}, subject: "events.>" }, to: "hermes.events.team-b.>" }`);
    const teamA = conf.slice(conf.indexOf(`${teamAccountFor('team-a')}: {`), conf.indexOf(`${teamAccountFor('team-b')}: {`));
    expect(teamA).toContain(`exports = [ { stream: "events.>", accounts: [${HERMES_ACCOUNT}] } ]`);
    expect(teamA).toContain('permissions: { publish: { deny: ["hermes.events.>"] } }');
  });

  it('exports each team subject to that team account only, and enables JetStream for HERMES alone', () => {
    const conf = renderNatsAccountsConf({ teams: ['team-a', 'team-b'] });
    expect(conf).toContain(`{ service: "hermes.tasks.submit.team-a", accounts: [${teamAccountFor('team-a')}] }`);
    expect(conf).toContain(`{ stream: "hermes.tasks.events.team-b.>", accounts: [${teamAccountFor('team-b')}] }`);
    expect(conf.match(/jetstream: enabled/g)).toHaveLength(1);
    expect(conf).toContain(`password: $${teamPasswordVariableFor('team-b')}`);
    // A team's account imports nothing of another team's.
    const accountB = conf.slice(conf.indexOf(`${teamAccountFor('team-b')}: {`));
    expect(accountB).not.toContain('team-a');
  });

  it('refuses a team name that is no subject token, and a team listed twice', () => {
    expect(() => renderNatsAccountsConf({ teams: ['Team-A'] })).toThrow(/not team names/);
    expect(() => renderNatsAccountsConf({ teams: ['a.b'] })).toThrow(/not team names/);
    expect(() => renderNatsAccountsConf({ teams: ['x', 'x'] })).toThrow(/twice/);
  });
});
