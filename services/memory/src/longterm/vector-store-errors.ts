import { MemoryError } from '../memory-errors.js';

/**
 * A vector whose length is not the store's dimension: the embedder and the store disagree (a
 * changed embedding model, or data written by another one). The system's fault, not retryable:
 * mixing dimensions would make every similarity meaningless.
 */
export class VectorDimensionError extends MemoryError {
  readonly expected: number;
  readonly actual: number;
  constructor(opts: { expected: number; actual: number; where: string }) {
    super('vector_dimension_mismatch', `${opts.where}: vector has ${opts.actual} dimensions, the store takes ${opts.expected}`);
    this.expected = opts.expected;
    this.actual = opts.actual;
  }
}

/** A vector with NaN or infinite components (a broken embedder): cosine similarity is undefined. */
export class InvalidVectorError extends MemoryError {
  constructor(opts: { where: string }) {
    super('invalid_vector', `${opts.where}: vector has non-finite components`);
  }
}

/** An embedding model answered with a different number of vectors than texts sent: not retryable. */
export class EmbedderAnswerError extends MemoryError {
  constructor(opts: { embedder: string; sent: number; received: number }) {
    super('embedder_bad_answer', `${opts.embedder} returned ${opts.received} vectors for ${opts.sent} texts`);
  }
}

/** The vector store (disk or Qdrant) failed or could not be reached: retryable, mostly transient. */
export class VectorStoreUnavailableError extends MemoryError {
  readonly operation: string;
  constructor(opts: { store: string; operation: string }, options?: { cause?: unknown }) {
    const reason = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super('vector_store_unavailable', `${opts.store} vector store failed during ${opts.operation}${reason}`, options);
    this.operation = opts.operation;
  }
}

/** Stored data that cannot be read back (a damaged file): not retryable, needs a person. */
export class VectorStoreCorruptError extends MemoryError {
  readonly path: string;
  constructor(opts: { path: string; detail: string }, options?: { cause?: unknown }) {
    super('vector_store_corrupt', `${opts.path}: ${opts.detail}`, options);
    this.path = opts.path;
  }
}

/** Refuses a vector the store cannot hold; every write and query goes through it. */
export function checkVector(vector: Float32Array, dimensions: number, where: string): void {
  if (vector.length !== dimensions) throw new VectorDimensionError({ expected: dimensions, actual: vector.length, where });
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i])) throw new InvalidVectorError({ where });
  }
}
