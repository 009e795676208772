import type { Bus } from './bus.js';
import { followSubject } from './event-follower.js';

/** Give up on a replay that stops delivering before it reaches the last message (it aged out meanwhile). */
const IDLE_STOP_MS = 2000;

/**
 * Every message stored on one subject of a stream (after `afterSeq`, when given), in order, up to
 * the latest one at the time of asking (a live subject is not followed). Empty when the subject
 * holds nothing; a missing stream is passed to `onMissingStream` to say what is wrong.
 */
export async function replaySubject(
  bus: Bus,
  o: { stream: string; subject: string; afterSeq?: number; signal?: AbortSignal; onMissingStream?: (err: Error) => never },
): Promise<{ seq: number; value: unknown }[]> {
  const lastSeq = await lastSeqOf(bus, o);
  if (lastSeq === undefined || lastSeq <= (o.afterSeq ?? 0)) return [];
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), IDLE_STOP_MS);
  const signal = o.signal ? AbortSignal.any([o.signal, idle.signal]) : idle.signal;
  const out: { seq: number; value: unknown }[] = [];
  try {
    for await (const m of followSubject(bus, { stream: o.stream, subject: o.subject, signal, ...(o.afterSeq ? { afterSeq: o.afterSeq } : {}) })) {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(), IDLE_STOP_MS);
      out.push({ seq: m.seq, value: m.value });
      if (m.seq >= lastSeq) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return out;
}

/** The stream sequence of the subject's latest message (wildcards allowed), read first so the replay knows where to stop. */
export async function lastSeqOf(bus: Bus, o: { stream: string; subject: string; onMissingStream?: (err: Error) => never }): Promise<number | undefined> {
  try {
    const last = await bus.storedMessage(o.stream, { last_by_subj: o.subject });
    return last?.seq;
  } catch (err) {
    if ((err as Error).name !== 'StreamNotFoundError') throw err;
    o.onMissingStream?.(err as Error);
    return undefined;
  }
}
