#!/usr/bin/env node
// Writes deploy/nats/hermes-users.conf (the nats-server users and their permissions) from the
// contract catalog in libs/contracts (run `npm run build` first: this imports the built
// @hermes/contracts). With --check, only reports whether the file is current.
// Tool providers listed in deploy/nats/tool-providers.json get a user each (see docs/deploy.md).
// --prefix <p> writes the users of a deployment with HERMES_SUBJECT_PREFIX=<p> to stdout instead.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const target = fileURLToPath(new URL('../deploy/nats/hermes-users.conf', import.meta.url));
// The tool providers that get a NATS user of their own: a JSON array of provider names.
const providersFile = fileURLToPath(new URL('../deploy/nats/tool-providers.json', import.meta.url));
const providers = JSON.parse(await readFile(providersFile, 'utf8'));
if (!Array.isArray(providers) || providers.some((p) => typeof p !== 'string')) {
  console.error('deploy/nats/tool-providers.json must be a JSON array of provider names');
  process.exit(1);
}
const shown = 'deploy/nats/hermes-users.conf';
const check = process.argv.includes('--check');
const prefixAt = process.argv.indexOf('--prefix');
const prefix = prefixAt > 0 ? process.argv[prefixAt + 1] : undefined;

let renderNatsUsersConf;
try {
  ({ renderNatsUsersConf } = await import('@hermes/contracts/nats-permissions'));
} catch (err) {
  console.error(`cannot load @hermes/contracts (${err.message}); run \`npm run build\` first`);
  process.exit(1);
}

if (prefix !== undefined) {
  process.stdout.write(renderNatsUsersConf({ prefix, providers }));
  process.exit(0);
}

const text = renderNatsUsersConf({ providers });
if (check) {
  const current = await readFile(target, 'utf8').catch(() => undefined);
  if (current !== text) {
    console.error(`${shown} is ${current === undefined ? 'missing' : 'out of date'}: run \`npm run build && npm run nats-permissions\` and commit the result`);
    process.exit(1);
  }
  console.log(`${shown} is up to date`);
} else {
  await writeFile(target, text);
  console.log(`wrote ${shown}`);
}
