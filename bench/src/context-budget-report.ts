import type { ContextBudgetReport } from './context-budget-bench.js';

const pct = (n: number) => `${(n * 100).toFixed(1)} %`;

/** The goal in one line, for the console and the markdown. */
export function contextBudgetVerdict(r: ContextBudgetReport): string {
  return (
    `context-budget: ${r.tokens_sent} of ${r.tokens_full_history} tokens sent at a ${r.context_limit}-token window, ${pct(r.reduction)} fewer: ` +
    `${r.goal.met ? 'meets' : 'MISSES'} the goal of ≥ ${pct(r.goal.reduction_min)}; pinned constraints kept ${r.pinned_constraints_kept}/${r.pinned_constraints}` +
    `${r.goal.all_constraints_kept ? ' in every window' : ' (SOME LOST)'}.`
  );
}

/** The human-readable `context-budget.md`. */
export function renderContextBudgetMarkdown(r: ContextBudgetReport): string {
  const s = r.settings;
  return [
    '# Context budget benchmark',
    '',
    `Generated ${r.generated_at}. A scripted session of ${r.turns} turns (${r.messages} messages: question, tool call, a JSON log result of ${r.tool_result_tokens_range[0]}-${r.tool_result_tokens_range[1]} tokens, answer) is stored through the memory service ` +
      '(its own process, on real nats-server and redis-server); the first turns state six constraints and deadlines, two of them also pinned by the user (sessionPin), the other four only said. ' +
      `The running summary is written by the scripted summariser (${r.summarizer_calls} calls, incremental, each at most ${s.summary_input_tokens} input tokens), which lists the constraints the user stated, as the prompt asks (it finds them by their \`Constraint:\` / \`Deadline:\` prefix; a real model has to read them from the text, so this measures the pipeline after the model: pins stored, deduplicated and always sent). ` +
      `Then one sessionContext request per window for ${r.model}, reserving ${s.reserve_output} tokens for the answer and ${s.reserve_tools} for tool schemas and the system prompt, as the runtime does.`,
    '',
    `**${contextBudgetVerdict(r)}**`,
    '',
    `Whole history: ${r.tokens_full_history} tokens (${r.tool_result_tokens} of them tool results), counted with the real o200k tokenizer as stored.`,
    '',
    '| window | budget | tokens sent | reduction | messages sent | summary | truncated tool results | not yet summarised | constraints kept | assembly ms |',
    '|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|',
    ...r.runs.map(
      (run) =>
        `| ${run.context_limit} | ${run.budget} | ${run.tokens_sent} | ${pct(run.reduction)} | ${run.messages_sent} | ${run.summary_used ? 'yes' : 'no'} | ${run.truncated_tool_results} | ${run.dropped_messages} | ${run.pinned_constraints_kept}/${r.pinned_constraints} | ${run.assemble_ms} |`,
    ),
    '',
    "The check is literal: each constraint's exact text must occur in the content of the messages the service returned (pinned facts are one system message that is always sent). " +
      '"Not yet summarised" counts messages left out that the summary does not cover yet (a background job is queued for them).',
    '',
    'How to read it: once the running summary has caught up (background jobs did most of it while the session grew; the bench then forces the rest, as `hermes session summarize` does), ' +
      `the summary stands for every message but the latest ${s.summary_keep_recent}, so the context is the summary, the pinned facts and those latest messages, whatever the window: ` +
      `the window only matters while more than it is not yet summarised (between background runs up to about ${s.summary_trigger_tokens} tokens are). ` +
      `Tool results over ${s.tool_result_max_tokens} tokens are truncated in context; the full result stays retrievable with sessionMessage. ` +
      'The early constraints survive because they are pinned (by the user, or by the summariser from what the user said), not because the oldest turns are kept.',
    '',
    'Run it: `npm run bench -- --only context-budget` (`--turns`, `--context-limits 128000,32000`).',
    '',
  ].join('\n');
}
