import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/transport-node';
import { startChildService, type ChildService } from '@hermes/testkit';
import { BenchError } from './bench-errors.js';
import { READY_LINE, RESULT_PREFIX, WORKER_SETTINGS_ENV, type GoMessage, type WorkerResult, type WorkerSettings } from './worker-protocol.js';

const workerEntry = fileURLToPath(new URL('./worker-main.js', import.meta.url));

export interface FleetRun {
  control: NatsConnection;
  workers: WorkerSettings[];
  /** Called once every worker is ready, just before the start signal (e.g. to reset counters). */
  beforeGo?: () => void;
  /** The window, computed when every worker is ready. */
  window: (now: number) => GoMessage;
  /** How long after the start signal the results may take to come back. */
  resultTimeoutMs: number;
}

/**
 * Starts one worker process per settings entry, starts them together once all are ready, and
 * collects their results. Every process is gone when this returns or throws.
 */
export async function runFleet(o: FleetRun): Promise<{ results: WorkerResult[]; go: GoMessage }> {
  const children: ChildService[] = [];
  try {
    for (const [i, s] of o.workers.entries()) {
      children.push(
        await startChildService({ name: `bench-worker-${s.mode}-${i + 1}`, entry: workerEntry, env: { [WORKER_SETTINGS_ENV]: JSON.stringify(s) } }),
      );
    }
    await Promise.all(children.map((c) => c.waitForLog(exactLine(READY_LINE), 30_000)));
    o.beforeGo?.();
    const subjects = new Set(o.workers.map((w) => w.controlSubject));
    const go = o.window(Date.now());
    for (const subject of subjects) o.control.publish(subject, JSON.stringify(go));
    await o.control.flush();
    const lines = await Promise.all(children.map((c) => c.waitForLog(new RegExp(`^${RESULT_PREFIX}`), o.resultTimeoutMs)));
    const exits = await Promise.all(children.map((c) => c.exited));
    exits.forEach((status, i) => {
      if (status.code !== 0)
        throw new BenchError('worker_failed', `${children[i]!.name} exited with ${JSON.stringify(status)}:\n${children[i]!.logs.slice(-20).join('\n')}`);
    });
    return { results: lines.map((line) => JSON.parse(line.slice(RESULT_PREFIX.length)) as WorkerResult), go };
  } finally {
    await Promise.all(children.map((c) => c.stop(2_000)));
  }
}

const exactLine = (line: string) => new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
