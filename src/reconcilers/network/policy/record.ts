import { realClock, type Clock, type Logger } from '../../../core/index.ts';
import { EventChannel, type Runnable } from '../../../controller/index.ts';
import type { NeutronClient, SecurityGroup } from '../../../openstack/index.ts';
import { clusterTag, namePrefix, ownerOf, ownerTags, securityGroupIdOfMark, TAG_KIND } from '../identity.ts';
import { neutronRuleText } from './rules.ts';
import { retryUntilDone } from '../retry.ts';

/** One of Raven's security groups as Neutron has it: its rules by their text (see `ruleText`), with their ids. */
export interface RecordedGroup {
  /** The translation's id of the group (its `raven.uid` tag). */
  id: string;
  neutronId: string;
  name: string;
  rules: ReadonlyMap<string, string>;
}

/** Raven's security groups: this cluster's tags and kind `securitygroup`. */
export function securityGroupTags(clusterId: string, groupId: string): string[] {
  return ownerTags(clusterId, 'securitygroup', groupId);
}

/**
 * Raven's record of its security groups in Neutron, as the pod port record is of its ports: filled by one paginated
 * list when Raven starts leading (a group's list entry carries its rules), written through by the security group
 * reconciler on each change, and replaced by each garbage-collection sweep's list (what someone changed in Neutron is
 * seen). The pod reconciler reads the Neutron ids of a pod's groups here, with no request; the group reconciler diffs
 * rules against it. Remote groups in rule texts are Neutron ids.
 *
 * A list races with the writes made while it runs. {@link mark} before listing and {@link replace} with the mark
 * after: entries put or removed after the mark win over the list, so a group made during a list is not forgotten (and
 * made a second time) and a group deleted during it does not come back.
 */
export class SecurityGroupRecord {
  readonly #byId = new Map<string, { group: RecordedGroup; seq: number }>();
  readonly #byNeutronId = new Map<string, string>();
  /** Groups removed since the last replace, with when (for the race above). */
  readonly #removed = new Map<string, number>();
  #seq = 0;
  #synced = false;

  synced(): boolean {
    return this.#synced;
  }

  get(id: string): RecordedGroup | undefined {
    return this.#byId.get(id)?.group;
  }

  /** The translation's id of the group with this Neutron id. */
  idOf(neutronId: string): string | undefined {
    return this.#byNeutronId.get(neutronId);
  }

  all(): RecordedGroup[] {
    return [...this.#byId.values()].map((e) => e.group);
  }

  put(group: RecordedGroup): void {
    this.#set(group, ++this.#seq);
    this.#removed.delete(group.id);
  }

  remove(id: string): void {
    this.#unset(id);
    this.#removed.set(id, ++this.#seq);
  }

  /** Take before listing; hand to {@link replace} with the list. */
  mark(): number {
    return this.#seq;
  }

  /**
   * Replaces the record with a full list taken after `mark`, keeping what was written since; returns the ids whose
   * entry changed (made, gone, another Neutron id, other rules). Of two groups with one id (a create whose answer was
   * lost made a second), the one recorded stays: the other is an orphan for the garbage collector.
   */
  replace(groups: readonly RecordedGroup[], mark: number): string[] {
    const old = new Map([...this.#byId].map(([id, e]) => [id, e.group]));
    const listed = new Map<string, RecordedGroup>();
    for (const g of groups) if (!listed.has(g.id) || old.get(g.id)?.neutronId === g.neutronId) listed.set(g.id, g);
    for (const [id, entry] of [...this.#byId]) if (entry.seq <= mark && !listed.has(id)) this.#unset(id);
    for (const g of listed.values())
      if (!((this.#byId.get(g.id)?.seq ?? 0) > mark || (this.#removed.get(g.id) ?? 0) > mark)) this.#set(g, mark);
    for (const [id, seq] of this.#removed) if (seq <= mark) this.#removed.delete(id);
    this.#synced = true;
    const ids = new Set([...old.keys(), ...this.#byId.keys()]);
    return [...ids].filter((id) => !sameGroup(old.get(id), this.get(id)));
  }

  #set(group: RecordedGroup, seq: number): void {
    this.#unset(group.id);
    this.#byId.set(group.id, { group, seq });
    this.#byNeutronId.set(group.neutronId, group.id);
  }

  #unset(id: string): void {
    const old = this.#byId.get(id);
    if (old) this.#byNeutronId.delete(old.group.neutronId);
    this.#byId.delete(id);
  }
}

function sameGroup(a: RecordedGroup | undefined, b: RecordedGroup | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.neutronId === b.neutronId && a.rules.size === b.rules.size && [...a.rules.keys()].every((t) => b.rules.has(t))
  );
}

/** A group Neutron answered with, as the record holds it (the group id from its tags, or its description's mark). */
export function recordedGroup(group: SecurityGroup, id: string): RecordedGroup {
  return {
    id,
    neutronId: group.id,
    name: group.name,
    rules: new Map(group.security_group_rules.map((r) => [neutronRuleText(r), r.id])),
  };
}

/**
 * Whether the garbage collector keeps a group of the cluster (its `raven.uid`, its Neutron id): the translation wants
 * the id, and it is the record's copy — another group with the id (a create whose answer was lost made it) is not.
 */
export function groupWanted(
  model: { groups(): ReadonlyMap<string, unknown> },
  record: SecurityGroupRecord,
): (id: string, neutronId: string) => boolean {
  return (id, neutronId) => model.groups().has(id) && (record.get(id)?.neutronId ?? neutronId) === neutronId;
}

/** This cluster's tagged groups as the record holds them (each by its `raven.uid` tag). */
export function recordedGroups(groups: readonly SecurityGroup[]): RecordedGroup[] {
  return groups.flatMap((g) => {
    const id = ownerOf(g.tags)?.uid;
    return id ? [recordedGroup(g, id)] : [];
  });
}

export interface SecurityGroupRecordLoaderOptions {
  neutron: NeutronClient;
  clusterId: string;
  record: SecurityGroupRecord;
  clock?: Clock;
  logger: Logger;
}

/**
 * Fills the {@link SecurityGroupRecord} when Raven starts leading — one paginated list of this cluster's groups, and
 * the adoption of any a crash left untagged (their description carries Raven's mark and the group's id) — retried
 * with back-off until it succeeds; then one event on {@link loaded}.
 */
export class SecurityGroupRecordLoader implements Runnable {
  readonly name = 'security-group-record';
  readonly loaded = new EventChannel<{ groups: number }>('security-group-record-loaded');
  readonly #o: SecurityGroupRecordLoaderOptions;
  readonly #clock: Clock;

  constructor(options: SecurityGroupRecordLoaderOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  async start(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    await this.#load(signal);
  }

  /**
   * Lists the groups again and replaces the record (then `loaded` again): Neutron said a group the record holds does
   * not exist (the cloud lost its state, or someone deleted it), so every group is looked at anew. One at a time; a
   * call while one runs does nothing.
   */
  /** 1 until the record is loaded (or while it loads again), then 0: the manager's view of this runnable's work. */
  pending(): number {
    return this.#o.record.synced() && !this.#reloading ? 0 : 1;
  }

  reload(): void {
    const signal = this.#signal;
    if (!signal || signal.aborted || this.#reloading) return;
    this.#o.logger.info({}, 'a security group is gone from Neutron: listing them again');
    this.#reloading = this.#load(signal).finally(() => (this.#reloading = undefined));
  }

  #signal: AbortSignal | undefined;
  #reloading: Promise<void> | undefined;

  async #load(signal: AbortSignal): Promise<void> {
    const { record, logger } = this.#o;
    await retryUntilDone(
      'list the security groups',
      async () => {
        const mark = record.mark();
        const groups = await listSecurityGroups(this.#o.neutron, this.#o.clusterId, signal, true);
        record.replace(groups, mark);
        logger.info({ groups: groups.length }, 'security group record loaded');
        this.loaded.send({ groups: groups.length });
      },
      { clock: this.#clock, logger, signal },
    );
  }
}

/**
 * This cluster's security groups, every page, as recorded groups; with `adopt`, also those a crash left between their
 * create and their tagging (Raven's mark in the description), which are tagged on the way.
 */
export async function listSecurityGroups(
  neutron: NeutronClient,
  clusterId: string,
  signal?: AbortSignal,
  adopt = false,
): Promise<RecordedGroup[]> {
  const tagged = await neutron.securityGroups.list(
    { tags: [clusterTag(clusterId), `${TAG_KIND}=securitygroup`] },
    { signal },
  );
  const out = recordedGroups(tagged);
  if (!adopt) return out;
  const untagged = await neutron.securityGroups.list({ 'not-tags-any': clusterTag(clusterId) }, { signal });
  for (const group of untagged) {
    const id = group.name.startsWith(namePrefix(clusterId))
      ? securityGroupIdOfMark(clusterId, group.description)
      : undefined;
    if (!id) continue;
    await neutron.tags.replace('security-groups', group.id, securityGroupTags(clusterId, id), { signal });
    out.push(recordedGroup(group, id));
  }
  return out;
}
