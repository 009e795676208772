import { GROWTH_GOAL, type StepGrowthReport } from './step-growth-bench.js';

const ms = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const cpuOf = (c: Record<string, number> | undefined) => (c ? ms(c.total) : '–');

/**
 * Whether what Hermes adds per step stays within GROWTH_GOAL.flat_within as tasks grow, per result
 * size: in CPU (all processes, Hermes − the direct loop on the same HTTP client), which a loaded
 * machine blurs less than wall time. `from` is the shortest task, and the second-shortest too,
 * since the shortest spreads the per-task work (planning, intake, result) over fewest steps.
 */
export function flatness(
  r: StepGrowthReport,
): { pad_bytes: number; from_steps: number; to_steps: number; first: number; last: number; change: number; flat: boolean }[] {
  const pads = [...new Set(r.growth.map((g) => g.pad_bytes))];
  return pads.flatMap((pad) => {
    const rows = r.growth.filter((g) => g.pad_bytes === pad && g.overhead_cpu_ms_per_step !== undefined).sort((a, b) => a.steps - b.steps);
    const last = rows.at(-1);
    if (!last) return [];
    return rows.slice(0, Math.min(2, rows.length - 1)).map((from) => {
      const change = (last.overhead_cpu_ms_per_step! - from.overhead_cpu_ms_per_step!) / from.overhead_cpu_ms_per_step!;
      return {
        pad_bytes: pad,
        from_steps: from.steps,
        to_steps: last.steps,
        first: from.overhead_cpu_ms_per_step!,
        last: last.overhead_cpu_ms_per_step!,
        change,
        flat: Math.abs(change) <= GROWTH_GOAL.flat_within,
      };
    });
  });
}

/** The human-readable `step-growth.md`. */
export function renderStepGrowthMarkdown(r: StepGrowthReport): string {
  const d = r.default_path;
  const timeMet = d.time_ratio_p50 <= GROWTH_GOAL.time_ratio_p50_max;
  const cpuMet = d.cpu_ratio !== undefined && d.cpu_ratio <= GROWTH_GOAL.cpu_ratio_max;
  const out = [
    '# Step cost on the default path, and as tasks grow',
    '',
    `Generated ${r.generated_at} on ${r.machine.cpus} × ${r.machine.cpu_model}, Node ${r.machine.node}, 1-minute load average ${r.machine.load_avg_1m_at_start} at the start and ${r.machine.load_avg_1m_at_end} at the end.`,
    '',
    `## Default path: PLAN_MODE=auto, a side-effecting tool (\`bench_record\`, not idempotent, hosted with the tool SDK)`,
    '',
    `${d.tasks} tasks of ${d.steps} LLM calls per side, alternating; ${d.samples} steps per side. The tool ran ${d.tool_runs} times for ${d.tool_calls_expected} calls.`,
    '',
    '| | ms per step p50 | mean | CPU ms per step (all processes) |',
    '|---|---:|---:|---:|',
    `| Hermes | ${ms(d.hermes.ms_per_step_p50)} | ${ms(d.hermes.ms_per_step_mean)} | ${cpuOf(d.hermes.cpu_ms_per_step)} |`,
    `| direct (openai SDK + a local function) | ${ms(d.direct.ms_per_step_p50)} | ${ms(d.direct.ms_per_step_mean)} | ${cpuOf(d.direct.cpu_ms_per_step)} |`,
    `| **ratio** | **${d.time_ratio_p50}×** (goal ≤ ${GROWTH_GOAL.time_ratio_p50_max}×: ${timeMet ? 'met' : 'MISSED'}) | | **${d.cpu_ratio ?? '–'}×** (goal ≤ ${GROWTH_GOAL.cpu_ratio_max}×: ${cpuMet ? 'met' : 'MISSED'}) |`,
    '',
    `CPU by process (Hermes): ${Object.entries(d.hermes.cpu_ms_per_step ?? {})
      .filter(([k]) => k !== 'total')
      .map(([k, v]) => `${k} ${ms(v)}`)
      .join(', ')}.`,
    '',
    '## Growth: one task per side at each length and tool-result size',
    '',
    '| steps | result bytes | Hermes ms/step p50 | mean | direct p50 | mean | ratio p50 | direct on undici p50 | mean | Hermes − that (mean) | CPU ms/step Hermes | direct | direct on undici | CPU ratio | Hermes − undici CPU | checkpoint head B | turn records | turn B mean | max |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.growth.map(
      (g) =>
        `| ${g.steps} | ${g.pad_bytes} | ${ms(g.hermes.ms_per_step_p50)} | ${ms(g.hermes.ms_per_step_mean)} | ${ms(g.direct.ms_per_step_p50)} | ${ms(g.direct.ms_per_step_mean)} | ${g.time_ratio_p50} | ${ms(g.direct_same_client.ms_per_step_p50)} | ${ms(g.direct_same_client.ms_per_step_mean)} | ${ms(g.overhead_ms_per_step_mean)} | ${cpuOf(g.hermes.cpu_ms_per_step)} | ${cpuOf(g.direct.cpu_ms_per_step)} | ${cpuOf(g.direct_same_client.cpu_ms_per_step)} | ${g.cpu_ratio ?? '–'} | ${ms(g.overhead_cpu_ms_per_step)} | ${g.checkpoint.head_bytes} | ${g.checkpoint.turn_records} | ${g.checkpoint.turn_bytes_mean} | ${g.checkpoint.turn_bytes_max} |`,
    ),
    '',
    ...flatness(r).map(
      (f) =>
        `- ${f.pad_bytes} B results, ${f.from_steps} → ${f.to_steps} steps: the CPU Hermes adds per step (all processes, against the direct loop on the same HTTP client) went from ${ms(f.first)} to ${ms(f.last)} ms, ${(f.change * 100).toFixed(0)} % (goal: within ${GROWTH_GOAL.flat_within * 100} %: ${f.flat ? 'met' : f.change < 0 ? 'MISSED, by falling: the per-task work is spread over more steps' : 'MISSED'}).`,
    ),
    '',
    '## The checkpoint write alone: the release before against this one',
    '',
    "The last step's checkpoint of each growth task, written alone against the same NATS (p50 of 20 writes; CPU of the bench process and nats-server per write): the whole conversation as one compare-and-set record, re-serialised each time, as the release before wrote it every step, and this release's turn record and head, sent in one round trip.",
    '',
    '| steps | result bytes | whole: bytes | ms p50 | CPU ms | turn + head: bytes | ms p50 | CPU ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.growth.map((g) => {
      const w = g.checkpoint_write.whole;
      const t = g.checkpoint_write.turn_and_head;
      const whole = w.error ? `fails: ${w.error} | – ` : `${ms(w.p50_ms)} | ${ms(w.cpu_ms_per_write)} `;
      return `| ${g.steps} | ${g.pad_bytes} | ${w.bytes} | ${whole}| ${t.bytes} | ${ms(t.p50_ms)} | ${ms(t.cpu_ms_per_write)} |`;
    }),
    '',
    '## How it was measured',
    '',
    "The whole Hermes (nats-server, redis-server and the five services as processes, `startHermesStack`, PLAN_MODE left at its default `auto`, so each task's planning call comes first and is a per-task cost) against the scripted model in a process of its own (latency 0), and beside it the same loop in the bench process with the openai SDK and the tool as a local function, each request the same size as the runtime's. A step is the gap between two consecutive LLM requests of a task reaching the model. The tool `bench_record` is hosted by the bench with `@hermes/tool-sdk` and declared not idempotent: each call writes an acknowledged `running` record, runs on the provider, writes `done`, and goes out only once its turn's checkpoint is stored. Growth tasks ask for `pad` bytes of padding in every result, so a 200-step × 20 KB conversation is about 4 MB: both sides send it whole to the model every step (that part grows with the task for any agent loop), which is why the flatness goal is judged on what Hermes adds per step, not on the raw step time. That is taken against the direct loop with the SDK on Hermes's own HTTP client (undici `request`): at 4 MB a body, the SDK's stock fetch costs more than all the rest of a step, so against it Hermes comes out faster and the difference measures HTTP clients. One task per side per row, on a machine shared with other work (see the load average): single rows are noisy. The checkpoint columns are read from the bucket at the task's end: one head and one turn record per step, the size of one step whatever the length.",
    '',
  ];
  return `${out.join('\n')}\n`;
}
