import { GOALS, type SemaphoreBenchReport } from './semaphore-bench.js';

const ms = (n: number) => (Number.isNaN(n) ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const pair = (p50: number, p99: number) => `${ms(p50)} / ${ms(p99)}`;

/** Which goals the report meets, in words, for the markdown and the console. */
export function goalVerdicts(r: SemaphoreBenchReport): string[] {
  const lines: string[] = [];
  for (const run of r.runs) {
    const ok = run.utilization >= GOALS.utilization_min;
    lines.push(
      `${run.processes} process(es): utilization ${run.utilization.toFixed(3)} ${ok ? 'meets' : 'MISSES'} the goal of ≥ ${GOALS.utilization_min}; max in flight ${run.max_in_flight} ${run.max_in_flight <= run.capacity ? `≤ N = ${run.capacity} (cap held)` : `> N = ${run.capacity} (CAP VIOLATED)`}.`,
    );
  }
  const p50 = r.overhead.acquire.p50_ms;
  lines.push(`Uncontended acquire p50 ${ms(p50)} ms ${p50 <= GOALS.acquire_p50_max_ms ? 'meets' : 'MISSES'} the goal of ≤ ${GOALS.acquire_p50_max_ms} ms.`);
  return lines;
}

/** The human-readable `semaphore.md`. */
export function renderMarkdown(r: SemaphoreBenchReport): string {
  const s = r.settings;
  const out = [
    '# Semaphore benchmark',
    '',
    `Generated ${r.generated_at} on ${r.machine.cpus} × ${r.machine.cpu_model} (${r.machine.platform}), Node ${r.machine.node}, 1-minute load average ${r.machine.load_avg_1m_at_start} at the start and ${r.machine.load_avg_1m_at_end} at the end. ` +
      `Cap N = ${s.capacity}, scripted model latency L = ${s.latency_ms} ms, so the bound is N / L = ${r.runs[0]?.bound_calls_per_s ?? s.capacity / (s.latency_ms / 1000)} calls/s. ` +
      `${s.loops} call loops in total, ${s.warmup_s} s warm-up, then a ${s.duration_s} s window.`,
    '',
    '## Saturation',
    '',
    '| processes | calls/s | bound | utilization | max in flight | permit wait p50 / p99 ms | held p50 / p99 ms | release p50 / p99 ms | errors |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.runs.map(
      (run) =>
        `| ${run.processes} | ${run.calls_per_s.toFixed(1)} | ${run.bound_calls_per_s.toFixed(1)} | ${run.utilization.toFixed(3)} | ${run.max_in_flight} | ` +
        `${pair(run.under_load.permit_wait_p50_ms, run.under_load.permit_wait_p99_ms)} | ${pair(run.under_load.held_p50_ms, run.under_load.held_p99_ms)} | ` +
        `${pair(run.under_load.release_p50_ms, run.under_load.release_p99_ms)} | ${run.errors} |`,
    ),
    `| baseline: 1, in-process semaphore | ${r.baseline.calls_per_s.toFixed(1)} | ${r.runs[0]?.bound_calls_per_s.toFixed(1) ?? '–'} | ${r.baseline.utilization.toFixed(3)} | ${r.baseline.max_in_flight} | – | ${pair(r.baseline.held_p50_ms, r.baseline.held_p99_ms)} | – | – |`,
    '',
    "The baseline runs the same loops and HTTP stack with an in-process semaphore: its shortfall is what the scripted server, the openai SDK and this machine cost without any distributed coordination, so the distributed semaphore's own share is the gap between a run and the baseline.",
    '',
    '### Where the time goes',
    '',
    '| processes | KV occupancy | free while queued | pool writes / call | CAS / call | lost CAS / call | reloads / call | CAS p50 / p99 ms | watch lag p50 / p99 ms | CPU cores: workers / nats / bench+model |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.runs.map((run) => {
      const d = run.diagnostics;
      return `| ${run.processes} | ${d.kv_occupancy.toFixed(4)} | ${(d.free_while_queued * 100).toFixed(1)} % | ${d.pool_writes_per_call.toFixed(2)} | ${d.cas_attempts_per_call.toFixed(2)} | ${d.cas_conflicts_per_call.toFixed(2)} | ${d.reloads_per_call.toFixed(2)} | ${pair(d.cas_p50_ms, d.cas_p99_ms)} | ${pair(d.watch_lag_p50_ms, d.watch_lag_p99_ms)} | ${d.cpu_cores_workers} / ${d.cpu_cores_nats_server ?? '–'} / ${d.cpu_cores_bench_and_model} |`;
    }),
    '',
    'KV occupancy is the time-weighted share of the N permits the stored pool state shows as held; "free while queued" is the share of the window in which a permit was free while a waiter was queued (a freed permit waiting to be handed on). ' +
      'A lost CAS is a write that another process beat; a reload is the extra KV read that may follow. Watch lag is from the server storing a pool change to a worker receiving it (millisecond resolution). ' +
      `CPU is in cores busy over the window, out of the machine's ${r.machine.cpus}.`,
    '',
    '## Uncontended permit cost',
    '',
    '| | p50 ms | p99 ms | max ms | samples |',
    '|---|---:|---:|---:|---:|',
    `| acquire | ${ms(r.overhead.acquire.p50_ms)} | ${ms(r.overhead.acquire.p99_ms)} | ${ms(r.overhead.acquire.max_ms)} | ${r.overhead.acquire.samples} |`,
    `| release | ${ms(r.overhead.release.p50_ms)} | ${ms(r.overhead.release.p99_ms)} | ${ms(r.overhead.release.max_ms)} | ${r.overhead.release.samples} |`,
    '',
    '## How it was measured',
    '',
    `Each saturation run starts 1, 2 or 4 worker processes, each an \`LlmClient\` wired as \`openLlmClient\` does (pool resolver, \`semaphorePermits\` over \`DistributedSemaphore\`), ` +
      `against one real nats-server and one scripted OpenAI-compatible server; a call counts when \`chat()\` (permit, HTTP call, release) ends inside the window, and max in flight is what the scripted server saw over warm-up, window and drain. ` +
      `The loops' first calls are spread evenly over one latency, so the permits turn over at evenly spread moments rather than in lockstep (which would make the count move in steps of N).`,
    `Permit wait, held and release times are measured in this run under load (held = from the grant arriving to the release being written). ` +
      `The \`acquire_*\`/\`release_*\` fields of every run in \`semaphore.json\` are the uncontended figures, measured once (one process, capacity ${'1,000,000'}, ${r.overhead.iterations} sequential acquire→release after ${r.overhead.warmup} warm-up) and repeated.`,
    '',
    `Figures move by a point or two of utilization with the machine's load (other work on a ${r.machine.cpus}-CPU machine shows as event-loop lag in the workers); compare a run with the baseline taken at the same time.`,
    '',
    '## Goals',
    '',
    ...goalVerdicts(r).map((l) => `- ${l}`),
    ...(r.errors.length ? ['', `Errors (first ones): ${r.errors.slice(0, 5).join('; ')}`] : []),
    '',
  ];
  return out.join('\n');
}
