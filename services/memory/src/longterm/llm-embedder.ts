import type { LlmClient } from '@hermes/llm';
import type { Embedder } from './embedder.js';
import { checkVector, EmbedderAnswerError } from './vector-store-errors.js';

export interface LlmEmbedderOptions {
  /** The shared client: its `embed` uses the `embedder` role and takes a permit of the global semaphore. */
  llm: Pick<LlmClient, 'embed' | 'modelFor'>;
  /** Length of the model's vectors (text-embedding-3-small: 1536); any other answer is refused. */
  dimensions: number;
  /** Texts per request; providers cap a request's inputs (OpenAI: 2048). */
  batchSize?: number;
}

/** Embeddings from the configured embedding model (`HERMES_MODEL_EMBEDDER`) through `@hermes/llm`. */
export class LlmEmbedder implements Embedder {
  readonly name: string;
  readonly dimensions: number;
  private readonly batchSize: number;

  constructor(private readonly opts: LlmEmbedderOptions) {
    this.dimensions = opts.dimensions;
    this.batchSize = opts.batchSize ?? 256;
    this.name = `llm:${opts.llm.modelFor('embedder')}`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      const batch = texts.slice(start, start + this.batchSize);
      const answer = await this.opts.llm.embed(batch);
      // A short answer would pair the remaining texts with the wrong vectors.
      if (answer.length !== batch.length) throw new EmbedderAnswerError({ embedder: this.name, sent: batch.length, received: answer.length });
      for (const values of answer) {
        const vector = Float32Array.from(values);
        // A model swapped behind the same name must not poison the store with other-sized vectors.
        checkVector(vector, this.dimensions, this.name);
        out.push(vector);
      }
    }
    return out;
  }
}
