import { deepFreeze } from './readonly.ts';

/**
 * Shares equal strings, equal lists of strings and equal small values. Every id a JSON body carries is a string of its own: each pod
 * port Raven records repeats its network's, subnet's and security groups' ids (about 64 bytes each), each pod's
 * groups repeat the groups' keys. Interned, thousands of copies become one. Cleared when it holds more than `max`
 * values, so ids of what was deleted are not kept forever: clearing ends only the sharing of what came before.
 */
export class StringPool {
  readonly #strings = new Map<string, string>();
  readonly #lists = new Map<string, readonly string[]>();
  readonly #values = new Map<string, unknown>();

  constructor(readonly max = 10_000) {}

  intern(value: string): string {
    const held = this.#strings.get(value);
    if (held !== undefined) return held;
    if (this.#strings.size >= this.max) this.#strings.clear();
    this.#strings.set(value, value);
    return value;
  }

  /** One frozen list shared by every equal list (same strings, same order), its strings interned. */
  list(values: readonly string[]): readonly string[] {
    const key = JSON.stringify(values);
    const held = this.#lists.get(key);
    if (held !== undefined) return held;
    if (this.#lists.size >= this.max) this.#lists.clear();
    const list = Object.freeze(values.map((v) => this.intern(v)));
    this.#lists.set(key, list);
    return list;
  }

  /**
   * One deep-frozen value shared by every equal one (equal JSON text): the pods of one template carry equal labels and
   * named ports. The value handed in is frozen and kept when it is the first of its kind.
   */
  value<T extends object>(value: T): T {
    const key = JSON.stringify(value);
    const held = this.#values.get(key);
    if (held !== undefined) return held as T;
    if (this.#values.size >= this.max) this.#values.clear();
    deepFreeze(value);
    this.#values.set(key, value);
    return value;
  }
}
