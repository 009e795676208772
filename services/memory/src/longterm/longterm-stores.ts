import { Type, type Static } from '@sinclair/typebox';
import type { LlmClient } from '@hermes/llm';
import type { Embedder } from './embedder.js';
import { EmbeddedVectorStore } from './embedded-vector-store.js';
import { HashingEmbedder } from './hashing-embedder.js';
import { LlmEmbedder } from './llm-embedder.js';
import { QdrantVectorStore } from './qdrant-vector-store.js';
import type { VectorStore } from './vector-store.js';

/** Settings choosing the embedder and the vector store; spread into the memory service's settings. */
export const longTermStoreSettings = {
  MEMORY_EMBEDDER: Type.Union([Type.Literal('hashing'), Type.Literal('llm')], {
    default: 'hashing',
    description: 'hashing: offline feature hashing (no model, lower quality); llm: HERMES_MODEL_EMBEDDER through the LLM semaphore',
  }),
  MEMORY_EMBEDDING_DIMENSIONS: Type.Optional(
    Type.Integer({ minimum: 16, description: "length of the embedder's vectors (default 256 for hashing, 1536 for llm: text-embedding-3-small)" }),
  ),
  MEMORY_DATA_DIR: Type.String({ default: './data/memory', description: 'directory of the embedded vector store (one replica owns it)' }),
  QDRANT_URL: Type.Optional(Type.String({ description: 'when set, long-term memory lives in this Qdrant instead of the embedded store' })),
  QDRANT_API_KEY: Type.Optional(Type.String({ description: 'API key for QDRANT_URL' })),
  QDRANT_COLLECTION: Type.String({ default: 'hermes_memories', description: 'the one Qdrant collection holding every user (user_id is a tenant index)' }),
};

export type LongTermStoreConfig = Static<ReturnType<typeof Type.Object<typeof longTermStoreSettings>>>;

/** Default vector lengths when MEMORY_EMBEDDING_DIMENSIONS is not set. */
const DEFAULT_DIMENSIONS = { hashing: 256, llm: 1536 } as const;

/**
 * The embedder the settings ask for. `llm` is opt-in: a default model name is always configured,
 * so its presence cannot tell whether an embedding endpoint really exists.
 */
export function createEmbedder(
  config: Pick<LongTermStoreConfig, 'MEMORY_EMBEDDER' | 'MEMORY_EMBEDDING_DIMENSIONS'>,
  llm: Pick<LlmClient, 'embed' | 'modelFor'>,
): Embedder {
  const dimensions = config.MEMORY_EMBEDDING_DIMENSIONS ?? DEFAULT_DIMENSIONS[config.MEMORY_EMBEDDER];
  return config.MEMORY_EMBEDDER === 'llm' ? new LlmEmbedder({ llm, dimensions }) : new HashingEmbedder({ dimensions });
}

/** Qdrant when QDRANT_URL is set, else the embedded store; sized by the embedder. Call `init()` before serving. */
export function createVectorStore(
  config: Omit<LongTermStoreConfig, 'MEMORY_EMBEDDER' | 'MEMORY_EMBEDDING_DIMENSIONS'>,
  embedder: Pick<Embedder, 'dimensions'>,
): VectorStore {
  if (config.QDRANT_URL) {
    return new QdrantVectorStore({
      url: config.QDRANT_URL,
      collection: config.QDRANT_COLLECTION,
      dimensions: embedder.dimensions,
      ...(config.QDRANT_API_KEY ? { apiKey: config.QDRANT_API_KEY } : {}),
    });
  }
  return new EmbeddedVectorStore({ dataDir: config.MEMORY_DATA_DIR, dimensions: embedder.dimensions });
}
