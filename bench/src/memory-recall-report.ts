import { MEMORY_RECALL_GOAL, type MemoryRecallReport, type MemoryRecallRun } from './memory-recall-bench.js';

const ms = (n: number | null | undefined) => (n === null || n === undefined || Number.isNaN(n) ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const num = (n: number | null) => (n === null ? '–' : n.toLocaleString('en-US'));

/** Whether the recall goal is met, in words. */
export function memoryRecallVerdict(r: MemoryRecallReport): string {
  const run = r.runs.find((x) => x.store === 'embedded-usearch' && x.memories === MEMORY_RECALL_GOAL.memories);
  if (!run) return `No run at ${num(MEMORY_RECALL_GOAL.memories)} memories: the goal (p50 ≤ ${MEMORY_RECALL_GOAL.recall_p50_ms_max} ms) was not measured.`;
  return `Recall of the top 10 among ${num(run.memories)} memories: p50 ${ms(run.recall_p50_ms)} ms ${r.goal_met ? 'meets' : 'MISSES'} the goal of ≤ ${MEMORY_RECALL_GOAL.recall_p50_ms_max} ms.`;
}

const row = (x: MemoryRecallRun) =>
  `| ${x.store} | ${num(x.memories)} | ${ms(x.recall_p50_ms)} | ${ms(x.recall_p99_ms)} | ${num(x.writes_per_s)} | ${num(x.single_writes_per_s)} | ${x.recall_at_10 ?? '–'} | ${x.source_in_top10} | ${x.reload_ms === null ? '–' : num(Math.round(x.reload_ms))} |`;

/** The human-readable `memory-recall.md`. */
export function renderMemoryRecallMarkdown(r: MemoryRecallReport): string {
  return [
    '# Long-term memory recall (embedded store)',
    '',
    `Generated ${r.generated_at} on ${r.machine.cpus} × ${r.machine.cpu_model} (${r.machine.platform}), Node ${r.machine.node}, 1-minute load average ${r.machine.load_avg_1m_at_start} at the start and ${r.machine.load_avg_1m_at_end} at the end; ${r.total_s} s in all.`,
    '',
    '| store | memories | recall p50 ms | p99 ms | writes/s (upsertMany) | writes/s (single, durable) | recall@10 vs exact | source in top 10 | reload ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.runs.map(row),
    '',
    `**${memoryRecallVerdict(r)}**`,
    '',
    '## How it was measured',
    '',
    `- One user namespace of \`EmbeddedVectorStore\` (usearch HNSW, cosine, connectivity ${r.settings.hnsw.connectivity}, expansion ${r.settings.hnsw.expansion_add} on add and ${r.settings.hnsw.expansion_search} on search) in a fresh data directory with durable writes (\`datasync\` per write call). Vectors: ${r.settings.vectors}, ${r.settings.dimensions} dimensions.`,
    `- **Recall**: ${r.settings.queries} top-10 \`search\` calls through the public API (the per-user queue, the index, and the copy of the records returned) after 50 warm-up searches.`,
    `- **Writes**: the store filled through \`upsertMany\` in batches of ${r.settings.batch} (one log append and one index batch each), with the index live; then ${r.settings.single_writes} single \`upsert\` calls, one at a time.`,
    `- **recall@10**: share of the exact top 10 (a full scan) that the store returned, over ${r.settings.recall_queries} queries. **Source in top 10**: share of queries whose paraphrased memory came back.`,
    '- **Reload**: close (which saves the index beside the log), reopen and the first search of the user: log replay, checksum and load of the saved index.',
    `- **js-exact-scan**: the same queries answered by a plain JavaScript scan over one Float32Array (dot products, top-10 selection), at ${r.settings.exact_scan_at.toLocaleString('en-US')} memories, for comparison.`,
    '',
  ].join('\n');
}
