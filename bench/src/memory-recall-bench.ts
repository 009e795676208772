import os from 'node:os';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EmbeddedVectorStore, HashingEmbedder, type MemoryRecord } from '@hermes/memory/longterm';
import { ExactScan } from './exact-scan.js';
import type { MemoryRecallOptions } from './memory-recall-options.js';
import { round, summarise } from './stats.js';
import { SyntheticMemories } from './synthetic-memories.js';

/** The goal of issue 6: recall of one user's top 10 in at most 10 ms at the median, with 100k memories. */
export const MEMORY_RECALL_GOAL = { memories: 100_000, recall_p50_ms_max: 10 } as const;

export interface MemoryRecallRun {
  /** `embedded-usearch`: EmbeddedVectorStore through its public API; `js-exact-scan`: the baseline. */
  store: 'embedded-usearch' | 'js-exact-scan';
  memories: number;
  dimensions: number;
  queries: number;
  recall_p50_ms: number;
  recall_p99_ms: number;
  recall_max_ms: number;
  /** Records per second through `upsertMany` (durable log append + HNSW batch add), while filling. */
  writes_per_s: number | null;
  write_batch: number | null;
  /** One durable `upsert` at a time, into the filled store (how one extracted memory is written). */
  single_writes_per_s: number | null;
  fill_s: number | null;
  /** Share of the exact top 10 the store returned (HNSW is approximate), over `recall_queries` queries. */
  recall_at_10: number | null;
  recall_queries: number | null;
  /** Share of queries whose source memory (the one paraphrased) is among the 10 returned. */
  source_in_top10: number;
  /** Close (which saves the index), reopen and first search: a user's lazy load after a restart (log replay + saved index). */
  reload_ms: number | null;
}

export interface MemoryRecallReport {
  generated_at: string;
  machine: { cpus: number; cpu_model: string; node: string; platform: string; load_avg_1m_at_start: number; load_avg_1m_at_end: number };
  settings: {
    sizes: number[];
    queries: number;
    recall_queries: number;
    batch: number;
    single_writes: number;
    exact_scan_at: number;
    dimensions: number;
    hnsw: { connectivity: number; expansion_add: number; expansion_search: number };
    vectors: string;
  };
  goal: typeof MEMORY_RECALL_GOAL;
  goal_met: boolean;
  runs: MemoryRecallRun[];
  total_s: number;
}

const USER = 'bench-user';

/** Fills an embedded store per size, times recall, writes and reloads, and compares with an exact scan. */
export async function runMemoryRecallBench(o: MemoryRecallOptions, say: (line: string) => void): Promise<MemoryRecallReport> {
  const started = performance.now();
  const loadAtStart = os.loadavg()[0]!;
  const embedder = new HashingEmbedder({ dimensions: o.dimensions });
  const runs: MemoryRecallRun[] = [];

  for (const size of o.sizes) {
    const data = new SyntheticMemories({ seed: 42 });
    const texts = Array.from({ length: size }, () => data.memory());
    const vectors = texts.map((t) => embedder.embedOne(t));
    const sources = Array.from({ length: o.queries }, () => data.index(size));
    const queries = sources.map((i) => embedder.embedOne(data.paraphrase(texts[i]!)));
    say(`memory-recall: ${size} memories of ${o.dimensions} dims (hashing embedder), ${o.queries} queries`);

    const dataDir = await mkdtemp(join(os.tmpdir(), 'hermes-bench-memory-'));
    try {
      const storeOptions = { dataDir, dimensions: o.dimensions, hnsw: { expansionAdd: o.expansionAdd, expansionSearch: o.expansionSearch } };
      let store = new EmbeddedVectorStore(storeOptions);
      // The first search builds the (empty) index, so the fill below pays for indexing as a running service does.
      await store.search(USER, queries[0]!, 10);

      const fillStart = performance.now();
      for (let start = 0; start < size; start += o.batch) {
        const end = Math.min(size, start + o.batch);
        await store.upsertMany(
          Array.from({ length: end - start }, (_, k) => ({ record: memoryRecord(start + k, texts[start + k]!), vector: vectors[start + k]! })),
        );
      }
      const fillS = (performance.now() - fillStart) / 1000;
      say(`  filled in ${fillS.toFixed(1)} s (${Math.round(size / fillS)} writes/s in batches of ${o.batch})`);

      const timed = await timeSearches(store, queries);
      const sourceHits = timed.ids.filter((ids, q) => ids.includes(memoryId(sources[q]!))).length;

      const exact = new ExactScan(o.dimensions, size);
      for (const v of vectors) exact.add(v);
      const recallQueries = Math.min(o.recallQueries, queries.length);
      let found = 0;
      for (let q = 0; q < recallQueries; q++) {
        const truth = exact.search(queries[q]!, 10).map(memoryId);
        found += truth.filter((id) => timed.ids[q]!.includes(id)).length / Math.max(1, truth.length);
      }

      const singleStart = performance.now();
      for (let i = 0; i < o.singleWrites; i++) await store.upsert(memoryRecord(size + i, data.memory()), embedder.embedOne(data.memory()));
      const singleS = (performance.now() - singleStart) / 1000;

      await store.close();
      const reloadStart = performance.now();
      store = new EmbeddedVectorStore(storeOptions);
      await store.search(USER, queries[0]!, 10);
      const reloadMs = performance.now() - reloadStart;
      await store.close();

      const latency = summarise(timed.ms);
      runs.push({
        store: 'embedded-usearch',
        memories: size,
        dimensions: o.dimensions,
        queries: queries.length,
        recall_p50_ms: latency.p50_ms,
        recall_p99_ms: latency.p99_ms,
        recall_max_ms: latency.max_ms,
        writes_per_s: Math.round(size / fillS),
        write_batch: o.batch,
        single_writes_per_s: o.singleWrites > 0 ? Math.round(o.singleWrites / singleS) : null,
        fill_s: round(fillS, 1),
        recall_at_10: recallQueries > 0 ? round(found / recallQueries, 3) : null,
        recall_queries: recallQueries,
        source_in_top10: round(sourceHits / queries.length, 3),
        reload_ms: round(reloadMs, 1),
      });
      say(`  recall p50 ${latency.p50_ms} ms, p99 ${latency.p99_ms} ms; recall@10 vs exact ${runs.at(-1)!.recall_at_10}`);

      if (size === o.exactScanAt) {
        const scanMs: number[] = [];
        let scanSourceHits = 0;
        for (const [q, query] of queries.entries()) {
          const t = performance.now();
          const rows = exact.search(query, 10);
          scanMs.push(performance.now() - t);
          if (rows.includes(sources[q]!)) scanSourceHits++;
        }
        const scan = summarise(scanMs);
        runs.push({
          store: 'js-exact-scan',
          memories: size,
          dimensions: o.dimensions,
          queries: queries.length,
          recall_p50_ms: scan.p50_ms,
          recall_p99_ms: scan.p99_ms,
          recall_max_ms: scan.max_ms,
          writes_per_s: null,
          write_batch: null,
          single_writes_per_s: null,
          fill_s: null,
          recall_at_10: 1,
          recall_queries: queries.length,
          source_in_top10: round(scanSourceHits / queries.length, 3),
          reload_ms: null,
        });
        say(`  exact JS scan: p50 ${scan.p50_ms} ms, p99 ${scan.p99_ms} ms`);
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  const atGoal = runs.find((r) => r.store === 'embedded-usearch' && r.memories === MEMORY_RECALL_GOAL.memories);
  return {
    generated_at: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      load_avg_1m_at_start: round(loadAtStart, 2),
      load_avg_1m_at_end: round(os.loadavg()[0]!, 2),
    },
    settings: {
      sizes: o.sizes,
      queries: o.queries,
      recall_queries: o.recallQueries,
      batch: o.batch,
      single_writes: o.singleWrites,
      exact_scan_at: o.exactScanAt,
      dimensions: o.dimensions,
      hnsw: { connectivity: 16, expansion_add: o.expansionAdd, expansion_search: o.expansionSearch },
      vectors: 'HashingEmbedder vectors of synthetic memories (Zipf vocabulary); queries are embedded paraphrases of stored memories',
    },
    goal: MEMORY_RECALL_GOAL,
    goal_met: atGoal !== undefined && atGoal.recall_p50_ms <= MEMORY_RECALL_GOAL.recall_p50_ms_max,
    runs,
    total_s: round((performance.now() - started) / 1000, 1),
  };
}

/** Top-10 searches through the store's public API, after a short warm-up; latencies and returned ids. */
async function timeSearches(store: EmbeddedVectorStore, queries: Float32Array[]): Promise<{ ms: number[]; ids: string[][] }> {
  for (const q of queries.slice(0, 50)) await store.search(USER, q, 10);
  const ms: number[] = [];
  const ids: string[][] = [];
  for (const q of queries) {
    const t = performance.now();
    const hits = await store.search(USER, q, 10);
    ms.push(performance.now() - t);
    ids.push(hits.map((h) => h.record.memory_id));
  }
  return { ms, ids };
}

const memoryId = (i: number) => `m${i}`;

const CREATED = Date.parse('2026-01-01T00:00:00Z');

function memoryRecord(i: number, content: string): MemoryRecord {
  const at = new Date(CREATED + i * 1000).toISOString();
  return { memory_id: memoryId(i), user_id: USER, type: 'fact', content, confidence: 0.8, status: 'active', created_at: at, updated_at: at };
}
