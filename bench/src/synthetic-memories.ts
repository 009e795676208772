/**
 * Deterministic stand-ins for a user's long-term memories and for recall queries: short
 * sentences over a Zipf-distributed vocabulary (a few words are common, most are rare, as in
 * real notes), and queries that reuse some words of one memory plus a stray one, as a
 * paraphrase would. Seeded, so every run indexes the same data.
 */
export class SyntheticMemories {
  private readonly random: () => number;
  private readonly vocabulary: string[];
  private readonly cumulative: number[];

  constructor(opts: { seed: number; vocabularySize?: number }) {
    this.random = mulberry32(opts.seed);
    const size = opts.vocabularySize ?? 5000;
    this.vocabulary = Array.from({ length: size }, () => this.word());
    let total = 0;
    this.cumulative = this.vocabulary.map((_, rank) => (total += 1 / (rank + 1)));
  }

  /** A memory of 6 to 12 words. */
  memory(): string {
    const length = 6 + Math.floor(this.random() * 7);
    return Array.from({ length }, () => this.pick()).join(' ');
  }

  /** A query built from `memory`: three to five of its words in a new order, and one unrelated word. */
  paraphrase(memory: string): string {
    const words = memory.split(' ');
    const keep = Math.min(words.length, 3 + Math.floor(this.random() * 3));
    // Fisher–Yates with the seeded generator: a new word order, the same every run.
    for (let i = words.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [words[i], words[j]] = [words[j]!, words[i]!];
    }
    const chosen = words.slice(0, keep);
    return [...chosen, this.pick()].join(' ');
  }

  /** A random index below `n`. */
  index(n: number): number {
    return Math.floor(this.random() * n);
  }

  private pick(): string {
    const target = this.random() * this.cumulative.at(-1)!;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return this.vocabulary[lo]!;
  }

  private word(): string {
    const syllables = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'pel', 'dri', 'sun', 'ga', 'the', 'or', 'ix', 'bre', 'nu', 'cal'];
    const n = 1 + Math.floor(this.random() * 3);
    return Array.from({ length: n }, () => syllables[Math.floor(this.random() * syllables.length)]).join('');
  }
}

/** A small, fast, seedable PRNG (Mulberry32): Math.random cannot be seeded. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
