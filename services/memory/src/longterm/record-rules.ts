import type { MemoryRecord, MemoryRecordPatch } from './vector-store.js';

/** The order `list` promises: newest first, ties broken by id so pages are stable. */
export function newestFirst(a: MemoryRecord, b: MemoryRecord): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.memory_id < b.memory_id ? 1 : -1;
}

/** Only the fields `update` may change: a patch can never move a record to another user or id. */
export function pickPatch(patch: MemoryRecordPatch): MemoryRecordPatch {
  const out: MemoryRecordPatch = {};
  if (patch.status !== undefined) out.status = patch.status;
  if (patch.superseded_by !== undefined) out.superseded_by = patch.superseded_by;
  if (patch.last_recalled_at !== undefined) out.last_recalled_at = patch.last_recalled_at;
  if (patch.updated_at !== undefined) out.updated_at = patch.updated_at;
  return out;
}
