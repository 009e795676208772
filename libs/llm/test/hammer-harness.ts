import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lastUserMessageText, startChildService, type ChildService, type ScriptedLlm } from '@hermes/testkit';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const hammerEntry = fileURLToPath(new URL('./fixtures/llm-hammer.mjs', import.meta.url));

/**
 * Child processes run the built libraries, so a missing or stale dist/ would test old code (or
 * nothing): say so plainly instead of failing somewhere inside a child. "Stale" is judged as
 * `tsc -b` does, against the build info it rewrites on every build (unchanged outputs keep their
 * old timestamps).
 */
export function assertBuilt(): void {
  const rebuild = 'run "npx tsc -b libs/llm" from the repo root before these tests';
  for (const lib of ['llm', 'semaphore', 'contracts', 'telemetry']) {
    const dist = `${root}libs/${lib}/dist`;
    if (!existsSync(`${dist}/index.js`) || !existsSync(`${dist}/.tsbuildinfo`)) throw new Error(`libs/${lib}/dist is missing: ${rebuild}`);
    const builtAt = statSync(`${dist}/.tsbuildinfo`).mtimeMs;
    const src = `${root}libs/${lib}/src`;
    const newer = readdirSync(src, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('.ts') && statSync(`${src}/${f}`).mtimeMs > builtAt);
    if (newer) throw new Error(`libs/${lib}/src/${newer} changed after the last build: ${rebuild}`);
  }
}

/** One line a hammer prints per finished call. */
export interface CallLine {
  worker: string;
  event: 'call';
  loop: number;
  i: number;
  t0: number;
  t1: number;
  ok: boolean;
  code?: string;
  message?: string;
}

export interface HammerSummary {
  worker: string;
  calls: number;
  ok: number;
  errors: Record<string, number>;
  maxLocalInFlight: number;
}

export interface Hammer {
  name: string;
  service: ChildService;
  /** When the worker printed "ready" (its client is open and its loops start). */
  ready: Promise<number>;
  /** Resolves with the summary once the worker exits normally. */
  done(): Promise<HammerSummary>;
  calls(): CallLine[];
}

export interface HammerOptions {
  natsUrl: string;
  bucket: string;
  llm: ScriptedLlm;
  /** LOOPS, DURATION_MS, CALLS, PRIORITY, LLM_* (see the fixture's header). */
  env?: Record<string, string | number>;
}

/** Starts one `llm-hammer.mjs` worker process. */
export async function startHammer(name: string, o: HammerOptions): Promise<Hammer> {
  const env: Record<string, string> = { NATS_URL: o.natsUrl, BUCKET: o.bucket, OPENAI_BASE_URL: o.llm.baseUrl, WORKER: name };
  for (const [k, v] of Object.entries(o.env ?? {})) env[k] = String(v);
  const service = await startChildService({ name, entry: hammerEntry, env });
  const lines = () => service.logs.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { event: string });
  const ready = service.waitForLog(/"event":"ready"/, 15_000).then(() => Date.now());
  ready.catch(() => {}); // a test that never awaits it (a worker killed early) must not see an unhandled rejection
  return {
    name,
    service,
    ready,
    calls: () => lines().filter((l): l is CallLine => l.event === 'call'),
    async done() {
      const status = await service.exited;
      const summary = lines().find((l) => l.event === 'summary') as HammerSummary | undefined;
      if (status.code !== 0 || !summary) {
        throw new Error(`${name} exited with ${JSON.stringify(status)} and no summary:\n${service.logs.slice(-20).join('\n')}`);
      }
      return summary;
    },
  };
}

/** A request as the scripted model saw it, with who sent it and when its caller started the call. */
export interface Served {
  w: string;
  i: number;
  t0: number;
  receivedAt: number;
}

/** The model's requests in arrival order, tagged by the hammer message that made them. */
export function served(llm: ScriptedLlm): Served[] {
  return llm.requests.map((r) => ({ ...(JSON.parse(lastUserMessageText(r.body)) as { w: string; i: number; t0: number }), receivedAt: r.receivedAt }));
}

/** Who sent a request (for a responder). */
export function sender(body: Parameters<typeof lastUserMessageText>[0]): string {
  try {
    return (JSON.parse(lastUserMessageText(body)) as { w?: string }).w ?? '';
  } catch {
    return '';
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
