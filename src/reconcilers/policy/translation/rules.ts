import type { SecurityGroupRule, SecurityGroupRuleCreate } from '../../../openstack/index.ts';
import type { Direction } from './compile.ts';

export type Ethertype = 'IPv4' | 'IPv6';

/**
 * One Neutron security group rule as the translation wants it: `remoteGroup` names another desired group by key (its
 * Neutron id is known only once it exists), `remotePrefix` a CIDR; neither means any address of `ethertype`.
 */
export interface DesiredRule {
  direction: Direction;
  ethertype: Ethertype;
  /** Neutron's protocol name; null for every protocol. */
  protocol: 'tcp' | 'udp' | 'sctp' | null;
  min: number | null;
  max: number | null;
  remotePrefix?: string;
  remoteGroup?: string;
}

/**
 * A rule's identity, as Neutron tells duplicates apart (`SecurityGroupRuleExists`): two rules with equal text are one
 * rule. The remote group is given by its Neutron id.
 */
export function ruleText(
  rule: Pick<DesiredRule, 'direction' | 'ethertype' | 'protocol' | 'min' | 'max' | 'remotePrefix'>,
  remoteGroupId: string | null,
): string {
  const ports = rule.min === null ? '' : `:${rule.min}-${rule.max}`;
  const remote = remoteGroupId ? `group=${remoteGroupId}` : rule.remotePrefix ? `prefix=${rule.remotePrefix}` : 'any';
  return `${rule.direction} ${rule.ethertype} ${rule.protocol ?? 'any'}${ports} ${remote}`;
}

/** The text of a rule Neutron holds (its prefix normalised, `0.0.0.0/0` and `::/0` as no prefix, as Neutron does). */
export function neutronRuleText(rule: SecurityGroupRule): string {
  const prefix = rule.normalized_cidr ?? rule.remote_ip_prefix;
  return ruleText(
    {
      direction: rule.direction,
      ethertype: rule.ethertype,
      protocol: (rule.protocol as DesiredRule['protocol']) ?? null,
      min: rule.port_range_min,
      max: rule.port_range_max,
      ...(prefix && prefix !== '0.0.0.0/0' && prefix !== '::/0' ? { remotePrefix: prefix } : {}),
    },
    rule.remote_group_id,
  );
}

/** The create request of a desired rule in group `groupId`, its remote group's id resolved. */
export function ruleCreate(groupId: string, rule: DesiredRule, remoteGroupId: string | null): SecurityGroupRuleCreate {
  return {
    security_group_id: groupId,
    direction: rule.direction,
    ethertype: rule.ethertype,
    protocol: rule.protocol,
    port_range_min: rule.min,
    port_range_max: rule.max,
    ...(rule.remotePrefix ? { remote_ip_prefix: rule.remotePrefix } : {}),
    ...(remoteGroupId ? { remote_group_id: remoteGroupId } : {}),
  };
}
