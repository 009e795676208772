import { applySettings, int, rejectUnknown, splitFlags, type Setting } from './bench-options.js';

/** Settings of the long-term memory recall benchmark. */
export interface MemoryRecallOptions {
  /** Store sizes to measure, one user namespace each. */
  sizes: number[];
  /** Timed searches (top 10) per size. */
  queries: number;
  /** Queries per size also answered by an exact scan, to measure the index's recall@10. */
  recallQueries: number;
  /** Records per `upsertMany` call while filling the store. */
  batch: number;
  /** Single durable `upsert` calls timed after filling (the write path of one extracted memory). */
  singleWrites: number;
  /** Store size at which the plain JS exact scan is timed for comparison (0: not at all). */
  exactScanAt: number;
  /** Hashing embedder dimensions (the service default is 256). */
  dimensions: number;
  /** HNSW build and search breadth of the store under test (the store's defaults: 64 and 128). */
  expansionAdd: number;
  expansionSearch: number;
  /** Where memory-recall.json and memory-recall.md go. */
  resultsDir: string;
}

const list = (name: string, v: string): number[] => v.split(',').map((x) => int(name, x.trim(), 1));

export const memoryRecallSettings: Setting<MemoryRecallOptions>[] = [
  { flag: 'sizes', env: 'BENCH_MEMORY_SIZES', apply: (o, v) => (o.sizes = list('sizes', v)) },
  { flag: 'queries', env: 'BENCH_MEMORY_QUERIES', apply: (o, v) => (o.queries = int('queries', v, 1)) },
  { flag: 'recall-queries', env: 'BENCH_MEMORY_RECALL_QUERIES', apply: (o, v) => (o.recallQueries = int('recall-queries', v, 0)) },
  { flag: 'batch', env: 'BENCH_MEMORY_BATCH', apply: (o, v) => (o.batch = int('batch', v, 1)) },
  { flag: 'single-writes', env: 'BENCH_MEMORY_SINGLE_WRITES', apply: (o, v) => (o.singleWrites = int('single-writes', v, 0)) },
  { flag: 'exact-scan-at', env: 'BENCH_MEMORY_EXACT_SCAN_AT', apply: (o, v) => (o.exactScanAt = int('exact-scan-at', v, 0)) },
  { flag: 'dimensions', env: 'BENCH_MEMORY_DIMENSIONS', apply: (o, v) => (o.dimensions = int('dimensions', v, 16)) },
  { flag: 'expansion-add', env: 'BENCH_MEMORY_EXPANSION_ADD', apply: (o, v) => (o.expansionAdd = int('expansion-add', v, 1)) },
  { flag: 'expansion-search', env: 'BENCH_MEMORY_EXPANSION_SEARCH', apply: (o, v) => (o.expansionSearch = int('expansion-search', v, 1)) },
  { flag: 'results-dir', env: 'BENCH_RESULTS_DIR', apply: (o, v) => (o.resultsDir = v) },
];

/** Defaults (10k and 100k memories, 1000 queries, batches of 1000, exact scan at 10k), then env, then flags. */
export function memoryRecallOptions(o: {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  defaultResultsDir: string;
  ignore?: readonly string[];
}): MemoryRecallOptions {
  const opts: MemoryRecallOptions = {
    sizes: [10_000, 100_000],
    queries: 1000,
    recallQueries: 100,
    batch: 1000,
    singleWrites: 200,
    exactScanAt: 10_000,
    dimensions: 256,
    expansionAdd: 64,
    expansionSearch: 128,
    resultsDir: o.defaultResultsDir,
  };
  const unknown = applySettings(opts, memoryRecallSettings, o.env, splitFlags(o.argv));
  rejectUnknown(unknown, [...memoryRecallSettings.map((s) => s.flag), ...(o.ignore ?? [])]);
  return opts;
}
