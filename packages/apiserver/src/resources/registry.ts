import { builtinResources } from './builtin.ts';
import type { ResourceDef } from './types.ts';

/** One group-version as discovery lists it. */
export interface GroupVersion {
  group: string;
  version: string;
}

/**
 * The kinds the server serves: the built-ins plus those defined by CustomResourceDefinitions at run time. Lookups
 * are by (group, version, resource); discovery reads the same table, so a new kind appears everywhere at once.
 */
export class ResourceRegistry {
  readonly #defs = new Map<string, ResourceDef>();
  /** Bumped on every change, so discovery responses can be cached until the set of kinds changes. */
  #generation = 0;

  constructor(defs: ResourceDef[] = builtinResources) {
    for (const def of defs) this.add(def);
  }

  get generation(): number {
    return this.#generation;
  }

  add(def: ResourceDef): void {
    this.#defs.set(`${def.group}/${def.resource}`, def);
    this.#generation++;
  }

  remove(group: string, resource: string): void {
    if (this.#defs.delete(`${group}/${resource}`)) this.#generation++;
  }

  /** The definition serving `resource` in `group`/`version`, or undefined. */
  lookup(group: string, version: string, resource: string): ResourceDef | undefined {
    const def = this.#defs.get(`${group}/${resource}`);
    return def?.versions.includes(version) ? def : undefined;
  }

  all(): ResourceDef[] {
    return [...this.#defs.values()];
  }

  /** Resources served in one group-version. */
  inGroupVersion(group: string, version: string): ResourceDef[] {
    return this.all().filter((def) => def.group === group && def.versions.includes(version));
  }

  /** Every served group with its versions, the core group ('') first, then in registration order. */
  groups(): Map<string, string[]> {
    const groups = new Map<string, string[]>([['', []]]);
    for (const def of this.#defs.values()) {
      let versions = groups.get(def.group);
      if (!versions) groups.set(def.group, (versions = []));
      for (const v of def.versions) if (!versions.includes(v)) versions.push(v);
    }
    return groups;
  }
}
