#!/usr/bin/env node
// Writes docs/asyncapi.yaml from the contract catalog in libs/contracts (run `npm run build` first:
// this imports the built @hermes/contracts). With --check, only reports whether the file is current.
import { fileURLToPath } from 'node:url';
import { writeGeneratedDoc } from './generated-doc.mjs';

await writeGeneratedDoc({
  target: fileURLToPath(new URL('../docs/asyncapi.yaml', import.meta.url)),
  shown: 'docs/asyncapi.yaml',
  module: '@hermes/contracts/asyncapi',
  render: 'renderAsyncApiYaml',
  script: 'asyncapi',
});
