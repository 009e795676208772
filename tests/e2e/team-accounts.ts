import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NATS_USERS, passwordVariableFor, type NatsUser } from '@hermes/contracts/nats-permissions';
import { teamPasswordVariableFor } from '@hermes/contracts/nats-accounts';
import { startNatsServer, type NatsServerHandle } from '@hermes/testkit';

const accountsConf = readFileSync(fileURLToPath(new URL('../../deploy/nats/hermes-accounts.conf', import.meta.url)), 'utf8');
/** The teams deploy/nats/hermes-accounts.conf was generated for. */
export const TEAMS: readonly string[] = JSON.parse(readFileSync(fileURLToPath(new URL('../../deploy/nats/teams.json', import.meta.url)), 'utf8')) as string[];

export interface AccountsServer {
  nats: NatsServerHandle;
  /** Passwords of the Hermes users (HERMES account) and of each team's user. */
  passwords: Record<NatsUser, string>;
  teamPasswords: Record<string, string>;
}

/** A real nats-server running the generated accounts config (deploy/nats/hermes-accounts.conf) with fresh passwords. */
export async function startAccountsServer(): Promise<AccountsServer> {
  const passwords = Object.fromEntries(NATS_USERS.map((u) => [u, randomBytes(12).toString('hex')])) as Record<NatsUser, string>;
  const teamPasswords = Object.fromEntries(TEAMS.map((t) => [t, randomBytes(12).toString('hex')]));
  const variables = [
    ...NATS_USERS.map((u) => `${passwordVariableFor(u)}: ${JSON.stringify(passwords[u])}`),
    ...TEAMS.map((t) => `${teamPasswordVariableFor(t)}: ${JSON.stringify(teamPasswords[t])}`),
  ];
  const nats = await startNatsServer({ configText: `${variables.join('\n')}\n${accountsConf}` });
  return { nats, passwords, teamPasswords };
}
