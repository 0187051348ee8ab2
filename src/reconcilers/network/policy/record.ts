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
 * reconciler on each change. The pod reconciler reads the Neutron ids of a pod's groups here, with no request; the
 * group reconciler diffs rules against it. Remote groups in rule texts are Neutron ids.
 */
export class SecurityGroupRecord {
  readonly #byId = new Map<string, RecordedGroup>();
  readonly #byNeutronId = new Map<string, string>();
  #synced = false;

  synced(): boolean {
    return this.#synced;
  }

  get(id: string): RecordedGroup | undefined {
    return this.#byId.get(id);
  }

  /** The translation's id of the group with this Neutron id. */
  idOf(neutronId: string): string | undefined {
    return this.#byNeutronId.get(neutronId);
  }

  all(): RecordedGroup[] {
    return [...this.#byId.values()];
  }

  put(group: RecordedGroup): void {
    this.remove(group.id);
    this.#byId.set(group.id, group);
    this.#byNeutronId.set(group.neutronId, group.id);
  }

  remove(id: string): void {
    const old = this.#byId.get(id);
    if (old) this.#byNeutronId.delete(old.neutronId);
    this.#byId.delete(id);
  }

  replace(groups: readonly RecordedGroup[]): void {
    this.#byId.clear();
    this.#byNeutronId.clear();
    for (const g of groups) this.put(g);
    this.#synced = true;
  }
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
        const groups = await listSecurityGroups(this.#o.neutron, this.#o.clusterId, signal, true);
        record.replace(groups);
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
  const out = tagged.flatMap((g) => {
    const id = ownerOf(g.tags)?.uid;
    return id ? [recordedGroup(g, id)] : [];
  });
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
