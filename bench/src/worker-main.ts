import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { DistributedSemaphore } from '@hermes/semaphore';
import { probeKv } from './kv-probe.js';
import { PermitTimings, openBenchClient, runLoad } from './load-worker.js';
import { OVERHEAD_POOL, runOverhead } from './overhead-worker.js';
import { READY_LINE, RESULT_PREFIX, WORKER_SETTINGS_ENV, type GoMessage, type WorkerResult, type WorkerSettings } from './worker-protocol.js';

// One bench worker process: connect, open the semaphore, say ready, wait for the start signal,
// run, print the result line, exit.
const settings = JSON.parse(process.env[WORKER_SETTINGS_ENV] ?? 'null') as WorkerSettings | null;
if (!settings) throw new Error(`${WORKER_SETTINGS_ENV} is not set; this process is started by bench/dist/run.js`);

const nc = await connect({ servers: settings.natsUrl });
const kv = await new Kvm(jetstream(nc)).create(settings.bucket, { history: 1 });
const control = nc.subscribe(settings.controlSubject, { max: 1 });
await nc.flush();

let result: WorkerResult;
if (settings.mode === 'load') {
  const timings = new PermitTimings();
  const probe = probeKv(kv, () => timings.measuring());
  const client = await openBenchClient({
    kv: probe.kv,
    llmUrl: settings.llmUrl!,
    capacity: settings.capacity,
    leaseMs: settings.leaseMs,
    permits: settings.permits ?? 'semaphore',
    onCall: timings.record,
  });
  const go = await nextGo();
  const start = { processIndex: settings.processIndex ?? 0, processes: settings.processes ?? 1, capacity: settings.capacity, spreadMs: settings.spreadMs ?? 0 };
  result = { ...(await runLoad({ llm: client.llm, loops: settings.loops!, go, timings, start })), kv: probe.trace };
  await client.close();
} else {
  const sem = await DistributedSemaphore.open({ kv, poolSettings: () => ({ capacity: settings.capacity }), leaseMs: settings.leaseMs });
  // The pool key is created on first use; do that before the clock starts.
  await (await sem.acquire(OVERHEAD_POOL)).release({});
  await nextGo();
  result = await runOverhead({ sem, iterations: settings.iterations!, warmup: settings.warmup! });
  await sem.close();
}
await nc.close();
process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`, () => process.exit(0));

async function nextGo(): Promise<GoMessage> {
  process.stdout.write(`${READY_LINE}\n`);
  for await (const m of control) return m.json<GoMessage>();
  throw new Error('control subscription closed before the start signal');
}
