/**
 * Turns texts into vectors for the long-term store. Every vector of one embedder has the same
 * length, `dimensions`, which fixes the store's dimension; `name` says which embedder wrote a
 * store (vectors of two embedders are never comparable).
 */
export interface Embedder {
  readonly name: string;
  readonly dimensions: number;
  /** One vector per text, in the same order. */
  embed(texts: string[]): Promise<Float32Array[]>;
}
