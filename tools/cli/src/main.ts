#!/usr/bin/env node
import { runCli } from './cli.js';

const interrupt = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    // First signal: stop following and exit cleanly; a second one: exit at once.
    if (interrupt.signal.aborted) process.exit(130);
    interrupt.abort();
  });
}

process.exit(await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: interrupt.signal }));
