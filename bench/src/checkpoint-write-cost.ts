import type { KV } from '@nats-io/kv';
import { processCpuMs } from './cpu-sampler.js';
import { round } from './stats.js';
import { timeEach } from './step-breakdown.js';

/** One checkpoint write at a task length, written the way of each release, timed alone against the stack's NATS. */
export interface CheckpointWriteCost {
  /** The release before: the whole conversation in one record, rewritten each step. */
  whole: { bytes: number; p50_ms?: number; cpu_ms_per_write?: number; error?: string };
  /** This release: the step's turn record and the head, sent in one round trip. */
  turn_and_head: { bytes: number; p50_ms: number; cpu_ms_per_write: number };
}

const ITERATIONS = 20;

/**
 * What saving the checkpoint of step `steps` costs, with `padBytes` of tool result per step: a
 * conversation shaped as the runtime's (an assistant call and a tool result per step), written
 * as one whole record (compare-and-set, as the release before did) and as one turn plus the head.
 * CPU is this process's and nats-server's.
 */
export async function checkpointWriteCost(o: {
  kv: KV;
  natsPid: number | undefined;
  steps: number;
  padBytes: number;
  label: string;
}): Promise<CheckpointWriteCost> {
  const call = (n: number) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: 'bench_record', arguments: JSON.stringify({ entry: `step ${n}`, pad: o.padBytes }) } }],
  });
  const result = (n: number) => ({
    role: 'tool',
    tool_call_id: `call_${n}`,
    content: JSON.stringify({ ok: true, result: { recorded: `step ${n}`, ...(o.padBytes ? { padding: 'x'.repeat(o.padBytes) } : {}) } }),
  });
  const messages: unknown[] = [{ role: 'user', content: 'Benchmark task: call the tool, one call per turn, then answer.' }];
  for (let n = 1; n <= o.steps; n++) messages.push(call(n), ...(n < o.steps ? [result(n)] : []));
  const usage = { input_tokens: 100 * o.steps, output_tokens: 10 * o.steps };
  const calls = Array.from({ length: o.steps }, (_, i) => `bench_record {"entry":"step ${i + 1}"}`);
  const cpu = () => process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000 + (o.natsPid ? (processCpuMs(o.natsPid) ?? 0) : 0);

  const wholeKey = `job.bench-whole-${o.label}`;
  const whole = JSON.stringify({ v: 1, job_id: wholeKey, step: o.steps, messages, usage, calls, pending: true });
  let wholeCost: CheckpointWriteCost['whole'] = { bytes: Buffer.byteLength(whole) };
  try {
    let rev = await o.kv.create(wholeKey, whole);
    const c0 = cpu();
    // Serialised each time, as the runtime did: the conversation object is what it holds.
    const t = await timeEach(ITERATIONS, async () => (rev = await o.kv.update(wholeKey, JSON.stringify(JSON.parse(whole)), rev)));
    wholeCost = { ...wholeCost, p50_ms: t.p50_ms, cpu_ms_per_write: round((cpu() - c0) / (ITERATIONS + Math.min(50, Math.ceil(ITERATIONS / 10)))) };
  } catch (err) {
    wholeCost = { ...wholeCost, error: (err as Error).message };
  }
  await o.kv.purge(wholeKey).catch(() => undefined);

  const headKey = `job.bench-head-${o.label}`;
  const turnMessages = messages.slice(-2);
  const head = JSON.stringify({
    v: 2,
    job_id: headKey,
    step: o.steps,
    usage,
    pending: true,
    turns: o.steps,
    base: 1,
    writers: [{ token: '9f2c41d07ab3', from: 1 }],
  });
  let headRev = await o.kv.create(headKey, head);
  const turn = (n: number) => JSON.stringify({ v: 1, job_id: headKey, turn: n, messages: turnMessages, calls: calls.slice(-1) });
  const c0 = cpu();
  const t = await timeEach(ITERATIONS, async (n) => {
    const put = o.kv.put(`${headKey}.9f2c41d07ab3.${n + 100}`, turn(n + 100));
    headRev = await o.kv.update(headKey, head, headRev);
    await put;
  });
  const cpuPer = round((cpu() - c0) / (ITERATIONS + Math.min(50, Math.ceil(ITERATIONS / 10))));
  for await (const key of await o.kv.keys(`${headKey}.>`)) await o.kv.purge(key);
  await o.kv.purge(headKey).catch(() => undefined);
  return { whole: wholeCost, turn_and_head: { bytes: Buffer.byteLength(head) + Buffer.byteLength(turn(o.steps)), p50_ms: t.p50_ms, cpu_ms_per_write: cpuPer } };
}
