import { readFileSync } from 'node:fs';
import type { GoMessage } from './worker-protocol.js';

// Linux reports a process's CPU time in /proc/<pid>/stat in clock ticks, almost always 100 a second.
const TICKS_PER_S = 100;

/** CPU time (user + system, ms) of another process, or undefined where /proc is not available. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
  } catch {
    return undefined;
  }
}

export interface CpuSample {
  /** This process: the scripted model server and the bench's own watch. */
  benchMs: number;
  natsServerMs: number | null;
}

/** Measures the CPU this process and nats-server use between the window's start and end. */
export function sampleCpu(window: GoMessage, natsPid: number): Promise<CpuSample> {
  return new Promise((resolve) => {
    let self: NodeJS.CpuUsage | undefined;
    let nats: number | undefined;
    setTimeout(
      () => {
        self = process.cpuUsage();
        nats = processCpuMs(natsPid);
      },
      Math.max(0, window.windowStart - Date.now()),
    );
    setTimeout(
      () => {
        const used = process.cpuUsage(self);
        const natsNow = processCpuMs(natsPid);
        resolve({ benchMs: (used.user + used.system) / 1000, natsServerMs: nats !== undefined && natsNow !== undefined ? natsNow - nats : null });
      },
      Math.max(0, window.windowEnd - Date.now()),
    );
  });
}
