import os from 'node:os';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { startNatsServer, startScriptedLlm } from '@hermes/testkit';
import type { BenchOptions } from './bench-options.js';
import { BenchError } from './bench-errors.js';
import { sampleCpu, type CpuSample } from './cpu-sampler.js';
import { round, summarise, type LatencySummary } from './stats.js';
import { BENCH_POOL } from './load-worker.js';
import { watchOccupancy, type Occupancy } from './occupancy-watch.js';
import { runFleet } from './worker-fleet.js';
import type { LoadResult, OverheadResult, WorkerSettings } from './worker-protocol.js';

/** Utilization of the cap a saturated pool must reach, and the most an uncontended acquire may cost. */
export const GOALS = { utilization_min: 0.95, acquire_p50_max_ms: 1 } as const;

/** One saturation run, in the shape `bench/results/semaphore.json` keeps. */
export interface SaturationRun {
  capacity: number;
  latency_ms: number;
  processes: number;
  loops: number;
  duration_s: number;
  calls: number;
  calls_per_s: number;
  bound_calls_per_s: number;
  utilization: number;
  max_in_flight: number;
  errors: number;
  /** Uncontended (the overhead measurement, repeated in every run). */
  acquire_p50_ms: number;
  acquire_p99_ms: number;
  release_p50_ms: number;
  release_p99_ms: number;
  /** Measured in this run, over calls that ended in the window. */
  under_load: {
    permit_wait_p50_ms: number;
    permit_wait_p99_ms: number;
    held_p50_ms: number;
    held_p99_ms: number;
    release_p50_ms: number;
    release_p99_ms: number;
    chat_p50_ms: number;
    chat_p99_ms: number;
  };
  /** Where the time goes, for when utilization falls short. */
  diagnostics: {
    /** Time-weighted holders / N, from the pool's stored states. */
    kv_occupancy: number;
    /** Share of the window with a free permit and a queued waiter. */
    free_while_queued: number;
    pool_writes_per_call: number;
    cas_attempts_per_call: number;
    cas_conflicts_per_call: number;
    reloads_per_call: number;
    cas_p50_ms: number;
    cas_p99_ms: number;
    watch_lag_p50_ms: number;
    watch_lag_p99_ms: number;
    /** CPU used in the window, in cores (1 = one core busy all the time): the workers together, nats-server, and the bench process with the scripted model. */
    cpu_cores_workers: number;
    cpu_cores_nats_server: number | null;
    cpu_cores_bench_and_model: number;
  };
}

export interface OverheadMeasurement {
  iterations: number;
  warmup: number;
  acquire: LatencySummary;
  release: LatencySummary;
}

export interface SemaphoreBenchReport {
  generated_at: string;
  machine: { cpus: number; cpu_model: string; node: string; platform: string; load_avg_1m_at_start: number; load_avg_1m_at_end: number };
  settings: { capacity: number; latency_ms: number; loops: number; warmup_s: number; duration_s: number; lease_ms: number };
  goals: typeof GOALS;
  overhead: OverheadMeasurement;
  /** 1 process, same loops and HTTP stack, an in-process semaphore instead of the distributed one. */
  baseline: { calls_per_s: number; utilization: number; held_p50_ms: number; held_p99_ms: number; max_in_flight: number };
  runs: SaturationRun[];
  errors: string[];
}

/** Starts nats-server and the scripted model, measures the overhead, then one saturation run per process count. */
export async function runSemaphoreBench(o: BenchOptions, log: (line: string) => void): Promise<SemaphoreBenchReport> {
  const nats = await startNatsServer();
  const llm = await startScriptedLlm({ latencyMs: o.latencyMs });
  const control = await connect({ servers: nats.url });
  const stamp = Date.now().toString(36);
  const loadAtStart = os.loadavg()[0]!;
  try {
    log(`overhead: ${o.overheadIterations} sequential acquire→release (after ${o.overheadWarmup} warm-up) in one process`);
    const overhead = await measureOverhead(o, nats.url, control, stamp);
    log(
      `  acquire p50 ${overhead.acquire.p50_ms} ms p99 ${overhead.acquire.p99_ms} ms; release p50 ${overhead.release.p50_ms} ms p99 ${overhead.release.p99_ms} ms`,
    );

    const errors: string[] = [];
    const saturate = async (processes: number, permits: 'semaphore' | 'local'): Promise<SaturationRun> => {
      const tag = `${processes}p_${permits}`;
      const bucket = `bench_sem_${stamp}_${tag}`;
      const workers: WorkerSettings[] = loopsPerProcess(o.loops, processes).map((loops, processIndex) => ({
        mode: 'load',
        natsUrl: nats.url,
        bucket,
        controlSubject: `bench.${stamp}.${tag}.go`,
        capacity: o.capacity,
        leaseMs: o.leaseMs,
        llmUrl: llm.baseUrl,
        loops,
        processIndex,
        processes,
        spreadMs: o.latencyMs,
        permits,
      }));
      const runKv = await new Kvm(jetstream(control)).create(bucket, { history: 1 });
      const occupancy = await watchOccupancy(runKv, `pool.${BENCH_POOL}`);
      let cpu: Promise<CpuSample> | undefined;
      const { results, go } = await runFleet({
        control,
        workers,
        beforeGo: () => llm.resetStats(),
        window: (now) => {
          const go = { windowStart: now + o.warmupS * 1000, windowEnd: now + (o.warmupS + o.durationS) * 1000 };
          cpu = sampleCpu(go, nats.pid);
          return go;
        },
        resultTimeoutMs: (o.warmupS + o.durationS) * 1000 + 60_000,
      });
      const loads = results as LoadResult[];
      for (const r of loads) errors.push(...r.errorMessages.map((m) => `${tag}: ${m}`));
      const run = saturationRun(o, processes, loads, llm.maxInFlight, overhead, occupancy.stop(go, o.capacity), await cpu!);
      log(
        `  ${run.calls_per_s} calls/s of ${run.bound_calls_per_s} (utilization ${run.utilization}), max in flight ${run.max_in_flight}, errors ${run.errors}`,
      );
      log(`  ${JSON.stringify({ under_load: run.under_load, diagnostics: run.diagnostics })}`);
      return run;
    };

    log(`baseline: N=${o.capacity}, L=${o.latencyMs} ms, 1 process, in-process semaphore (the HTTP stack's own ceiling)`);
    const base = await saturate(1, 'local');
    const baseline = {
      calls_per_s: base.calls_per_s,
      utilization: base.utilization,
      held_p50_ms: base.under_load.held_p50_ms,
      held_p99_ms: base.under_load.held_p99_ms,
      max_in_flight: base.max_in_flight,
    };

    const runs: SaturationRun[] = [];
    for (const processes of o.processes) {
      log(`saturation: N=${o.capacity}, L=${o.latencyMs} ms, ${processes} process(es), ${o.loops} loops, ${o.warmupS} s warm-up + ${o.durationS} s`);
      runs.push(await saturate(processes, 'semaphore'));
    }
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
      settings: { capacity: o.capacity, latency_ms: o.latencyMs, loops: o.loops, warmup_s: o.warmupS, duration_s: o.durationS, lease_ms: o.leaseMs },
      goals: GOALS,
      overhead,
      baseline,
      runs,
      errors,
    };
  } finally {
    await control.close();
    await llm.close();
    await nats.stop();
  }
}

async function measureOverhead(
  o: BenchOptions,
  natsUrl: string,
  control: Parameters<typeof runFleet>[0]['control'],
  stamp: string,
): Promise<OverheadMeasurement> {
  const {
    results: [result],
  } = (await runFleet({
    control,
    workers: [
      {
        mode: 'overhead',
        natsUrl,
        bucket: `bench_sem_${stamp}_overhead`,
        controlSubject: `bench.${stamp}.overhead.go`,
        // Large enough that an acquire never waits: what is measured is the permit's own cost.
        capacity: 1_000_000,
        leaseMs: o.leaseMs,
        iterations: o.overheadIterations,
        warmup: o.overheadWarmup,
      },
    ],
    window: (now) => ({ windowStart: now, windowEnd: now }),
    resultTimeoutMs: 10 * 60_000,
  })) as { results: OverheadResult[] };
  if (!result) throw new BenchError('no_result', 'the overhead worker returned nothing');
  return { iterations: o.overheadIterations, warmup: o.overheadWarmup, acquire: summarise(result.acquireMs), release: summarise(result.releaseMs) };
}

/** Spreads `loops` over `processes` as evenly as whole numbers allow. */
export function loopsPerProcess(loops: number, processes: number): number[] {
  return Array.from({ length: processes }, (_, i) => Math.floor(loops / processes) + (i < loops % processes ? 1 : 0));
}

function saturationRun(
  o: BenchOptions,
  processes: number,
  results: LoadResult[],
  maxInFlight: number,
  overhead: OverheadMeasurement,
  occupancy: Occupancy,
  cpu: CpuSample,
): SaturationRun {
  const calls = results.reduce((n, r) => n + r.calls, 0);
  const callsPerS = calls / o.durationS;
  const bound = o.capacity / (o.latencyMs / 1000);
  const all = (pick: (r: LoadResult) => number[]) => results.flatMap(pick);
  const wait = summarise(all((r) => r.permitWaitMs));
  const held = summarise(all((r) => r.heldMs));
  const release = summarise(all((r) => r.releaseMs));
  const chat = summarise(all((r) => r.chatMs));
  const cas = summarise(all((r) => r.kv.updateMs));
  const lag = summarise(all((r) => r.kv.watchLagMs));
  const perCall = (pick: (r: LoadResult) => number) => round(results.reduce((n, r) => n + pick(r), 0) / Math.max(1, calls), 3);
  return {
    capacity: o.capacity,
    latency_ms: o.latencyMs,
    processes,
    loops: o.loops,
    duration_s: o.durationS,
    calls,
    calls_per_s: round(callsPerS, 2),
    bound_calls_per_s: round(bound, 2),
    utilization: round(callsPerS / bound, 4),
    max_in_flight: maxInFlight,
    errors: results.reduce((n, r) => n + r.errors, 0),
    acquire_p50_ms: overhead.acquire.p50_ms,
    acquire_p99_ms: overhead.acquire.p99_ms,
    release_p50_ms: overhead.release.p50_ms,
    release_p99_ms: overhead.release.p99_ms,
    under_load: {
      permit_wait_p50_ms: wait.p50_ms,
      permit_wait_p99_ms: wait.p99_ms,
      held_p50_ms: held.p50_ms,
      held_p99_ms: held.p99_ms,
      release_p50_ms: release.p50_ms,
      release_p99_ms: release.p99_ms,
      chat_p50_ms: chat.p50_ms,
      chat_p99_ms: chat.p99_ms,
    },
    diagnostics: {
      kv_occupancy: round(occupancy.mean, 4),
      free_while_queued: round(occupancy.freeWhileQueued, 4),
      pool_writes_per_call: round(occupancy.writes / Math.max(1, calls), 3),
      cas_attempts_per_call: perCall((r) => r.kv.updates),
      cas_conflicts_per_call: perCall((r) => r.kv.conflicts),
      reloads_per_call: perCall((r) => r.kv.gets),
      cas_p50_ms: cas.p50_ms,
      cas_p99_ms: cas.p99_ms,
      watch_lag_p50_ms: lag.p50_ms,
      watch_lag_p99_ms: lag.p99_ms,
      cpu_cores_workers: round(results.reduce((n, r) => n + r.cpuMs, 0) / (o.durationS * 1000), 2),
      cpu_cores_nats_server: cpu.natsServerMs === null ? null : round(cpu.natsServerMs / (o.durationS * 1000), 2),
      cpu_cores_bench_and_model: round(cpu.benchMs / (o.durationS * 1000), 2),
    },
  };
}
