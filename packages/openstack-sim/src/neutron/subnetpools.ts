import { addressBits, cidrSize, formatCidr, parseCidr, type IpCidr } from '../../../../src/core/index.ts';
import { neutronError } from '../http.ts';
import { createOnly, parseResourceBody, readOnly, rw, stdSpecs, type AttrSpecs, updateAttributes } from './body.ts';
import { checkQuota, checkRevision, findOwned, ordered, targetProject, type Kind, type NeutronCall } from './common.ts';
import { nerr } from './errors.ts';
import type { Item } from './query.ts';
import type { SubnetPoolRecord } from './store.ts';

const specs: AttrSpecs = {
  ...stdSpecs,
  name: rw('string'),
  prefixes: rw('list', { required: true }),
  default_prefixlen: rw('int'),
  min_prefixlen: rw('int'),
  max_prefixlen: rw('int'),
  is_default: rw('boolean'),
  shared: createOnly('boolean'),
  default_quota: rw('int', { nullable: true }),
  address_scope_id: rw('string', { nullable: true }),
  ip_version: readOnly('int'),
};

const order = [
  'id',
  'name',
  'tenant_id',
  'default_prefixlen',
  'min_prefixlen',
  'max_prefixlen',
  'is_default',
  'shared',
  'prefixes',
  'ip_version',
  'default_quota',
  'address_scope_id',
  'description',
  'tags',
  'created_at',
  'updated_at',
  'revision_number',
  'project_id',
];

/** Prefix lengths come back as strings (`"default_prefixlen": "26"`), as real Neutron returns them. */
function serialize(p: SubnetPoolRecord): Item {
  return ordered(
    {
      ...p,
      tenant_id: p.project_id,
      default_prefixlen: String(p.default_prefixlen),
      min_prefixlen: String(p.min_prefixlen),
      max_prefixlen: String(p.max_prefixlen),
      address_scope_id: null,
      tags: [...p.tags].sort(),
    },
    order,
  );
}

export const subnetPoolNotFound = (id: string) =>
  neutronError(404, 'SubnetPoolNotFound', `Subnet pool ${id} could not be found.`);

export const subnetPoolKind: Kind<SubnetPoolRecord> = {
  singular: 'subnetpool',
  plural: 'subnetpools',
  path: 'subnetpools',
  quota: 'subnetpool',
  map: (store) => store.subnetpools,
  notFound: subnetPoolNotFound,
  serialize: (p) => serialize(p),
  sharedWith: (p) => p.shared,
  attributes: order,
  filterTypes: { is_default: 'boolean', shared: 'boolean' },
  missingMarker: 'empty',
};

function parsePrefixes(list: unknown[]): IpCidr[] {
  const cidrs = list.map((text) => {
    const parsed = typeof text === 'string' ? parseCidr(text) : undefined;
    if (!parsed) throw nerr.invalidAttr('prefixes', `'${String(text)}' is not a valid IP subnet`);
    return parsed.cidr;
  });
  if (new Set(cidrs.map((c) => c.version)).size > 1)
    throw neutronError(400, 'PrefixVersionMismatch', 'Cannot mix IPv4 and IPv6 prefixes in a subnet pool.');
  return cidrs;
}

export const subnetpools = {
  create(call: NeutronCall): { status: number; body: Item } {
    const { items, bulk } = parseResourceBody(call.body, 'subnetpool', 'subnetpools', specs, 'POST');
    const created: SubnetPoolRecord[] = [];
    try {
      for (const attrs of items) {
        const project = targetProject(call, attrs);
        checkQuota(call.store, project, 'subnetpool');
        const prefixes = parsePrefixes(attrs.prefixes as unknown[]);
        const version = prefixes[0]?.version ?? 4;
        const min = (attrs.min_prefixlen as number | undefined) ?? (version === 4 ? 8 : 64);
        const max = (attrs.max_prefixlen as number | undefined) ?? addressBits(version);
        const def = (attrs.default_prefixlen as number | undefined) ?? min;
        if (min > max || def < min || def > max || max > addressBits(version)) {
          throw neutronError(
            400,
            'IllegalSubnetPoolPrefixBounds',
            `Illegal prefix bounds: default_prefixlen=${def}, min_prefixlen=${min}.`,
          );
        }
        if (!call.ctx.isAdmin && attrs.shared === true) throw nerr.policy('rule:create_subnetpool:shared');
        const pool: SubnetPoolRecord = {
          ...call.store.std(project, (attrs.description as string | undefined) ?? '', 0),
          name: (attrs.name as string | undefined) ?? '',
          prefixes: prefixes.map(formatCidr),
          default_prefixlen: def,
          min_prefixlen: min,
          max_prefixlen: max,
          is_default: (attrs.is_default as boolean | undefined) ?? false,
          shared: (attrs.shared as boolean | undefined) ?? false,
          ip_version: version,
          default_quota: (attrs.default_quota as number | null | undefined) ?? null,
        };
        call.store.subnetpools.set(pool.id, pool);
        created.push(pool);
      }
    } catch (err) {
      for (const p of created) call.store.subnetpools.delete(p.id);
      throw err;
    }
    const out = created.map(serialize);
    return { status: 201, body: bulk ? { subnetpools: out } : { subnetpool: out[0] } };
  },

  update(call: NeutronCall, id: string): { status: number; body: Item } {
    const { items } = parseResourceBody(call.body, 'subnetpool', 'subnetpools', specs, 'PUT');
    const p = findOwned(subnetPoolKind, call, id, 'update');
    const attrs = updateAttributes(items, 'subnetpool');
    checkRevision(call, p);
    if (attrs.prefixes !== undefined) {
      const next = parsePrefixes(attrs.prefixes as unknown[]);
      // Prefixes can only grow (IllegalSubnetPoolPrefixUpdate otherwise).
      const covered = p.prefixes.every((old) => {
        const o = parseCidr(old)!.cidr;
        return next.some(
          (n) => n.network <= o.network && n.prefixLength <= o.prefixLength && n.network + cidrSize(n) > o.network,
        );
      });
      if (!covered)
        throw neutronError(
          400,
          'IllegalSubnetPoolPrefixUpdate',
          'Illegal update to prefixes: Existing prefixes must be a subset of the new prefixes.',
        );
      p.prefixes = next.map(formatCidr);
    }
    if (attrs.name !== undefined) p.name = attrs.name as string;
    if (attrs.description !== undefined) p.description = attrs.description as string;
    if (attrs.default_prefixlen !== undefined) p.default_prefixlen = attrs.default_prefixlen as number;
    if (attrs.min_prefixlen !== undefined) p.min_prefixlen = attrs.min_prefixlen as number;
    if (attrs.max_prefixlen !== undefined) p.max_prefixlen = attrs.max_prefixlen as number;
    if (attrs.is_default !== undefined) p.is_default = attrs.is_default as boolean;
    if (attrs.default_quota !== undefined) p.default_quota = attrs.default_quota as number | null;
    call.store.touch(p);
    return { status: 200, body: { subnetpool: serialize(p) } };
  },

  delete(call: NeutronCall, id: string): { status: number } {
    const p = findOwned(subnetPoolKind, call, id, 'delete');
    checkRevision(call, p);
    if ([...call.store.subnets.values()].some((s) => s.subnetpool_id === id)) {
      throw neutronError(
        400,
        'SubnetPoolDeleteError',
        'Unable to delete subnet pool: Subnet pool has existing allocations.',
      );
    }
    call.store.subnetpools.delete(id);
    return { status: 204 };
  },
};
