import { randomBytes } from 'node:crypto';

/**
 * Seeded pseudo-randomness (mulberry32) for everything a test may want to replay: ids, MACs, addresses, VNIs,
 * injected error rolls. Secrets (passwords, tokens) never come from here; they use `node:crypto`.
 */
export class SeededRandom {
  #state: number;

  constructor(seed?: number) {
    this.#state = (seed ?? randomBytes(4).readUInt32LE(0)) >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A bigint in [0, n). */
  bigint(n: bigint): bigint {
    if (n <= 0n) return 0n;
    let value = 0n;
    // Enough 32-bit draws to cover n, then reduce; the tiny modulo bias is irrelevant for a simulator.
    for (let bits = 0n; 1n << bits < n * 2n; bits += 32n)
      value = (value << 32n) | BigInt(Math.floor(this.next() * 4294967296));
    return value % n;
  }

  /** `count` lower-case hex digits. */
  hex(count: number): string {
    let out = '';
    while (out.length < count)
      out += Math.floor(this.next() * 4294967296)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, count);
  }

  /** A random (version 4) UUID, the shape Neutron and Octavia ids have. */
  uuid(): string {
    const h = this.hex(32);
    const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

/** A secret that must not be guessable from the seed (passwords, tokens, application credential secrets). */
export function secretString(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}
