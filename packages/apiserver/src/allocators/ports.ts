/**
 * Node ports from a range such as `30000-32767`, as pkg/registry/core/service/portallocator hands them out:
 * dynamic picks from above a low static band first, so ports users ask for explicitly rarely collide.
 */
import { RavenError } from '../../../../src/core/index.ts';
import { OffsetBitmap, staticBandSize } from './bitmap.ts';

/**
 * Allocates ports from one inclusive range.
 * @example
 * const ports = new PortAllocator('30000-32767');
 * ports.allocate(30080);
 * ports.allocateNext(); // e.g. 30086
 */
export class PortAllocator {
  /** The range as upstream prints it: `base-max`. */
  readonly range: string;
  /** The first port of the range. */
  readonly base: number;
  #bits: OffsetBitmap;

  /**
   * @param range `A-B` (inclusive) or a single port `A`, within 1..65535
   * @throws RavenError `PORT_RANGE_INVALID`.
   */
  constructor(range: string) {
    const m = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?$/.exec(range);
    const low = m ? Number(m[1]) : NaN;
    const high = m?.[2] !== undefined ? Number(m[2]) : low;
    if (!m || low < 1 || high > 65535) {
      throw new RavenError(
        'PORT_RANGE_INVALID',
        `invalid port range "${range}": expected "<first>-<last>" with ports in 1-65535`,
      );
    }
    if (high < low)
      throw new RavenError(
        'PORT_RANGE_INVALID',
        `invalid port range "${range}": end port cannot be less than start port`,
      );
    this.base = low;
    this.range = `${low}-${high}`;
    const size = high - low + 1;
    this.#bits = new OffsetBitmap(size, staticBandSize(size, 16, 128, 32));
  }

  /** How many ports the range holds. */
  size(): number {
    return this.#bits.size;
  }

  /** How many ports are allocated. */
  used(): number {
    return this.#bits.count;
  }

  #offsetOf(port: number): number | undefined {
    const offset = port - this.base;
    return Number.isInteger(offset) && offset >= 0 && offset < this.#bits.size ? offset : undefined;
  }

  /** True when `port` is allocated. */
  has(port: number): boolean {
    const offset = this.#offsetOf(port);
    return offset !== undefined && this.#bits.has(offset);
  }

  /**
   * Takes a specific port.
   * @throws RavenError `PORT_OUT_OF_RANGE` or `PORT_ALLOCATED`.
   */
  allocate(port: number): void {
    const offset = this.#offsetOf(port);
    if (offset === undefined) {
      throw new RavenError(
        'PORT_OUT_OF_RANGE',
        `provided port is not in the valid range. The range of valid ports is ${this.range}`,
      );
    }
    if (!this.#bits.add(offset)) throw new RavenError('PORT_ALLOCATED', 'provided port is already allocated');
  }

  /**
   * Takes a free port, from above the static band first.
   * @throws RavenError `PORT_RANGE_FULL`.
   */
  allocateNext(): number {
    const offset = this.#bits.next();
    if (offset === undefined) throw new RavenError('PORT_RANGE_FULL', 'range is full');
    return this.base + offset;
  }

  /** Gives a port back; false (and nothing happens) when it was not allocated or is out of range. */
  release(port: number): boolean {
    const offset = this.#offsetOf(port);
    return offset !== undefined && this.#bits.delete(offset);
  }
}
