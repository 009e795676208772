#!/usr/bin/env node
// The offline demo model for `npm run up`: prints {"baseUrl": "..."} once listening, runs until SIGTERM/SIGINT.
import { parseArgs } from 'node:util';
import { demoResponder } from './responders.js';
import { startScriptedLlm } from './scripted-llm.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'latency-ms': { type: 'string' },
  },
});

const port = parseNonNegativeInt('--port', values.port);
const latencyMs = parseNonNegativeInt('--latency-ms', values['latency-ms']);
const llm = await startScriptedLlm({ responder: demoResponder, ...(port === undefined ? {} : { port }), ...(latencyMs === undefined ? {} : { latencyMs }) });
process.stdout.write(`${JSON.stringify({ baseUrl: llm.baseUrl })}\n`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void llm.close().then(() => process.exit(0));
  });
}

function parseNonNegativeInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) {
    process.stderr.write(`${flag} must be a non-negative integer, got "${value}"\n`);
    process.exit(2);
  }
  return parsed;
}
