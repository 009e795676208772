import { STEP_GOAL, type StepOverheadReport } from './step-overhead-bench.js';

const ms = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(1));

/** Whether the overhead goal is met, in words. */
export function stepOverheadVerdict(r: StepOverheadReport): string {
  return (
    `Platform overhead ${ms(r.overhead_ms_per_step_p50)} ms per step at the median (Hermes ${ms(r.hermes_ms_per_step_p50)} ms − direct ${ms(r.direct_ms_per_step_p50)} ms) ${r.goal_met ? 'meets' : 'MISSES'} the goal of ≤ ${STEP_GOAL.overhead_ms_per_step_p50_max} ms` +
    ` (${ms(r.direct_same_http_client.overhead_ms_per_step_p50)} ms against the direct loop on Hermes's HTTP client).`
  );
}

/** The human-readable `step-overhead.md`. */
export function renderStepOverheadMarkdown(r: StepOverheadReport): string {
  const b = r.breakdown;
  const out = [
    '# Platform overhead per agent step',
    '',
    `Generated ${r.generated_at} on ${r.machine.cpus} × ${r.machine.cpu_model} (${r.machine.platform}), Node ${r.machine.node}, 1-minute load average ${r.machine.load_avg_1m_at_start} at the start and ${r.machine.load_avg_1m_at_end} at the end.`,
    '',
    '| | ms per step p50 | p99 | mean | per task (mean ms per step) |',
    '|---|---:|---:|---:|---|',
    `| Hermes (all five services, NATS, Redis) | ${ms(r.hermes_ms_per_step_p50)} | ${ms(r.hermes_ms_per_step_p99)} | ${ms(r.hermes_ms_per_step_mean)} | ${r.hermes.per_task_ms_per_step.map(ms).join(', ')} |`,
    `| direct (openai SDK + a local function, one process) | ${ms(r.direct_ms_per_step_p50)} | ${ms(r.direct_ms_per_step_p99)} | ${ms(r.direct_ms_per_step_mean)} | ${r.direct.per_task_ms_per_step.map(ms).join(', ')} |`,
    `| **overhead** (Hermes − direct) | **${ms(r.overhead_ms_per_step_p50)}** | | ${ms(r.overhead_ms_per_step_mean)} | |`,
    `| direct, with the SDK on Hermes's HTTP client (undici \`request\`) | ${ms(r.direct_same_http_client.ms_per_step_p50)} | | | ${r.direct_same_http_client.per_task_ms_per_step.map(ms).join(', ')} |`,
    `| overhead against that (Hermes − direct on the same client) | ${ms(r.direct_same_http_client.overhead_ms_per_step_p50)} | | | |`,
    '',
    `**${stepOverheadVerdict(r)}**`,
    '',
    "The goal compares Hermes with the openai SDK as it ships, which is what a team writing the loop itself would run. Hermes's LLM client hands the SDK a cheaper HTTP client (`LLM_HTTP_CLIENT=undici`, about half the client CPU per call), part of what it does for a step; the last two rows take that out of the comparison.",
    '',
    `Seen by the submitter (gaps between \`llm_call\` step events): p50 ${ms(r.hermes.from_step_events_p50_ms)} ms, p99 ${ms(r.hermes.from_step_events_p99_ms)} ms per step. ` +
      `A whole task takes ${ms(r.hermes.task_ms_p50)} ms from submit to \`completed\` (p50), of which ${ms(r.hermes.fixed_ms_per_task_p50)} ms is per task rather than per step (intake, dispatch, start, tool list, session read and write, result); the direct loop takes ${ms(r.direct.task_ms_p50)} ms.`,
    '',
    ...cpuTable(r),
    '## How it was measured',
    '',
    `A task is ${r.steps} LLM calls: each of the first ${r.steps - 1} asks for one \`${r.settings.tool}\` call (a built-in tool of the toolbus) with new arguments, the tool result goes back, and the last call answers. ` +
      'The scripted OpenAI-compatible model (from `@hermes/testkit`, in a process of its own) answers at once (latency 0), so what is left is what surrounds the model.',
    '',
    '- **Hermes**: `startHermesStack` runs nats-server, redis-server and the dispatcher, runtime, toolbus, memory and gateway as real processes (`LOG_LEVEL=warn`, `LLM_MAX_RETRIES=0`). ' +
      "The task is submitted over NATS with `submitTask` and followed with `followTaskEvents` to `completed`. Every step goes: LLM call with the permit reserved during the previous tool call (the process keeps its permit while nobody waits; one read of the pool, no write), then the turn's checkpoint and the `toolCall` request to the toolbus together (echo is side-effect free), the toolbus's reply followed, in the same socket write and without JetStream acks, by its call record and audit entry, and the next LLM call once both checkpoint and reply are in; step events are published on the way (the tool result's waits for the next LLM call's and goes in its write).",
    '- **direct**: the same loop in the bench process: `openai` SDK calls to the same model process with the same system prompt, tool list and message growth as the runtime sends, and the tool as a local function.',
    `- **A step** is the gap between two consecutive LLM requests of one task reaching the scripted model (taken on the machine clock as the model's responder sees them), so each holds one answer, one tool call and its result; ${r.steps - 1} per task. ` +
      `${r.tasks} tasks per side after ${r.settings.warmup_tasks} warm-up task(s) per side, run one at a time, Hermes and direct alternating so that load from elsewhere on the machine falls on both; ${r.samples} steps per side. Overhead = Hermes p50 − direct p50.`,
    '',
  ];
  if (b) {
    out.push('## Where the time goes', '');
    if (b.runtime) {
      const rt = b.runtime;
      out.push(
        `The runtime's own timing of ${rt.steps} steps (a replica started with \`RUNTIME_STEP_TIMING=true\`; ${ms(b.timed_hermes_ms_per_step_p50)} ms per step p50 in that run), p50 of each phase, next to the same part of the direct loop:`,
        '',
        '| phase | Hermes p50 ms | direct p50 ms |',
        '|---|---:|---:|',
        `| LLM call (\`LlmClient.chat\`) | ${ms(rt.llm_p50_ms)} | ${ms(b.direct_llm_call_p50_ms)} |`,
        `| … of which: call start → request reaches the model (permit, SDK, network) | ${ms(rt.llm_to_model_p50_ms)} | ${ms(b.direct_llm_to_model_p50_ms)} |`,
        `| … of which: request reaches the model → answer in hand (model, SDK, event loop) | ${ms(rt.llm_from_model_p50_ms)} | ${ms(b.direct_llm_from_model_p50_ms)} |`,
        `| checkpoint of the turn (the side-effect-free call is already on its way) | ${ms(rt.checkpoint_calls_p50_ms)} | – |`,
        `| rest of the tool call (\`toolCall\` request/reply to the toolbus) once the checkpoint is stored | ${ms(rt.tools_p50_ms)} | local function |`,
        `| everything else in the loop (messages, events, validation) | ${ms(rt.other_p50_ms)} | |`,
        `| **step** (LLM start to next LLM start) | **${ms(rt.step_p50_ms)}** | **${ms(r.direct_ms_per_step_p50)}** |`,
        '',
        'Medians of phases do not add up exactly to the median step. The split of the LLM call uses the machine clock in both processes (`performance.timeOrigin + performance.now()`).',
        '',
      );
    }
    out.push(
      'Each hop alone, timed from the bench process against the idle stack (p50 / p99 ms):',
      '',
      '| hop | p50 | p99 | per step |',
      '|---|---:|---:|---|',
      ...Object.entries(b.hops).map(([name, s]) => `| ${name} | ${ms(s.p50_ms)} | ${ms(s.p99_ms)} | ${HOP_USE[name] ?? ''} |`),
      '',
      `A mid-task checkpoint is about ${b.checkpoint_bytes_mid_task} bytes. What was changed to get here, with the effect of each change, and what it would take to reach the goal: see \`bench/README.md\`.`,
      ...b.notes.map((n) => `- ${n}`),
      '',
    );
  }
  if (r.errors.length) out.push(`Errors: ${r.errors.slice(0, 5).join('; ')}`, '');
  return out.join('\n');
}

const HOP_USE: Record<string, string> = {
  nats_request_reply: 'the floor under every request and KV write',
  checkpoint_save: '1, alongside the side-effect-free tool call (the results are in the toolbus records)',
  tool_record_get_absent: '0 since the toolbus creates first (was 1: is the key known?); a replay still reads it',
  tool_record_create:
    '1, after the reply, in its socket write and unacknowledged, for a side-effect-free tool like the bench echo (before the run, acknowledged, for others)',
  tool_record_update: '0 for a side-effect-free tool (1 for others: record as done)',
  step_event_publish:
    "3, not awaited by the loop (llm_call, tool_call, and the previous step's tool_result in the same write); the audit record is a 4th, with the toolbus reply",
  semaphore_acquire: '0: the kept permit (LLM_PERMIT_KEEP_MS) is reserved with one read of the pool while the tool call runs',
  semaphore_release: '0 while kept; else 1, in the background',
  tool_call_request: '1 (the whole toolbus path: run, reply; record and audit after it)',
};

/** CPU per step of each process, both sides: on a 2-core machine this, more than hop latency, sets the pace. */
function cpuTable(r: StepOverheadReport): string[] {
  const c = r.cpu_ms_per_step;
  if (!c) return [];
  const row = (side: Record<string, number>) =>
    Object.entries(side)
      .filter(([name]) => name !== 'total')
      .map(([name, v]) => `${name} ${ms(v)}`)
      .join(', ');
  return [
    "CPU time per step (ms, all processes, the tasks' per-task work included; from /proc):",
    '',
    '| | total | by process |',
    '|---|---:|---|',
    `| Hermes | ${ms(c.hermes['total'])} | ${row(c.hermes)} |`,
    `| direct | ${ms(c.direct['total'])} | ${row(c.direct)} |`,
    '',
  ];
}
