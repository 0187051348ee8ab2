/**
 * The allocation state both allocators share: one bit per offset (128 KiB for a /12), a moving cursor for dynamic
 * picks, and upstream's split of a range into a low "static" band (kept for callers who ask for a specific value)
 * and the rest, which dynamic allocation uses first.
 */

const FULL_WORD = 0xffffffff;

/**
 * Upstream's static band size: `min(max(lo, size/step), hi)`, or 0 for ranges of `lo` or fewer
 * (ipallocator and portallocator calculateRangeOffset).
 */
export function staticBandSize(rangeSize: number, lo: number, hi: number, step: number): number {
  if (rangeSize <= lo) return 0;
  return Math.min(Math.max(lo, Math.floor(rangeSize / step)), hi);
}

/** A set of offsets in `[0, size)` with O(1) membership and amortised O(1) "next free". */
export class OffsetBitmap {
  /** Number of offsets: `[0, size)`. */
  readonly size: number;
  #words: Uint32Array;
  #count = 0;
  #dynamicStart: number;
  #cursor: number;
  #reserved: ReadonlySet<number>;

  /**
   * @param size number of offsets
   * @param dynamicStart first offset of the dynamic band; `next()` searches it first, then `[0, dynamicStart)`
   * @param reserved offsets `next()` never returns (they can still be taken with `add`)
   */
  constructor(size: number, dynamicStart = 0, reserved: Iterable<number> = []) {
    this.size = size;
    this.#words = new Uint32Array(Math.ceil(size / 32));
    this.#dynamicStart = Math.min(dynamicStart, size);
    this.#cursor = this.#dynamicStart;
    this.#reserved = new Set(reserved);
  }

  /** How many offsets are taken. */
  get count(): number {
    return this.#count;
  }

  /** True when `offset` is taken. */
  has(offset: number): boolean {
    return ((this.#words[offset >>> 5] ?? 0) & (1 << (offset & 31))) !== 0;
  }

  /** Takes an offset; false when it was already taken. */
  add(offset: number): boolean {
    if (this.has(offset)) return false;
    const i = offset >>> 5;
    this.#words[i] = (this.#words[i] ?? 0) | (1 << (offset & 31));
    this.#count++;
    return true;
  }

  /** Frees an offset; false when it was not taken. */
  delete(offset: number): boolean {
    if (!this.has(offset)) return false;
    const i = offset >>> 5;
    this.#words[i] = (this.#words[i] ?? 0) & ~(1 << (offset & 31));
    this.#count--;
    return true;
  }

  /** The first free, unreserved offset in `[from, to)`, skipping full 32-bit words at once. */
  #scan(from: number, to: number): number | undefined {
    let offset = from;
    while (offset < to) {
      if ((offset & 31) === 0 && this.#words[offset >>> 5] === FULL_WORD) {
        offset += 32;
        continue;
      }
      if (!this.has(offset) && !this.#reserved.has(offset)) return offset;
      offset++;
    }
    return undefined;
  }

  /**
   * Takes and returns a free offset: from the cursor to the end of the dynamic band, then its start, then the static
   * band. Moving on from the last pick (rather than reusing the lowest hole) keeps a just-freed value out of
   * circulation for as long as possible, which is what upstream's random pick is for.
   */
  next(): number | undefined {
    const found =
      this.#scan(this.#cursor, this.size) ??
      this.#scan(this.#dynamicStart, this.#cursor) ??
      this.#scan(0, this.#dynamicStart);
    if (found === undefined) return undefined;
    this.add(found);
    if (found >= this.#dynamicStart) this.#cursor = found + 1 >= this.size ? this.#dynamicStart : found + 1;
    return found;
  }
}
