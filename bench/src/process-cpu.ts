import { processCpuMs } from './cpu-sampler.js';

/** CPU time (ms) used by each named process between `start()` and `stop()`, summed over many spans. */
export class ProcessCpu {
  private readonly totals = new Map<string, number>();
  private started?: Map<string, number>;

  /** `self` counts this process; the others are read from /proc (Linux only: elsewhere they stay empty). */
  constructor(
    private readonly pids: () => Record<string, number>,
    private readonly self?: string,
  ) {}

  start(): void {
    this.started = this.read();
  }

  stop(): void {
    const now = this.read();
    for (const [name, ms] of now) {
      const before = this.started?.get(name);
      if (before !== undefined) this.totals.set(name, (this.totals.get(name) ?? 0) + ms - before);
    }
    this.started = undefined;
  }

  /** Per process and in total, divided by `per` (e.g. the steps measured); undefined where nothing was read. */
  per(per: number): Record<string, number> | undefined {
    if (this.totals.size === 0) return undefined;
    const out: Record<string, number> = {};
    let total = 0;
    for (const [name, ms] of [...this.totals].sort((a, b) => b[1] - a[1])) {
      out[name] = Math.round((ms / per) * 1000) / 1000;
      total += ms;
    }
    out['total'] = Math.round((total / per) * 1000) / 1000;
    return out;
  }

  private read(): Map<string, number> {
    const out = new Map<string, number>();
    if (this.self) {
      const u = process.cpuUsage();
      out.set(this.self, (u.user + u.system) / 1000);
    }
    for (const [name, pid] of Object.entries(this.pids())) {
      const ms = processCpuMs(pid);
      if (ms !== undefined) out.set(name, ms);
    }
    return out;
  }
}
