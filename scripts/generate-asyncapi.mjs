#!/usr/bin/env node
// Writes docs/asyncapi.yaml from the contract catalog in libs/contracts (run `npm run build` first:
// this imports the built @hermes/contracts). With --check, only reports whether the file is current.
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname } from 'node:path';

const target = fileURLToPath(new URL('../docs/asyncapi.yaml', import.meta.url));
const shown = 'docs/asyncapi.yaml';
const check = process.argv.includes('--check');

let renderAsyncApiYaml;
try {
  ({ renderAsyncApiYaml } = await import('@hermes/contracts/asyncapi'));
} catch (err) {
  console.error(`cannot load @hermes/contracts (${err.message}); run \`npm run build\` first`);
  process.exit(1);
}
if (typeof renderAsyncApiYaml !== 'function') {
  console.error('the built @hermes/contracts has no renderAsyncApiYaml; run `npm run build` first');
  process.exit(1);
}

const text = renderAsyncApiYaml();

if (check) {
  const current = await readFile(target, 'utf8').catch(() => undefined);
  if (current !== text) {
    console.error(`${shown} is ${current === undefined ? 'missing' : 'out of date'}: run \`npm run build && npm run asyncapi\` and commit the result`);
    process.exit(1);
  }
  console.log(`${shown} is up to date`);
} else {
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, text);
  console.log(`wrote ${shown}`);
}
