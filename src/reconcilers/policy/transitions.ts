import type { Clock, DeepReadonly, Logger } from '../../core/index.ts';
import {
  desiredRuleTexts,
  groupId,
  type DesiredGroup,
  type PolicyModel,
  type PolicyPod,
  type PortGroups,
  type SecurityGroupRecord,
} from './translation/index.ts';

/**
 * When each port last gained security groups, or each group rules: in memory (after a restart everything counts as
 * settled long ago). Each instance has one writer: the pod reconciler for ports, the group reconciler for groups.
 */
export class Widenings {
  readonly #at = new Map<string, number>();
  readonly #clock: Clock;
  /** A widening older than this has settled: it no longer counts, and its entry goes at the next write. */
  readonly #keepMs: number;

  constructor(clock: Clock, keepMs: number) {
    this.#clock = clock;
    this.#keepMs = keepMs;
  }

  widened(id: string): void {
    const now = this.#clock.now();
    for (const [key, at] of this.#at) if (at + this.#keepMs < now) this.#at.delete(key);
    this.#at.set(id, now);
  }

  /** When `id` last widened (0: not since Raven started, or longer ago than it matters). */
  at(id: string): number {
    const at = this.#at.get(id) ?? 0;
    return at + this.#keepMs < this.#clock.now() ? 0 : at;
  }
}

/** A pod port as the transitions read it from Raven's record. */
export interface TransitionPort {
  id: string;
  deviceId: string;
  securityGroups: readonly string[];
}

export interface PolicyTransitionsOptions {
  model: PolicyModel;
  record: SecurityGroupRecord;
  portGroups: PortGroups;
  /** Raven's record of its pod ports. */
  ports: { all(): readonly TransitionPort[] };
  /** The pod with this uid, if the cache has it. */
  podOf: (uid: string) => DeepReadonly<PolicyPod> | undefined;
  /**
   * A value that changes whenever anything a pod's groups or its port's are computed from changes (the caches'
   * resourceVersions, the records' marks): the pass over the ports is reused while it stays. Absent: a pass each time.
   */
  version?: (() => string) | undefined;
  portWidenings: Widenings;
  groupWidenings: Widenings;
  clock: Clock;
  /** How long the dataplane gets to apply a widening before anything that relies on it is narrowed. */
  settleMs: number;
  /** The longest a narrowing waits for others' widenings; then it goes ahead, logged. */
  maxHoldMs: number;
  logger: Logger;
}

/** Why a narrowing waits, and how long before it is looked at again. */
export interface Hold {
  waitMs: number;
  why: string;
}

/** How often a narrowing blocked on another key's widening (not on a clock) looks again. */
const BLOCKED_RETRY_MS = 1_000;

/**
 * Make before break for NetworkPolicy changes (docs/policy.md, "Transitions"). A change moves ports between groups and
 * rules between groups; Neutron applies each write on its own, so a port that left a remote group before the pods
 * whose rules name it were opened, or a rule deleted before its replacement's members joined, would deny for a while
 * traffic that both the old and the new state allow, and cut its connections (Neutron clears their conntrack
 * entries). So every change is made in two halves: first everything it adds (a port's new groups, kept beside its old
 * ones; a group's new rules, kept beside the old), then — per port and per group, once what it relies on has been
 * added and has had `settleMs` to reach the dataplane — what it takes away. Between the halves each port allows the
 * union of its old and new groups' rules, never less than either state.
 *
 * What a narrowing relies on:
 * - a port dropping groups: its own new groups (made, added, settled — also one only another namespace's policies
 *   need, which `PortGroups.of` leaves out while it is not made); the rules of every group it keeps (all made,
 *   settled) and, for each remote group those rules name, every pod that is to be in it (its port carries it,
 *   settled); and, for each group it drops, every group whose rules name that group (its new rules made, settled)
 *   and every port carrying one (so the pods that admitted it through that group admit it by their new state first);
 * - a group losing rules: its new rules (made, settled), the members of the remote groups they name, and the ports
 *   carrying the group (their new groups first).
 *
 * A tenant cannot stall another's narrowing for ever: past `maxHoldMs` it goes ahead (logged), and each check reads
 * only Raven's records and the memoised model (one pass over the pod ports).
 */
export class PolicyTransitions {
  readonly #o: PolicyTransitionsOptions;
  /** When each waiting narrowing first waited (by `port:<id>` / `group:<id>`); its one writer is this class. */
  readonly #heldSince = new Map<string, number>();
  #scan: { version: string; ports: PortState[] } | undefined;

  constructor(options: PolicyTransitionsOptions) {
    this.#o = options;
  }

  /** Whether port `portId` (carrying `keep` and `drop`) may drop `drop` now; undefined: yes. */
  portMayDrop(portId: string, drop: readonly string[], keep: readonly string[]): Hold | undefined {
    const ports = this.#ports();
    const blockers: Blocker[] = [
      this.#portReady(
        portId,
        ports.find((p) => p.port.id === portId),
      ),
    ];
    for (const neutronId of keep) {
      const id = this.#o.record.idOf(neutronId);
      const desired = id === undefined ? undefined : this.#o.model.groups().get(id);
      if (desired) blockers.push(this.#groupReady(desired), ...this.#remotesReady(desired, ports));
    }
    const dropped = new Set(drop);
    for (const referrer of this.#o.record.all())
      if ([...referrer.rules.keys()].some((text) => dropped.has(remoteOf(text) ?? ''))) {
        // The groups whose rules admit it through a group it drops: their new rules first (an edited peer), and the
        // pods that admit it through them their new groups.
        const desired = this.#o.model.groups().get(referrer.id);
        if (desired) blockers.push(this.#groupReady(desired));
        blockers.push(...this.#carriersReady(referrer.neutronId, ports));
      }
    return this.#decide(`port:${portId}`, blockers);
  }

  /** Whether group `id` may lose its stale rules now (its missing ones are made); undefined: yes. */
  groupMayNarrow(id: string): Hold | undefined {
    const desired = this.#o.model.groups().get(id);
    const recorded = this.#o.record.get(id);
    if (!desired || !recorded) return undefined;
    const ports = this.#ports();
    return this.#decide(`group:${id}`, [
      this.#groupReady(desired),
      ...this.#remotesReady(desired, ports),
      ...this.#carriersReady(recorded.neutronId, ports),
    ]);
  }

  #decide(key: string, blockers: Blocker[]): Hold | undefined {
    const now = this.#o.clock.now();
    // Narrowings that never came back (their pod went while they waited) are forgotten.
    for (const [held, since] of this.#heldSince) if (now - since > 2 * this.#o.maxHoldMs) this.#heldSince.delete(held);
    const blocked = blockers.find((b) => b.blocked !== undefined);
    const until = Math.max(0, ...blockers.map((b) => b.until));
    if (!blocked && until <= now) {
      this.#heldSince.delete(key);
      return undefined;
    }
    const since = this.#heldSince.get(key) ?? now;
    this.#heldSince.set(key, since);
    const why = blocked?.blocked ?? 'what it relies on was added less than the settle time ago';
    if (now - since >= this.#o.maxHoldMs) {
      this.#heldSince.delete(key);
      this.#o.logger.warn({ narrowing: key, heldMs: now - since, waitingFor: why }, 'narrowing after its longest hold');
      return undefined;
    }
    return { waitMs: blocked ? BLOCKED_RETRY_MS : Math.max(1, until - now), why };
  }

  /** Every recorded port of a pod the translation wires: what it should carry (group keys) and whether it does. */
  #ports(): PortState[] {
    const version = this.#o.version?.();
    if (version !== undefined && this.#scan?.version === version) return this.#scan.ports;
    const ports = this.#scanPorts();
    if (version !== undefined) this.#scan = { version, ports };
    return ports;
  }

  #scanPorts(): PortState[] {
    const out: PortState[] = [];
    for (const port of this.#o.ports.all()) {
      const pod = port.deviceId ? this.#o.podOf(port.deviceId) : undefined;
      const keys = pod ? this.#o.model.podGroups(pod) : [];
      if (!pod || keys.length === 0) continue;
      const wanted = this.#o.portGroups.of(pod);
      // A group only another namespace's policies need is left out of `wanted` while it is not made (the pod does not
      // wait for it): the port has not grown until it is made and carried.
      const grown =
        'ids' in wanted &&
        wanted.ids.every((id) => port.securityGroups.includes(id)) &&
        keys.every((key) => this.#o.record.get(groupId(key)) !== undefined);
      out.push({ port, keys, grown, pod: `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}` });
    }
    return out;
  }

  /** A port (`state`: its pod's, when the translation wires it) has taken its new groups, settled. */
  #portReady(portId: string, state: PortState | undefined): Blocker {
    const until = this.#o.portWidenings.at(portId) + this.#o.settleMs;
    if (state && !state.grown) return { until, blocked: `the port of pod ${state.pod} has not taken its new groups` };
    return { until };
  }

  #carriersReady(neutronId: string, ports: readonly PortState[]): Blocker[] {
    return ports.filter((p) => p.port.securityGroups.includes(neutronId)).map((p) => this.#portReady(p.port.id, p));
  }

  /** Every pod that is to be in a remote group the group's rules name: its port carries it, settled. */
  #remotesReady(desired: DesiredGroup, ports: readonly PortState[]): Blocker[] {
    const remotes = new Set(desired.rules.flatMap((r) => (r.remoteGroup === undefined ? [] : [r.remoteGroup])));
    if (remotes.size === 0) return [];
    return ports.filter((p) => p.keys.some((k) => remotes.has(k))).map((p) => this.#portReady(p.port.id, p));
  }

  /** The group exists with every rule the translation wants in it, settled. */
  #groupReady(desired: DesiredGroup): Blocker {
    const recorded = this.#o.record.get(desired.id);
    const until = this.#o.groupWidenings.at(desired.id) + this.#o.settleMs;
    if (!recorded) return { until, blocked: `security group ${desired.key} is not made yet` };
    const { texts, waiting } = desiredRuleTexts(desired, this.#o.record);
    if (waiting.length > 0 || [...texts.keys()].some((t) => !recorded.rules.has(t)))
      return { until, blocked: `security group ${desired.key} lacks rules it is to have` };
    return { until };
  }
}

interface PortState {
  port: TransitionPort;
  /** The group keys the pod should carry. */
  keys: readonly string[];
  /** Whether the port carries (at least) the Neutron ids of all of them that exist. */
  grown: boolean;
  pod: string;
}

interface Blocker {
  /** Not before this time (ms since the epoch; the settle time after what it relies on widened). */
  until: number;
  /** What it waits for that is not a matter of time: another key must act first. */
  blocked?: string;
}

/** The remote group's Neutron id in a rule text (`… group=<id>`), if it names one. */
function remoteOf(text: string): string | undefined {
  const at = text.lastIndexOf(' group=');
  return at < 0 ? undefined : text.slice(at + ' group='.length);
}
