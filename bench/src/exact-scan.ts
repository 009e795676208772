/**
 * The baseline the embedded store is compared with: every vector in one Float32Array, a full
 * cosine scan per query (vectors are unit length, so a dot product) and a top-k selection.
 * Exact, with no index to build, but linear in the number of memories.
 */
export class ExactScan {
  private readonly matrix: Float32Array;
  private count = 0;

  constructor(
    private readonly dimensions: number,
    capacity: number,
  ) {
    this.matrix = new Float32Array(dimensions * capacity);
  }

  add(vector: Float32Array): number {
    this.matrix.set(vector, this.count * this.dimensions);
    return this.count++;
  }

  /** Row numbers of the `k` most similar vectors, best first. */
  search(query: Float32Array, k: number): number[] {
    const d = this.dimensions;
    const best: { row: number; score: number }[] = [];
    for (let row = 0; row < this.count; row++) {
      let dot = 0;
      const base = row * d;
      for (let i = 0; i < d; i++) dot += this.matrix[base + i]! * query[i]!;
      if (best.length < k || dot > best[best.length - 1]!.score) {
        // Insertion into a short sorted list: k is 10, cheaper than a heap.
        let at = best.length;
        while (at > 0 && best[at - 1]!.score < dot) at--;
        best.splice(at, 0, { row, score: dot });
        if (best.length > k) best.pop();
      }
    }
    return best.map((b) => b.row);
  }
}
