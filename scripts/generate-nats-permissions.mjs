#!/usr/bin/env node
// Writes deploy/nats/hermes-users.conf (the nats-server users and their permissions, one account)
// and deploy/nats/hermes-accounts.conf (the same users in a HERMES account, and one account per
// team of deploy/nats/teams.json) from the contract catalog in libs/contracts (run `npm run build`
// first: this imports the built @hermes/contracts). With --check, only reports whether both are current.
// Tool providers listed in deploy/nats/tool-providers.json get a user each, in both files (see docs/deploy.md).
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

/** A JSON array of names (teams, tool providers), or exit 1 saying which file is wrong. */
async function readNames(file, what) {
  try {
    const names = JSON.parse(await readFile(file, 'utf8'));
    if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) throw new Error(`must be a JSON array of ${what} names`);
    return names;
  } catch (err) {
    console.error(`cannot read the ${what} list ${file}: ${err.message}`);
    process.exit(1);
  }
}
const teams = await readNames(teamsFile, 'team');
// The tool providers that get a NATS user of their own.
const providers = await readNames(at('deploy/nats/tool-providers.json'), 'tool provider');

if (prefix !== undefined) {
  process.stdout.write(process.argv.includes('--accounts') ? renderNatsAccountsConf({ prefix, teams, providers }) : renderNatsUsersConf({ prefix, providers }));
  process.exit(0);
}

const outputs = [
  ['deploy/nats/hermes-users.conf', renderNatsUsersConf({ providers })],
  ['deploy/nats/hermes-accounts.conf', renderNatsAccountsConf({ teams, providers })],
];
let stale = false;
for (const [shown, text] of outputs) {
  if (check) {
    const current = await readFile(at(shown), 'utf8').catch(() => undefined);
    if (current !== text) {
      console.error(
        `${shown} is ${current === undefined ? 'missing' : 'out of date'}: run \`npm run build && npm run nats-permissions\` and commit the result`,
      );
      stale = true;
    } else console.log(`${shown} is up to date`);
  } else {
    await writeFile(at(shown), text);
    console.log(`wrote ${shown}`);
  }
}
if (stale) process.exit(1);
