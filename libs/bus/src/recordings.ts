import { contracts, validate, RecordingEntry, DEFAULT_TEAM } from '@hermes/contracts';
import type { Bus } from './bus.js';
import { natsHandles } from './bus.js';
import { replaySubject } from './subject-replay.js';

/** Appends one entry to its task's recording, on the owner's subject (the stream must exist: the runtime declares it). */
export async function appendRecording(bus: Bus, entry: RecordingEntry): Promise<void> {
  await bus.publish(contracts.recordings, entry, { subject: bus.subjects.recording(entry.team ?? DEFAULT_TEAM, entry.user_id, entry.task_id) });
}

/**
 * A task's recording, in the order it was written; entries that fail their schema (written by
 * another release, say) are left out rather than failing the read. Empty when nothing was
 * recorded, the task aged out or the stream does not exist.
 */
export async function readRecording(bus: Bus, taskId: string, o: { signal?: AbortSignal } = {}): Promise<RecordingEntry[]> {
  const stored = await replaySubject(bus, { stream: bus.subjects.streams.recordings, subject: bus.subjects.recordingOfTask(taskId), ...o });
  return stored.flatMap(({ value }) => (validate(RecordingEntry, value).ok ? [value as RecordingEntry] : []));
}

/** Deletes every recording of one user (forgetting them); how many entries went. Idempotent; no stream, nothing to delete. */
export async function purgeUserRecordings(bus: Bus, owner: { team?: string | undefined; user_id: string }): Promise<number> {
  try {
    const r = await natsHandles(bus).jsm.streams.purge(bus.subjects.streams.recordings, {
      filter: bus.subjects.recordingsOfUser(owner.team ?? DEFAULT_TEAM, owner.user_id),
    });
    return r.purged;
  } catch (err) {
    if ((err as Error).name === 'StreamNotFoundError') return 0;
    throw err;
  }
}
