import type { Embedder } from './embedder.js';

export interface HashingEmbedderOptions {
  /** Length of the vectors (default 256). More dimensions, fewer collisions between features. */
  dimensions?: number;
}

/** Words that occur in nearly every sentence: left out of word features so they do not make unrelated texts look alike. */
const STOPWORDS = new Set(
  'a an the and or but if of to in on at by for with from as is are was were be been being am i me my we our you your he she it its they them their this that these those do does did have has had not no so than then there here what which who whom will would can could should shall may might must'.split(
    ' ',
  ),
);

/** Weights of the three kinds of feature: whole words count most; trigrams catch inflections ("prefers" ~ "preferred"). */
const WORD_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.7;
const TRIGRAM_WEIGHT = 0.35;

/**
 * The offline fallback embedder: feature hashing, no model and no network. Each text becomes the
 * lowercased word unigrams and bigrams (stopwords left out) and the character trigrams of every
 * word, each hashed into one of `dimensions` buckets with a hashed sign (so collisions cancel
 * out on average instead of adding up), then L2-normalised.
 *
 * Lower quality than a real embedding model: it knows nothing of meaning, so "car" and
 * "automobile" are unrelated to it. But texts sharing words or word stems score clearly higher
 * than unrelated ones, which is enough for recall of paraphrases that reuse the user's words,
 * and it is deterministic, so tests and offline deployments behave the same everywhere.
 */
export class HashingEmbedder implements Embedder {
  readonly dimensions: number;
  readonly name: string;

  constructor(opts: HashingEmbedderOptions = {}) {
    this.dimensions = opts.dimensions ?? 256;
    if (!Number.isInteger(this.dimensions) || this.dimensions < 16)
      throw new RangeError(`dimensions must be an integer of at least 16, got ${this.dimensions}`);
    this.name = `hashing-v1-${this.dimensions}`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((text) => this.embedOne(text));
  }

  /** Synchronous form, for benchmarks and bulk imports. */
  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
    const content = words.filter((w) => !STOPWORDS.has(w));
    for (const word of content) this.add(vector, `w:${word}`, WORD_WEIGHT);
    for (let i = 1; i < content.length; i++) this.add(vector, `b:${content[i - 1]} ${content[i]}`, BIGRAM_WEIGHT);
    for (const word of words) {
      const padded = `^${word}$`;
      for (let i = 0; i + 3 <= padded.length; i++) this.add(vector, `c:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT);
    }
    normalise(vector);
    return vector;
  }

  private add(vector: Float32Array, feature: string, weight: number): void {
    const h = hash32(feature);
    vector[h % this.dimensions]! += h & 0x80000000 ? -weight : weight;
  }
}

/** FNV-1a over UTF-16 code units, then murmur3's finaliser so every bit depends on every input bit. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Scales to unit length; an empty text stays the zero vector (similar to nothing). */
function normalise(vector: Float32Array): void {
  let sum = 0;
  for (const x of vector) sum += x * x;
  if (sum === 0) return;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < vector.length; i++) vector[i]! *= inv;
}
