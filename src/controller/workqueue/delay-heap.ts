/** One key waiting in a {@link DelayHeap}. */
interface Entry {
  key: string;
  readyAt: number;
  /** Insertion order, so keys due at the same moment come out first-in first-out. */
  seq: number;
  index: number;
}

/**
 * A min-heap of keys by due time with at most one entry per key: client-go `delaying_queue.go`'s
 * `waitForPriorityQueue` plus its `knownEntries` map. Internal to the work queue.
 */
export class DelayHeap {
  #heap: Entry[] = [];
  readonly #byKey = new Map<string, Entry>();
  #seq = 0;

  get size(): number {
    return this.#heap.length;
  }

  /** Schedules `key` at `readyAt`, or moves it earlier if it is already scheduled later (never later). */
  insertEarliest(key: string, readyAt: number): void {
    const existing = this.#byKey.get(key);
    if (existing) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.#up(existing.index);
      }
      return;
    }
    const entry: Entry = { key, readyAt, seq: this.#seq++, index: this.#heap.length };
    this.#heap.push(entry);
    this.#byKey.set(key, entry);
    this.#up(entry.index);
  }

  /** The earliest due time, if any key is waiting. */
  peekReadyAt(): number | undefined {
    return this.#heap[0]?.readyAt;
  }

  /** Removes and returns the earliest key if it is due at or before `now`. */
  popReady(now: number): string | undefined {
    const top = this.#heap[0];
    if (!top || top.readyAt > now) return undefined;
    const last = this.#heap.pop()!;
    if (last !== top) {
      last.index = 0;
      this.#heap[0] = last;
      this.#down(0);
    }
    this.#byKey.delete(top.key);
    return top.key;
  }

  clear(): void {
    this.#heap = [];
    this.#byKey.clear();
  }

  #less(a: Entry, b: Entry): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  #swap(i: number, j: number): void {
    const a = this.#heap[i]!;
    const b = this.#heap[j]!;
    this.#heap[i] = b;
    this.#heap[j] = a;
    a.index = j;
    b.index = i;
  }

  #up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(this.#heap[i]!, this.#heap[parent]!)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const n = this.#heap.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < n && this.#less(this.#heap[l]!, this.#heap[min]!)) min = l;
      if (r < n && this.#less(this.#heap[r]!, this.#heap[min]!)) min = r;
      if (min === i) return;
      this.#swap(i, min);
      i = min;
    }
  }
}
