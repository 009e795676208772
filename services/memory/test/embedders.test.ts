import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmClient, type RoleEndpoint } from '@hermes/llm';
import { EmbeddedVectorStore } from '../src/longterm/embedded-vector-store.js';
import { HashingEmbedder } from '../src/longterm/hashing-embedder.js';
import { LlmEmbedder } from '../src/longterm/llm-embedder.js';
import { createEmbedder, createVectorStore } from '../src/longterm/longterm-stores.js';
import { pointId } from '../src/longterm/qdrant-vector-store.js';
import { QdrantVectorStore } from '../src/longterm/qdrant-vector-store.js';

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

describe('HashingEmbedder', () => {
  const embedder = new HashingEmbedder();

  it('is deterministic and returns unit vectors of its dimension', async () => {
    const [a, b] = await embedder.embed(['The user prefers dark mode', 'The user prefers dark mode']);
    expect(a).toHaveLength(256);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(Math.hypot(...a!)).toBeCloseTo(1, 5);
    expect(embedder.name).toBe('hashing-v1-256');
  });

  // Each case: a stored memory, a paraphrase sharing some of its words, and unrelated texts.
  const cases = [
    {
      memory: 'The user prefers answers in French',
      paraphrase: 'Answer the user in French, which they prefer',
      unrelated: ['The deployment runs on Kubernetes in eu-west-1', 'Their cat is called Miso and is three years old'],
    },
    {
      memory: 'Deadline for the quarterly report is Friday 14 March',
      paraphrase: 'quarterly report deadline: Friday',
      unrelated: ['The user prefers answers in French', 'Use tabs, not spaces, in Go code'],
    },
    {
      memory: 'The user is allergic to peanuts',
      paraphrase: 'peanut allergy',
      unrelated: ['Deadline for the quarterly report is Friday 14 March', 'The production database is PostgreSQL 16'],
    },
  ];

  for (const c of cases) {
    it(`a paraphrase sharing words scores higher than unrelated text: "${c.paraphrase}"`, async () => {
      const [memory, paraphrase, ...unrelated] = await embedder.embed([c.memory, c.paraphrase, ...c.unrelated]);
      const related = cosine(memory!, paraphrase!);
      for (const other of unrelated) expect(related).toBeGreaterThan(cosine(other!, paraphrase!) + 0.1);
    });
  }

  it('recalls the paraphrased memory first from a store holding many others', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hermes-hashing-'));
    const store = new EmbeddedVectorStore({ dataDir: dir, dimensions: embedder.dimensions, durable: false });
    try {
      const memories = [...new Set(cases.flatMap((c) => [c.memory, ...c.unrelated]))];
      const vectors = await embedder.embed(memories);
      const now = new Date().toISOString();
      await store.upsertMany(
        memories.map((content, i) => ({
          record: { memory_id: `m${i}`, user_id: 'u1', type: 'fact', content, confidence: 1, status: 'active', created_at: now, updated_at: now },
          vector: vectors[i]!,
        })),
      );
      for (const c of cases) {
        const [query] = await embedder.embed([c.paraphrase]);
        const [best] = await store.search('u1', query!, 3);
        expect(best?.record.content).toBe(c.memory);
      }
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an empty text is the zero vector (similar to nothing)', async () => {
    const [empty] = await embedder.embed(['  ... ']);
    expect(empty!.every((x) => x === 0)).toBe(true);
  });
});

/** A minimal OpenAI-compatible embeddings endpoint: vector i of a request is [len(text), i, 1, 0...]. */
function embeddingsServer(dimensions: number, requests: string[][]): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const { input, encoding_format } = JSON.parse(body) as { input: string[]; encoding_format?: string };
      requests.push(input);
      const data = input.map((text, index) => {
        const embedding = new Array<number>(dimensions).fill(0);
        embedding[0] = text.length;
        embedding[1] = index;
        embedding[2] = 1;
        // The openai SDK asks for base64 (little-endian float32) unless told otherwise, as OpenAI serves it.
        const encoded = encoding_format === 'base64' ? Buffer.from(new Float32Array(embedding).buffer).toString('base64') : embedding;
        return { object: 'embedding', index, embedding: encoded };
      });
      // Answered out of order: the client must put them back in input order.
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ object: 'list', model: 'test-embed', data: data.reverse(), usage: { prompt_tokens: 1, total_tokens: 1 } }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('LlmEmbedder', () => {
  let server: Server;
  const requests: string[][] = [];
  let llm: LlmClient;

  beforeAll(async () => {
    server = await embeddingsServer(8, requests);
    const endpoint: RoleEndpoint = { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, apiKey: 'test', model: 'test-embed' };
    llm = new LlmClient({ roles: { worker: endpoint, planner: endpoint, summarizer: endpoint, embedder: endpoint }, maxRetries: 0 });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('embeds through the LLM client in batches and keeps the input order', async () => {
    requests.length = 0;
    const embedder = new LlmEmbedder({ llm, dimensions: 8, batchSize: 2 });
    const vectors = await embedder.embed(['a', 'bb', 'ccc']);
    expect(requests).toEqual([['a', 'bb'], ['ccc']]);
    expect(vectors.map((v) => v[0])).toEqual([1, 2, 3]);
    expect(vectors[0]).toBeInstanceOf(Float32Array);
    expect(embedder.name).toBe('llm:test-embed');
  });

  it('refuses vectors of another length than configured', async () => {
    const embedder = new LlmEmbedder({ llm, dimensions: 16 });
    await expect(embedder.embed(['a'])).rejects.toMatchObject({ code: 'vector_dimension_mismatch', expected: 16, actual: 8 });
  });
});

describe('createEmbedder / createVectorStore', () => {
  const llm = { embed: async () => [], modelFor: () => 'text-embedding-3-small' };
  const storeConfig = { MEMORY_DATA_DIR: join(tmpdir(), 'unused'), QDRANT_COLLECTION: 'hermes_memories' };

  it('defaults to the hashing embedder at 256 dimensions and the embedded store of that size', () => {
    const embedder = createEmbedder({ MEMORY_EMBEDDER: 'hashing' }, llm);
    expect(embedder.name).toBe('hashing-v1-256');
    const store = createVectorStore(storeConfig, embedder);
    expect(store).toBeInstanceOf(EmbeddedVectorStore);
    expect(store.dimensions).toBe(256);
  });

  it('MEMORY_EMBEDDER=llm uses the embedding model, 1536 dimensions unless set', () => {
    expect(createEmbedder({ MEMORY_EMBEDDER: 'llm' }, llm)).toMatchObject({ name: 'llm:text-embedding-3-small', dimensions: 1536 });
    expect(createEmbedder({ MEMORY_EMBEDDER: 'llm', MEMORY_EMBEDDING_DIMENSIONS: 512 }, llm).dimensions).toBe(512);
  });

  it('QDRANT_URL selects the Qdrant store', () => {
    const store = createVectorStore({ ...storeConfig, QDRANT_URL: 'http://127.0.0.1:6333' }, { dimensions: 64 });
    expect(store).toBeInstanceOf(QdrantVectorStore);
    expect(store.dimensions).toBe(64);
  });
});

describe('Qdrant point ids', () => {
  it('are stable UUIDs per (user, memory) and differ between users', () => {
    const id = pointId('u1', 'm1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pointId('u1', 'm1')).toBe(id);
    expect(pointId('u2', 'm1')).not.toBe(id);
    expect(pointId('u1', 'm2')).not.toBe(id);
  });
});
