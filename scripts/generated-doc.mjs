// Writes (or with --check, only compares) one document generated from the built @hermes/contracts:
// docs/asyncapi.yaml and docs/openapi.yaml are produced the same way (run `npm run build` first).
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * @param {{ target: string, shown: string, module: string, render: string, script: string }} doc
 *   the file, its name in messages, the contracts entry to import, the function rendering the text,
 *   and the npm script that regenerates it
 */
export async function writeGeneratedDoc(doc) {
  const check = process.argv.includes('--check');
  let mod;
  try {
    mod = await import(doc.module);
  } catch (err) {
    console.error(`cannot load ${doc.module} (${err.message}); run \`npm run build\` first`);
    process.exit(1);
  }
  if (typeof mod[doc.render] !== 'function') {
    console.error(`the built ${doc.module} has no ${doc.render}; run \`npm run build\` first`);
    process.exit(1);
  }
  const text = mod[doc.render]();
  if (check) {
    const current = await readFile(doc.target, 'utf8').catch(() => undefined);
    if (current !== text) {
      console.error(
        `${doc.shown} is ${current === undefined ? 'missing' : 'out of date'}: run \`npm run build && npm run ${doc.script}\` and commit the result`,
      );
      process.exit(1);
    }
    console.log(`${doc.shown} is up to date`);
  } else {
    await mkdir(dirname(doc.target), { recursive: true });
    await writeFile(doc.target, text);
    console.log(`wrote ${doc.shown}`);
  }
}
