import { Writable } from 'node:stream';
import { runCli } from '../src/index.js';

/** A writable that keeps what was written, for reading a command's output. */
export function captureOutput() {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, lines: () => text.split('\n').filter((l) => l !== ''), text: () => text };
}

/** Runs `hermes <argv>` in-process against `natsUrl` (with `env`, e.g. credentials); resolves with its exit code and output. */
export async function runHermes(natsUrl: string, argv: string[], env: Record<string, string> = {}) {
  const stdout = captureOutput();
  const stderr = captureOutput();
  const code = await runCli(argv, { stdout: stdout.stream, stderr: stderr.stream, env: { NATS_URL: natsUrl, ...env } });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
