#!/usr/bin/env node
// Writes docs/openapi.yaml from HTTP_OPERATIONS and the schemas in libs/contracts (run `npm run build`
// first: this imports the built @hermes/contracts). With --check, only reports whether the file is current.
import { fileURLToPath } from 'node:url';
import { writeGeneratedDoc } from './generated-doc.mjs';

await writeGeneratedDoc({
  target: fileURLToPath(new URL('../docs/openapi.yaml', import.meta.url)),
  shown: 'docs/openapi.yaml',
  module: '@hermes/contracts/openapi',
  render: 'renderOpenApiYaml',
  script: 'openapi',
});
