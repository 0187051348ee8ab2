import { errorMessage, type Logger } from '../../core/index.ts';
import { RetryableError, type ReconcileResult } from '../../controller/index.ts';
import { isOpenStackError, OpenStackError, type SecurityGroup } from '../../openstack/index.ts';
import {
  resourceName,
  securityGroupMark,
  WAIT_FOR_OUTSIDE_FIX_MS,
  type Cloud,
  type ReconcilerConfig,
} from '../network/index.ts';
import {
  describeGroup,
  desiredRuleTexts,
  groupNameParts,
  recordedGroup,
  ruleCreate,
  securityGroupTags,
  type DesiredGroup,
  type GroupStatus,
  type PolicyModel,
  type RecordedGroup,
  type SecurityGroupRecord,
} from './translation/index.ts';
import type { PolicyTransitions, Widenings } from './transitions.ts';

export interface SecurityGroupReconcilerOptions {
  cloud: Cloud;
  config: Pick<ReconcilerConfig, 'clusterId'>;
  model: PolicyModel;
  record: SecurityGroupRecord;
  status: GroupStatus;
  /**
   * Whether what the groups' rules name outside the caches is known: the cluster network (the node groups let the
   * load balancers in from its service subnet). Until then nothing is changed, so a start never narrows and re-widens
   * a rule; the network's arrival queues every group.
   */
  ready?: (() => boolean) | undefined;
  /** Make before break: when a group's stale rules may go (absent: at once). */
  transitions?: Pick<PolicyTransitions, 'groupMayNarrow'> | undefined;
  /** Where the reconciler says a group gained rules (it is this record's one writer). */
  widenings?: Pick<Widenings, 'widened'> | undefined;
  /**
   * Whether a port in Raven's record still carries the group (by its Neutron id): its update that drops the group is
   * not answered yet. Absent: Neutron's `SecurityGroupInUse` alone decides.
   */
  carried?: ((neutronId: string) => boolean) | undefined;
  /** After each Neutron call of a reconcile (metrics: the time of the last one). */
  onNeutronCall?: (() => void) | undefined;
  logger: Logger;
}

/** How long a group that ports still use waits before its delete is tried again (they are being re-grouped). */
const IN_USE_RETRY_MS = 2_000;
/** How long a group whose rules name a group not made yet waits (that group's creation also queues it). */
const REMOTE_WAIT_MS = 1_000;

/**
 * One security group of the NetworkPolicy translation, by its id: made when the translation wants it (named and
 * described by what it is, tagged as this cluster's), its rules diffed against Raven's record — new ones made first,
 * stale ones deleted once what the narrowing relies on is in place ({@link PolicyTransitions}) — and deleted once
 * nothing wants it (after the ports that carried it were
 * re-grouped: Neutron refuses to delete a group in use). A pod's start never comes here: it changes memberships only.
 * Each change is written through to the record and announced on the status channel.
 */
export class SecurityGroupReconciler {
  readonly #o: SecurityGroupReconcilerOptions;

  constructor(options: SecurityGroupReconcilerOptions) {
    this.#o = options;
  }

  readonly reconcile = async (id: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    if (!this.#o.record.synced() || this.#o.ready?.() === false) return;
    const desired = this.#o.model.groups().get(id);
    try {
      const result = desired ? await this.#converge(desired, signal) : await this.#delete(id, signal);
      if (!result || result.waiting !== 'SecurityGroupInUse') this.#o.status.ok(id);
      return result;
    } catch (err) {
      if (signal.aborted) throw err;
      this.#o.status.fail(id, errorMessage(err).replace(/ \(request [^)]*\)/g, ''));
      throw err;
    }
  };

  async #converge(desired: DesiredGroup, signal: AbortSignal): Promise<ReconcileResult | void> {
    const { record, cloud } = this.#o;
    const group = record.get(desired.id) ?? (await this.#create(desired, signal));
    const { texts, waiting } = desiredRuleTexts(desired, record);
    const stale = [...group.rules].filter(([text]) => !texts.has(text));
    const missing = [...texts].filter(([text]) => !group.rules.has(text));
    const rules = new Map(group.rules);
    // Widen first: the rules to come are made before any rule to go is deleted (make before break, see
    // PolicyTransitions), so a change never allows less than both states meanwhile, nor more than both together.
    if (missing.length > 0) {
      const specs = missing.map(([, { rule, remoteId }]) => ruleCreate(group.neutronId, rule, remoteId));
      try {
        const created = await this.#call(() => cloud.neutron.securityGroupRules.createBulk(specs, { signal }));
        missing.forEach(([text], i) => rules.set(text, created[i]!.id));
      } catch (err) {
        // The record is behind Neutron (a rule made by a reconcile whose answer was lost): read the group again.
        if (isOpenStackError(err, 'SecurityGroupRuleExists')) await this.#reread(group, signal);
        throw this.#meaning(err, desired);
      }
      record.put({ ...group, rules: new Map(rules) });
      this.#o.widenings?.widened(desired.id);
    }
    const hold = stale.length > 0 ? this.#o.transitions?.groupMayNarrow(desired.id) : undefined;
    if (!hold)
      for (const [text, ruleId] of stale) {
        await this.#call(() => cloud.neutron.securityGroupRules.delete(ruleId, { signal }));
        rules.delete(text);
        record.put({ ...group, rules: new Map(rules) });
      }
    if (missing.length > 0 || (stale.length > 0 && !hold)) {
      this.#o.status.changed.send({ id: desired.id, change: 'rules' });
      this.#o.logger.info(
        { group: group.name, added: missing.length, deleted: hold ? 0 : stale.length },
        'security group rules changed',
      );
    }
    if (hold) return { requeueAfterMs: hold.waitMs, waiting: 'PolicyTransition' };
    return waiting.length > 0 ? { requeueAfterMs: REMOTE_WAIT_MS, waiting: 'RemoteSecurityGroup' } : undefined;
  }

  async #create(desired: DesiredGroup, signal: AbortSignal): Promise<RecordedGroup> {
    const { cloud, config, record } = this.#o;
    let created: SecurityGroup;
    try {
      created = await this.#call(() =>
        cloud.neutron.securityGroups.create(
          {
            name: this.#name(desired),
            description: securityGroupMark(config.clusterId, desired.id, describeGroup(desired.spec)),
          },
          { signal },
        ),
      );
    } catch (err) {
      throw this.#meaning(err, desired);
    }
    // Zed tags in a second request; a crash in between leaves the mark in the description, which the next leader adopts.
    await this.#call(() =>
      cloud.neutron.tags.replace('security-groups', created.id, securityGroupTags(config.clusterId, desired.id), {
        signal,
      }),
    );
    // Neutron gives a new group two allow-all egress rules. Nothing ever wanted them, so they go before any port can
    // join (they would open egress for its members), not as a held narrowing.
    const made = recordedGroup(created, desired.id);
    const rules = new Map(made.rules);
    const { texts } = desiredRuleTexts(desired, record);
    for (const [text, ruleId] of made.rules) {
      if (texts.has(text)) continue;
      await this.#call(() => cloud.neutron.securityGroupRules.delete(ruleId, { signal }));
      rules.delete(text);
    }
    const group: RecordedGroup = { ...made, rules };
    record.put(group);
    this.#o.status.changed.send({ id: desired.id, change: 'created' });
    this.#o.logger.info({ group: group.name, neutronId: group.neutronId }, 'security group created');
    return group;
  }

  async #delete(id: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const recorded = this.#o.record.get(id);
    if (!recorded) return;
    // Not while a port update that drops it is unanswered: Neutron lets the delete through once that update's database
    // write is in, but ML2/OVN writes the port's OVN side after it, and a group deleted in between fails that write
    // (the port group is gone) and every later one of the port, until the driver's repair task (docs/policy.md).
    if (this.#o.carried?.(recorded.neutronId)) {
      this.#o.status.changed.send({ id, change: 'in-use' });
      return { requeueAfterMs: IN_USE_RETRY_MS, waiting: 'SecurityGroupInUse' };
    }
    try {
      await this.#call(() => this.#o.cloud.neutron.securityGroups.delete(recorded.neutronId, { signal }));
    } catch (err) {
      // Ports still carry it: their pods are being given their new groups (and pool ports drained).
      if (isOpenStackError(err, 'SecurityGroupInUse')) {
        this.#o.status.changed.send({ id, change: 'in-use' });
        return { requeueAfterMs: IN_USE_RETRY_MS, waiting: 'SecurityGroupInUse' };
      }
      throw err;
    }
    this.#o.record.remove(id);
    this.#o.status.changed.send({ id, change: 'deleted' });
    this.#o.logger.info({ group: recorded.name, neutronId: recorded.neutronId }, 'security group deleted');
  }

  async #reread(group: RecordedGroup, signal: AbortSignal): Promise<void> {
    const fresh = await this.#call(() => this.#o.cloud.neutron.securityGroups.get(group.neutronId, { signal }));
    this.#o.record.put(recordedGroup(fresh, group.id));
  }

  async #call<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } finally {
      this.#o.onNeutronCall?.();
    }
  }

  #name(desired: DesiredGroup): string {
    return resourceName(this.#o.config.clusterId, ...groupNameParts(desired.spec, desired.id));
  }

  /** Neutron's refusals as what they mean for the policies using the group. */
  #meaning(err: unknown, desired: DesiredGroup): unknown {
    if (err instanceof OpenStackError && err.type === 'OverQuota')
      return new RetryableError(
        'QuotaExceeded',
        `Neutron's security group (or rule) quota is full: security group for ${describeGroup(desired.spec)}`,
        { cause: err, maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS },
      );
    return err;
  }
}
