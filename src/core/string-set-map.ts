/**
 * A map from a string to a set of strings that holds a set of one as the bare string. Most of the values an index of
 * Raven's holds name one object (a pod's uid, a port's device or name), and a `Set` of one costs about 150 bytes more
 * than the string it holds: 1.5 MB per such index at 10,000 pods (`npm run bench -- memory`).
 */
export class StringSetMap {
  readonly #map = new Map<string, string | Set<string>>();

  /** How many keys hold at least one member. */
  get size(): number {
    return this.#map.size;
  }

  add(key: string, member: string): void {
    const held = this.#map.get(key);
    if (held === undefined) this.#map.set(key, member);
    else if (typeof held === 'string') {
      if (held !== member) this.#map.set(key, new Set([held, member]));
    } else held.add(member);
  }

  delete(key: string, member: string): void {
    const held = this.#map.get(key);
    if (held === member) this.#map.delete(key);
    else if (typeof held === 'object' && held.delete(member) && held.size === 1)
      this.#map.set(key, held.values().next().value!);
  }

  /** The members of `key` (a copy), in the order they were added; none for an unknown key. */
  get(key: string): string[] {
    const held = this.#map.get(key);
    return held === undefined ? [] : typeof held === 'string' ? [held] : [...held];
  }

  /** The first member of `key` still held. */
  first(key: string): string | undefined {
    const held = this.#map.get(key);
    return typeof held === 'object' ? held.values().next().value : held;
  }

  keys(): string[] {
    return [...this.#map.keys()];
  }
}
