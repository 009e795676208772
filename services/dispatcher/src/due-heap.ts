/**
 * Due times by key, earliest first: a binary min-heap with one live entry per key. Rescheduling a
 * key leaves its old entry in the heap, skipped when it surfaces (cheaper than a decrease-key).
 */
export class DueHeap {
  private readonly heap: { at: number; key: string; gen: number }[] = [];
  private readonly live = new Map<string, { at: number; gen: number }>();
  private gen = 0;

  get size(): number {
    return this.live.size;
  }

  set(key: string, at: number): void {
    const gen = ++this.gen;
    this.live.set(key, { at, gen });
    this.heap.push({ at, key, gen });
    this.up(this.heap.length - 1);
  }

  delete(key: string): void {
    this.live.delete(key);
  }

  /** The earliest due time, or undefined when nothing is scheduled. */
  peek(): number | undefined {
    this.dropStale();
    return this.heap[0]?.at;
  }

  /** Removes and returns every key due at or before `now`, earliest first. */
  takeDue(now: number): string[] {
    const out: string[] = [];
    for (let top = this.peek(); top !== undefined && top <= now; top = this.peek()) {
      const { key } = this.pop();
      this.live.delete(key);
      out.push(key);
    }
    return out;
  }

  private dropStale(): void {
    while (this.heap.length && this.live.get(this.heap[0]!.key)?.gen !== this.heap[0]!.gen) this.pop();
  }

  private pop() {
    const top = this.heap[0]!;
    const last = this.heap.pop()!;
    if (this.heap.length) {
      this.heap[0] = last;
      this.down(0);
    }
    return top;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.heap[parent]!.at <= this.heap[i]!.at) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < this.heap.length && this.heap[l]!.at < this.heap[min]!.at) min = l;
      if (r < this.heap.length && this.heap[r]!.at < this.heap[min]!.at) min = r;
      if (min === i) return;
      this.swap(i, min);
      i = min;
    }
  }

  private swap(a: number, b: number): void {
    [this.heap[a], this.heap[b]] = [this.heap[b]!, this.heap[a]!];
  }
}
