// The long-term stores and embedders, as other packages (the benchmarks) may use them:
// `@hermes/memory/longterm`. The service itself imports the modules directly.
export { EmbeddedVectorStore } from './embedded-vector-store.js';
export type { EmbeddedVectorStoreOptions } from './embedded-vector-store.js';
export { QdrantVectorStore } from './qdrant-vector-store.js';
export type { QdrantVectorStoreOptions } from './qdrant-vector-store.js';
export { HashingEmbedder } from './hashing-embedder.js';
export type { HashingEmbedderOptions } from './hashing-embedder.js';
export { LlmEmbedder } from './llm-embedder.js';
export type { LlmEmbedderOptions } from './llm-embedder.js';
export type { Embedder } from './embedder.js';
export { createEmbedder, createVectorStore, longTermStoreSettings } from './longterm-stores.js';
export type { LongTermStoreConfig } from './longterm-stores.js';
export type { MemoryRecord, MemoryRecordPatch, MemoryStatus, MemoryType, RecordWithVector, VectorHit, VectorStore } from './vector-store.js';
export { EmbedderAnswerError, InvalidVectorError, VectorDimensionError, VectorStoreCorruptError, VectorStoreUnavailableError } from './vector-store-errors.js';
