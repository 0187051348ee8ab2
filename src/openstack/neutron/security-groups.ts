import type { CallOptions, StandardFilters } from './query.ts';
import { badResponse, ResourceApi, type NeutronTransport, type StandardAttributes } from './resource.ts';

/** A security group rule as the API returns it. */
export interface SecurityGroupRule {
  id: string;
  project_id: string;
  tenant_id: string;
  security_group_id: string;
  direction: 'ingress' | 'egress';
  ethertype: 'IPv4' | 'IPv6';
  /** `tcp`, `udp`, `icmp` … or null for any. */
  protocol: string | null;
  port_range_min: number | null;
  port_range_max: number | null;
  remote_ip_prefix: string | null;
  /** The prefix with host bits cleared (`10.0.0.0/8` for `10.1.2.3/8`). */
  normalized_cidr?: string | null;
  remote_group_id: string | null;
  remote_address_group_id?: string | null;
  description: string | null;
  /** Present in some answers only (Zed omits it on create). */
  tags?: string[];
  revision_number: number;
  created_at: string;
  updated_at: string;
}

/** A rule to create; an identical rule already in the group → 409 `SecurityGroupRuleExists`. */
export interface SecurityGroupRuleCreate {
  security_group_id: string;
  direction: 'ingress' | 'egress';
  ethertype?: 'IPv4' | 'IPv6';
  protocol?: string | number | null;
  port_range_min?: number | null;
  port_range_max?: number | null;
  remote_ip_prefix?: string | null;
  remote_group_id?: string | null;
  remote_address_group_id?: string | null;
  description?: string;
  project_id?: string;
}

export interface SecurityGroupRuleFilters {
  id?: string | readonly string[];
  security_group_id?: string | readonly string[];
  project_id?: string;
  direction?: 'ingress' | 'egress';
  ethertype?: 'IPv4' | 'IPv6';
  protocol?: string;
  port_range_min?: number;
  port_range_max?: number;
  remote_ip_prefix?: string;
  remote_group_id?: string;
  description?: string;
}

/** A security group as the API returns it, with its rules (a new group has two egress rules, IPv4 and IPv6). */
export interface SecurityGroup extends StandardAttributes {
  stateful: boolean;
  shared?: boolean;
  security_group_rules: SecurityGroupRule[];
}

export interface SecurityGroupCreate {
  name?: string;
  description?: string;
  stateful?: boolean;
  project_id?: string;
}

export interface SecurityGroupUpdate {
  name?: string;
  description?: string;
  stateful?: boolean;
}

export interface SecurityGroupFilters extends StandardFilters {
  stateful?: boolean;
}

/**
 * `/v2.0/security-groups`. Each project also gets a `default` group on first use. Deleting a group a port still uses
 * → 409 `SecurityGroupInUse`.
 */
export class SecurityGroupsApi extends ResourceApi<
  SecurityGroup,
  SecurityGroupCreate,
  SecurityGroupUpdate,
  SecurityGroupFilters
> {
  constructor(transport: NeutronTransport) {
    super(transport, { singular: 'security_group', plural: 'security_groups', path: 'security-groups' });
  }
}

/**
 * `/v2.0/security-group-rules`, with bulk create. Rules are immutable on Zed (no PUT): `update` takes `never`, so a
 * call does not compile; replace a rule by create + delete. Rules take no tags either.
 */
export class SecurityGroupRulesApi extends ResourceApi<
  SecurityGroupRule,
  SecurityGroupRuleCreate,
  never,
  SecurityGroupRuleFilters
> {
  constructor(transport: NeutronTransport) {
    super(transport, { singular: 'security_group_rule', plural: 'security_group_rules', path: 'security-group-rules' });
  }

  /** Creates several rules in one request, in order; one duplicate rejects the whole request (409). */
  async createBulk(specs: readonly SecurityGroupRuleCreate[], options: CallOptions = {}): Promise<SecurityGroupRule[]> {
    if (specs.length === 0) return [];
    const res = await this.transport.send<{ security_group_rules?: SecurityGroupRule[] }>(
      'POST',
      '/security-group-rules',
      { body: { security_group_rules: specs }, ...options },
    );
    const rules = res.body?.security_group_rules;
    if (!Array.isArray(rules) || rules.length !== specs.length)
      throw badResponse(res, 'POST', '/security-group-rules', `expected ${specs.length} rule(s) in the answer`);
    return rules;
  }
}
