import type { KV } from '@nats-io/kv';

/** How full the pool was, from its stored states: the semaphore's own view of the cap. */
export interface Occupancy {
  /** Time-weighted mean of holders / capacity over the window. */
  mean: number;
  /** Share of the window with a permit free while someone was queued: time lost between a release and the next grant. */
  freeWhileQueued: number;
  /** Pool writes in the window. */
  writes: number;
}

interface Sample {
  at: number;
  holders: number;
  waiters: number;
}

/** Watches one pool key and, once stopped, integrates its holder count over a window. */
export async function watchOccupancy(kv: KV, key: string): Promise<{ stop(window: { windowStart: number; windowEnd: number }, capacity: number): Occupancy }> {
  const samples: Sample[] = [];
  const iter = await kv.watch({ key });
  const done = (async () => {
    for await (const e of iter) {
      if (e.operation !== 'PUT') continue;
      const s = e.json<{ holders: Record<string, unknown>; waiters: unknown[] }>();
      samples.push({ at: e.created.getTime(), holders: Object.keys(s.holders).length, waiters: s.waiters.length });
    }
  })();
  return {
    stop(w, capacity) {
      iter.stop();
      void done;
      let held = 0;
      let lost = 0;
      let writes = 0;
      for (const [i, s] of samples.entries()) {
        const from = Math.max(s.at, w.windowStart);
        const to = Math.min(samples[i + 1]?.at ?? w.windowEnd, w.windowEnd);
        if (s.at >= w.windowStart && s.at < w.windowEnd) writes++;
        if (to <= from) continue;
        held += s.holders * (to - from);
        if (s.holders < capacity && s.waiters > 0) lost += to - from;
      }
      const span = w.windowEnd - w.windowStart;
      return { mean: held / (capacity * span), freeWhileQueued: lost / span, writes };
    },
  };
}
