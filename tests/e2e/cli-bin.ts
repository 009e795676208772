import { execFile, spawn } from 'node:child_process';
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

/** A `hermes` command that goes on (`hermes run` follows its task): what it printed so far, a wait for a line, its end. */
export interface RunningHermes {
  out(): string;
  /** Resolves with stdout once it matches `pattern`; rejects when the command ends or `timeoutMs` passes first. */
  waitForOutput(pattern: RegExp, timeoutMs: number): Promise<string>;
  exited: Promise<{ code: number; out: string; err: string }>;
  kill(): void;
}

/** Starts the built `hermes` bin against `natsUrl` without waiting for it to end. */
export function spawnHermes(natsUrl: string, env: Record<string, string>, ...argv: string[]): RunningHermes {
  const child = spawn(process.execPath, [cliEntry, ...argv], { env: { ...process.env, NATS_URL: natsUrl, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const l of listeners) l();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number; out: string; err: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), out, err })),
  );
  return {
    out: () => out,
    waitForOutput: (pattern, timeoutMs) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (!pattern.test(out)) return;
          done();
          resolve(out);
        };
        const timer = setTimeout(
          () => (done(), reject(new Error(`hermes ${argv.join(' ')} printed no ${pattern} in ${timeoutMs} ms:\n${out}\n${err}`))),
          timeoutMs,
        );
        const done = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        void exited.then(() => {
          if (!listeners.has(check)) return;
          done();
          if (pattern.test(out)) resolve(out);
          else reject(new Error(`hermes ${argv.join(' ')} ended without printing ${pattern}:\n${out}\n${err}`));
        });
        listeners.add(check);
        check();
      }),
    exited,
    kill: () => child.kill('SIGKILL'),
  };
}
