import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const cliEntry = fileURLToPath(new URL('../../tools/cli/dist/main.js', import.meta.url));

/** The built `hermes` bin, as a person runs it against `natsUrl`: exit code and both outputs, whatever the code. */
export function hermesBin(natsUrl: string, env: Record<string, string> = {}) {
  return (...argv: string[]) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      // 30 s: a command is one or two bus requests; the limit only stops a hung child on a loaded machine.
      execFile(process.execPath, [cliEntry, ...argv], { env: { ...process.env, NATS_URL: natsUrl, ...env }, timeout: 30_000 }, (error, out, err) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, out, err }),
      );
    });
}
