import { formatCidr, parseCidr, parseIp } from '../../../../src/core/index.ts';
import { neutronError } from '../http.ts';
import {
  createOnly,
  parseResourceBody,
  readOnly,
  rw,
  stdSpecs,
  stringProblem,
  type AttrSpecs,
  updateAttributes,
} from './body.ts';
import {
  checkQuota,
  checkRevision,
  findOwned,
  findVisible,
  ordered,
  targetProject,
  type Kind,
  type NeutronCall,
} from './common.ts';
import { pyStr } from './errors.ts';
import type { Item } from './query.ts';
import type { NeutronStore, SecurityGroupRecord, SecurityGroupRuleRecord } from './store.ts';

const sgNotFound = (id: string) => neutronError(404, 'SecurityGroupNotFound', `Security group ${id} does not exist`);
const ruleNotFound = (id: string) =>
  neutronError(404, 'SecurityGroupRuleNotFound', `Security group rule ${id} does not exist`);

/** `type:name_not_default`: a string of at most 255, and never "default" (in any case, on create or update). */
function nameNotDefault(value: unknown): string | undefined {
  const problem = stringProblem(value, 255);
  if (problem) return problem;
  if ((value as string).toLowerCase() === 'default')
    throw neutronError(409, 'SecurityGroupDefaultAlreadyExists', 'Default security group already exists.');
  return undefined;
}

const sgSpecs: AttrSpecs = {
  ...stdSpecs,
  name: rw('any', { validate: nameNotDefault }),
  stateful: rw('boolean'),
  shared: readOnly('boolean'),
  security_group_rules: readOnly('list'),
};
const ruleSpecs: AttrSpecs = {
  ...stdSpecs,
  description: rw('string'),
  security_group_id: createOnly('string', { required: true }),
  direction: createOnly('any', { required: true, values: ['ingress', 'egress'] }),
  ethertype: createOnly('string'),
  protocol: createOnly('any', { nullable: true }),
  port_range_min: createOnly('int', { nullable: true }),
  port_range_max: createOnly('int', { nullable: true }),
  remote_ip_prefix: createOnly('string', { nullable: true }),
  remote_group_id: createOnly('string', { nullable: true }),
  remote_address_group_id: createOnly('string', { nullable: true }),
  normalized_cidr: readOnly('string'),
};

const ruleOrder = [
  'id',
  'tenant_id',
  'security_group_id',
  'ethertype',
  'direction',
  'protocol',
  'port_range_min',
  'port_range_max',
  'remote_ip_prefix',
  'remote_address_group_id',
  'normalized_cidr',
  'remote_group_id',
  'standard_attr_id',
  'description',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
  'project_id',
];

/** A rule as its own resource (no standard_attr_id/tags), or nested in its group (with them, as real Neutron shows). */
function serializeRule(r: SecurityGroupRuleRecord, nested: boolean): Item {
  const item: Item = { ...r, tenant_id: r.project_id, tags: [...r.tags].sort() };
  if (!nested) {
    delete item.standard_attr_id;
    delete item.tags;
  }
  return ordered(item, ruleOrder);
}

function serializeGroup(g: SecurityGroupRecord, call: NeutronCall): Item {
  const rules = [...call.store.securityGroupRules.values()]
    .filter((r) => r.security_group_id === g.id)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    id: g.id,
    name: g.name,
    stateful: g.stateful,
    tenant_id: g.project_id,
    description: g.description,
    shared: false,
    security_group_rules: rules.map((r) => serializeRule(r, true)),
    tags: [...g.tags].sort(),
    created_at: g.created_at,
    updated_at: g.updated_at,
    revision_number: g.revision_number,
    project_id: g.project_id,
  };
}

export const securityGroupKind: Kind<SecurityGroupRecord> = {
  singular: 'security_group',
  plural: 'security_groups',
  path: 'security-groups',
  quota: 'security_group',
  map: (store) => store.securityGroups,
  notFound: sgNotFound,
  serialize: (g, call) => serializeGroup(g, call),
  attributes: [
    'id',
    'name',
    'stateful',
    'tenant_id',
    'description',
    'shared',
    'security_group_rules',
    'tags',
    'created_at',
    'updated_at',
    'revision_number',
    'project_id',
  ],
  filterTypes: { stateful: 'boolean', shared: 'boolean' },
  missingMarker: 'ignore',
};

export const securityGroupRuleKind: Kind<SecurityGroupRuleRecord & { description: string }> = {
  singular: 'security_group_rule',
  plural: 'security_group_rules',
  path: 'security-group-rules',
  quota: 'security_group_rule',
  map: (store) => store.securityGroupRules as Map<string, SecurityGroupRuleRecord & { description: string }>,
  notFound: ruleNotFound,
  serialize: (r) => serializeRule(r, false),
  attributes: ruleOrder,
  filterTypes: { port_range_min: 'int', port_range_max: 'int' },
  missingMarker: 'ignore',
};

function newRule(
  store: NeutronStore,
  group: SecurityGroupRecord,
  fields: Partial<SecurityGroupRuleRecord>,
): SecurityGroupRuleRecord {
  const rule: SecurityGroupRuleRecord = {
    ...store.std(group.project_id, '', 0),
    security_group_id: group.id,
    ethertype: 'IPv4',
    direction: 'egress',
    protocol: null,
    port_range_min: null,
    port_range_max: null,
    remote_ip_prefix: null,
    remote_address_group_id: null,
    normalized_cidr: null,
    remote_group_id: null,
    ...fields,
    description: fields.description === undefined ? null : fields.description,
  };
  store.securityGroupRules.set(rule.id, rule);
  return rule;
}

function newGroup(
  store: NeutronStore,
  project: string,
  name: string,
  description: string,
  stateful: boolean,
): SecurityGroupRecord {
  const group: SecurityGroupRecord = { ...store.std(project, description, 1), name, stateful };
  store.securityGroups.set(group.id, group);
  return group;
}

/** Every project gets a `default` group on first use (ingress from itself, egress anywhere; IPv4 and IPv6). */
export function ensureDefaultSecurityGroup(store: NeutronStore, project: string): SecurityGroupRecord {
  for (const g of store.securityGroups.values()) if (g.project_id === project && g.name === 'default') return g;
  const group = newGroup(store, project, 'default', 'Default security group', true);
  for (const ethertype of ['IPv4', 'IPv6']) {
    newRule(store, group, { direction: 'ingress', ethertype, remote_group_id: group.id });
    newRule(store, group, { direction: 'egress', ethertype });
  }
  return group;
}

/** neutron-lib's `IP_PROTOCOL_MAP` (Zed), in its order (the error message lists it). */
const protocolNumbers: Record<string, number> = {
  ah: 51,
  dccp: 33,
  egp: 8,
  esp: 50,
  gre: 47,
  hopopt: 0,
  icmp: 1,
  igmp: 2,
  ip: 0,
  ipip: 4,
  'ipv6-encap': 41,
  'ipv6-frag': 44,
  'ipv6-icmp': 58,
  icmpv6: 58,
  'ipv6-nonxt': 59,
  'ipv6-opts': 60,
  'ipv6-route': 43,
  ospf: 89,
  pgm: 113,
  rsvp: 46,
  sctp: 132,
  tcp: 6,
  udp: 17,
  udplite: 136,
  vrrp: 112,
};

const invalidProtocol = (protocol: unknown) =>
  neutronError(
    400,
    'SecurityGroupRuleInvalidProtocol',
    `Security group rule protocol ${pyStr(protocol)} not supported. Only protocol values [None, ${Object.keys(
      protocolNumbers,
    )
      .map((p) => `'${p}'`)
      .join(', ')}] and integer representations [0 to 255] are supported.`,
  );

/** `convert_protocol`: a number 0–255 (kept as the text given), or a protocol name (lower-cased). */
function convertProtocol(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const numeric =
    typeof value === 'number' ? Number.isInteger(value) : typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value);
  if (numeric) {
    const n = Number(typeof value === 'string' ? value.trim() : value);
    if (n >= 0 && n <= 255) return typeof value === 'string' ? value : String(n);
    throw invalidProtocol(value);
  }
  if (typeof value === 'string' && value.toLowerCase() in protocolNumbers) return value.toLowerCase();
  throw invalidProtocol(value);
}

/** The protocols whose rules take port ranges (tcp, udp, dccp, sctp, udplite), by number. */
const PORT_PROTOCOLS = new Set(['6', '17', '33', '132', '136']);

function protocolKey(p: string | null): string {
  if (p === null) return '';
  return String(protocolNumbers[p] ?? p);
}

function ruleKey(
  r: Pick<
    SecurityGroupRuleRecord,
    | 'security_group_id'
    | 'direction'
    | 'ethertype'
    | 'protocol'
    | 'port_range_min'
    | 'port_range_max'
    | 'normalized_cidr'
    | 'remote_group_id'
    | 'remote_address_group_id'
  >,
): string {
  // 0.0.0.0/0 and ::/0 mean the same as no prefix (Neutron treats them as duplicates).
  const cidr = r.normalized_cidr === '0.0.0.0/0' || r.normalized_cidr === '::/0' ? null : r.normalized_cidr;
  return JSON.stringify([
    r.security_group_id,
    r.direction,
    r.ethertype,
    protocolKey(r.protocol),
    r.port_range_min,
    r.port_range_max,
    cidr,
    r.remote_group_id,
    r.remote_address_group_id,
  ]);
}

function validateRule(
  call: NeutronCall,
  attrs: Record<string, unknown>,
): Partial<SecurityGroupRuleRecord> & { security_group_id: string } {
  const direction = attrs.direction as string;
  // `convert_ethertype_to_case_insensitive`.
  const givenEthertype = attrs.ethertype ?? 'IPv4';
  const ethertype = ['IPv4', 'IPv6'].find(
    (e) => typeof givenEthertype === 'string' && e.toLowerCase() === givenEthertype.toLowerCase(),
  );
  if (!ethertype)
    throw neutronError(
      400,
      'SecurityGroupRuleInvalidEtherType',
      `Security group rule for ethertype '${pyStr(givenEthertype)}' not supported. Allowed values are ['IPv4', 'IPv6'].`,
    );
  const protocol = convertProtocol(attrs.protocol);
  const min = (attrs.port_range_min as number | null | undefined) ?? null;
  const max = (attrs.port_range_max as number | null | undefined) ?? null;
  if ((min !== null || max !== null) && protocol === null)
    throw neutronError(
      400,
      'SecurityGroupProtocolRequiredWithPorts',
      'Must also specify protocol if port range is given.',
    );
  for (const port of [min, max])
    if (port !== null && (port < 0 || port > 65535))
      throw neutronError(400, 'SecurityGroupInvalidPortValue', `Invalid value for port ${port}`);
  // `_validate_port_range`: for the protocols with ports (neutron's SG_PORT_PROTO_NAMES and their numbers), a range
  // is both ends, neither 0, min <= max — SCTP, DCCP and UDP-Lite as well as TCP and UDP.
  if ((min !== null || max !== null) && protocol !== null && PORT_PROTOCOLS.has(protocolKey(protocol))) {
    if (min === 0 || max === 0) throw neutronError(400, 'SecurityGroupInvalidPortValue', 'Invalid value for port 0');
    if (min === null || max === null || min > max)
      throw neutronError(
        400,
        'SecurityGroupInvalidPortRange',
        'For TCP/UDP protocols, port_range_min must be <= port_range_max',
      );
  }
  let prefix = (attrs.remote_ip_prefix as string | null | undefined) || null;
  let normalized: string | null = null;
  if (prefix !== null) {
    const parsed = parseCidr(prefix.includes('/') ? prefix : `${prefix}/${parseIp(prefix)?.version === 6 ? 128 : 32}`);
    if (!parsed) throw neutronError(400, 'InvalidCIDR', `Invalid CIDR ${prefix} given as IP prefix.`);
    if ((parsed.cidr.version === 4 ? 'IPv4' : 'IPv6') !== ethertype) {
      throw neutronError(
        400,
        'SecurityGroupRuleParameterConflict',
        `Conflicting value ethertype ${ethertype} for CIDR ${prefix}`,
      );
    }
    if (!prefix.includes('/')) prefix = `${prefix}/${parsed.cidr.prefixLength}`;
    normalized = formatCidr(parsed.cidr);
  }
  const remoteGroup = (attrs.remote_group_id as string | null | undefined) ?? null;
  if (prefix !== null && remoteGroup !== null)
    throw neutronError(
      400,
      'SecurityGroupRemoteGroupAndRemoteIpPrefix',
      'Only remote_ip_prefix or remote_group_id may be provided.',
    );
  const group = findVisible(securityGroupKind, call, attrs.security_group_id as string);
  if (remoteGroup !== null && !call.store.securityGroups.has(remoteGroup)) throw sgNotFound(remoteGroup);
  return {
    security_group_id: group.id,
    direction,
    ethertype,
    protocol,
    port_range_min: min,
    port_range_max: max,
    remote_ip_prefix: prefix,
    normalized_cidr: normalized,
    remote_group_id: remoteGroup,
    remote_address_group_id: (attrs.remote_address_group_id as string | null | undefined) ?? null,
    description: (attrs.description as string | undefined) ?? '',
  };
}

export const securityGroups = {
  list(call: NeutronCall): void {
    // Listing is one of the "first uses" that creates the caller's default group.
    if (call.ctx.projectId) ensureDefaultSecurityGroup(call.store, call.ctx.projectId);
  },

  create(call: NeutronCall): { status: number; body: Item } {
    const { items, bulk } = parseResourceBody(call.body, 'security_group', 'security_groups', sgSpecs, 'POST');
    const created: SecurityGroupRecord[] = [];
    try {
      for (const attrs of items) {
        const project = targetProject(call, attrs);
        ensureDefaultSecurityGroup(call.store, project);
        checkQuota(call.store, project, 'security_group');
        const group = newGroup(
          call.store,
          project,
          (attrs.name as string | undefined) ?? '',
          (attrs.description as string | undefined) ?? '',
          (attrs.stateful as boolean | undefined) ?? true,
        );
        for (const ethertype of ['IPv6', 'IPv4']) newRule(call.store, group, { direction: 'egress', ethertype });
        created.push(group);
      }
    } catch (err) {
      for (const g of created) deleteGroup(call.store, g.id);
      throw err;
    }
    const out = created.map((g) => serializeGroup(g, call));
    return { status: 201, body: bulk ? { security_groups: out } : { security_group: out[0] } };
  },

  update(call: NeutronCall, id: string): { status: number; body: Item } {
    const { items } = parseResourceBody(call.body, 'security_group', 'security_groups', sgSpecs, 'PUT');
    const g = findOwned(securityGroupKind, call, id, 'update');
    const attrs = updateAttributes(items, 'security_group');
    checkRevision(call, g);
    if (g.name === 'default' && attrs.name !== undefined && attrs.name !== 'default') {
      throw neutronError(409, 'SecurityGroupCannotUpdateDefault', 'Updating default security group not allowed.');
    }
    if (attrs.name !== undefined) g.name = attrs.name as string;
    if (attrs.description !== undefined) g.description = attrs.description as string;
    if (attrs.stateful !== undefined) g.stateful = attrs.stateful as boolean;
    call.store.touch(g);
    return { status: 200, body: { security_group: serializeGroup(g, call) } };
  },

  delete(call: NeutronCall, id: string): { status: number } {
    const g = findOwned(securityGroupKind, call, id, 'delete');
    checkRevision(call, g);
    if (g.name === 'default' && !call.ctx.isAdmin)
      throw neutronError(
        409,
        'SecurityGroupCannotRemoveDefault',
        'Insufficient rights for removing default security group.',
      );
    for (const p of call.store.ports.values())
      if (p.security_groups.includes(id)) throw neutronError(409, 'SecurityGroupInUse', `Security Group ${id} in use.`);
    deleteGroup(call.store, id);
    return { status: 204 };
  },
};

function deleteGroup(store: NeutronStore, id: string): void {
  store.securityGroups.delete(id);
  for (const r of [...store.securityGroupRules.values()])
    if (r.security_group_id === id || r.remote_group_id === id) store.securityGroupRules.delete(r.id);
}

export const securityGroupRules = {
  create(call: NeutronCall): { status: number; body: Item } {
    const { items, bulk } = parseResourceBody(
      call.body,
      'security_group_rule',
      'security_group_rules',
      ruleSpecs,
      'POST',
    );
    const valid = items.map((attrs) => ({ attrs, rule: validateRule(call, attrs) }));
    const keys = valid.map(({ rule }) => ruleKey(rule as SecurityGroupRuleRecord));
    if (new Set(keys).size !== keys.length)
      throw neutronError(400, 'DuplicateSecurityGroupRuleInPost', `Duplicate Security Group Rule in POST.`);
    const existing = new Map([...call.store.securityGroupRules.values()].map((r) => [ruleKey(r), r.id]));
    keys.forEach((k) => {
      const dup = existing.get(k);
      if (dup)
        throw neutronError(409, 'SecurityGroupRuleExists', `Security group rule already exists. Rule id is ${dup}.`);
    });
    const byProject = new Map<string, number>();
    const groups = valid.map(({ attrs, rule }) => {
      const group = call.store.securityGroups.get(rule.security_group_id)!;
      const project =
        attrs.project_id !== undefined || attrs.tenant_id !== undefined ? targetProject(call, attrs) : group.project_id;
      byProject.set(project, (byProject.get(project) ?? 0) + 1);
      return group;
    });
    for (const [project, n] of byProject) checkQuota(call.store, project, 'security_group_rule', n);
    // Each rule is a revision of its group (real Neutron occasionally merges two of a bulk into one; not mirrored).
    const created = valid.map(({ rule }, i) => {
      const r = newRule(call.store, groups[i]!, rule);
      call.store.touch(groups[i]!);
      return r;
    });
    const out = created.map((r) => serializeRule(r, false));
    return { status: 201, body: bulk ? { security_group_rules: out } : { security_group_rule: out[0] } };
  },

  /**
   * Only `description` may be given, and Zed then fails (500) on any existing rule: a Zed bug (the rule object has
   * no update path for its standard attributes). The body is checked first (a read-only attribute is 400 even for a
   * missing rule), then the rule (404).
   */
  update(call: NeutronCall, id: string): never {
    const { items } = parseResourceBody(call.body, 'security_group_rule', 'security_group_rules', ruleSpecs, 'PUT');
    findOwned(securityGroupRuleKind, call, id, 'update');
    updateAttributes(items, 'security_group_rule');
    throw neutronError(
      500,
      'HTTPInternalServerError',
      'Request Failed: internal server error while processing your request.',
    );
  },

  delete(call: NeutronCall, id: string): { status: number } {
    const r = findOwned(securityGroupRuleKind, call, id, 'delete');
    call.store.securityGroupRules.delete(id);
    const group = call.store.securityGroups.get(r.security_group_id);
    if (group) call.store.touch(group);
    return { status: 204 };
  },
};
