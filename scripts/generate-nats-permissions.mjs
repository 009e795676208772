#!/usr/bin/env node
// Writes deploy/nats/hermes-users.conf (the nats-server users and their permissions, one account)
// and deploy/nats/hermes-accounts.conf (the same users in a HERMES account, and one account per
// team of deploy/nats/teams.json) from the contract catalog in libs/contracts (run `npm run build`
// first: this imports the built @hermes/contracts). With --check, only reports whether both are current.
// --prefix <p> writes the users of a deployment with HERMES_SUBJECT_PREFIX=<p> to stdout instead;
// --accounts with it, the accounts file (teams from --teams <file>, default deploy/nats/teams.json).
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const at = (path) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const check = process.argv.includes('--check');
const prefixAt = process.argv.indexOf('--prefix');
const prefix = prefixAt > 0 ? process.argv[prefixAt + 1] : undefined;

const teamsAt = process.argv.indexOf('--teams');
const teamsFile = teamsAt > 0 ? process.argv[teamsAt + 1] : at('deploy/nats/teams.json');

let renderNatsUsersConf;
let renderNatsAccountsConf;
try {
  ({ renderNatsUsersConf } = await import('@hermes/contracts/nats-permissions'));
  ({ renderNatsAccountsConf } = await import('@hermes/contracts/nats-accounts'));
} catch (err) {
  console.error(`cannot load @hermes/contracts (${err.message}); run \`npm run build\` first`);
  process.exit(1);
}

let teams;
try {
  teams = JSON.parse(await readFile(teamsFile, 'utf8'));
  if (!Array.isArray(teams)) throw new Error('must be a JSON array of team names');
} catch (err) {
  console.error(`cannot read the teams list ${teamsFile}: ${err.message}`);
  process.exit(1);
}

if (prefix !== undefined) {
  process.stdout.write(process.argv.includes('--accounts') ? renderNatsAccountsConf({ prefix, teams }) : renderNatsUsersConf({ prefix }));
  process.exit(0);
}

const outputs = [
  ['deploy/nats/hermes-users.conf', renderNatsUsersConf()],
  ['deploy/nats/hermes-accounts.conf', renderNatsAccountsConf({ teams })],
];
let stale = false;
for (const [shown, text] of outputs) {
  if (check) {
    const current = await readFile(at(shown), 'utf8').catch(() => undefined);
    if (current !== text) {
      console.error(`${shown} is ${current === undefined ? 'missing' : 'out of date'}: run \`npm run build && npm run nats-permissions\` and commit the result`);
      stale = true;
    } else console.log(`${shown} is up to date`);
  } else {
    await writeFile(at(shown), text);
    console.log(`wrote ${shown}`);
  }
}
if (stale) process.exit(1);
