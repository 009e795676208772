/**
 * The one seam between long-term memory and where its vectors live. Every method takes the
 * user id first: a store is partitioned per user by construction, so there is no call that can
 * look across users (the embedded store keeps one index per user; Qdrant filters on a tenant
 * payload index). Implementations: EmbeddedVectorStore (usearch HNSW + files on disk, default,
 * one replica) and QdrantVectorStore (QDRANT_URL, any number of replicas).
 */

import type { MemoryProvenance } from '@hermes/contracts';

export type MemoryType = 'preference' | 'fact' | 'task_progress' | 'correction';
/** `archived` records are in cold storage: kept, restorable, but not in the index. */
export type MemoryStatus = 'active' | 'superseded' | 'deleted' | 'archived';

export interface MemoryRecord {
  memory_id: string;
  user_id: string;
  type: MemoryType;
  content: string;
  confidence: number;
  status: MemoryStatus;
  /** ISO times. */
  created_at: string;
  updated_at: string;
  /** Last time recall returned it; drives archival. */
  last_recalled_at?: string;
  superseded_by?: string;
  /** Where it came from, for people reading the memory later. */
  source?: { session_id?: string; task_id?: string; message_ids?: string[] };
  /** How it came to be written (conversation, model, tool result); absent in records written before it was kept. */
  provenance?: MemoryProvenance;
}

export interface VectorHit {
  record: MemoryRecord;
  /** Cosine similarity in [-1, 1]; higher is closer. */
  similarity: number;
}

/** The fields `update` may change: never the user, id, content or vector. */
export type MemoryRecordPatch = Partial<Pick<MemoryRecord, 'status' | 'superseded_by' | 'last_recalled_at' | 'updated_at'>>;

/** One record with its embedding, for bulk writes. */
export interface RecordWithVector {
  record: MemoryRecord;
  vector: Float32Array;
}

export interface VectorStore {
  /** Length of every vector this store takes (the embedder's); any other length is refused. */
  readonly dimensions: number;
  /** Creates collections / directories; idempotent. */
  init(): Promise<void>;
  /** Inserts or replaces a record and its vector (same memory_id → replaced: writes are retried). */
  upsert(record: MemoryRecord, vector: Float32Array): Promise<void>;
  /** `upsert` for many records at once (one write and one index batch: imports, benchmarks). */
  upsertMany(items: RecordWithVector[]): Promise<void>;
  /** Nearest `active` records of one user, best first. */
  search(userId: string, vector: Float32Array, limit: number): Promise<VectorHit[]>;
  get(userId: string, memoryId: string): Promise<MemoryRecord | undefined>;
  /** All records of a user, any status, newest first (for listing and archival sweeps). */
  list(userId: string, opts?: { status?: MemoryStatus; limit?: number }): Promise<MemoryRecord[]>;
  /** Changes status fields of a record; an `active` record leaving that status leaves the index. */
  update(userId: string, memoryId: string, patch: MemoryRecordPatch): Promise<MemoryRecord | undefined>;
  /**
   * Removes one record and its vector (forgetting one memory), from disk too, not just from
   * recall; false when the user has no record under that id.
   */
  remove(userId: string, memoryId: string): Promise<boolean>;
  /** Removes every record and vector of a user (forgetting); returns how many were removed. */
  purgeUser(userId: string): Promise<number>;
  close(): Promise<void>;
}
