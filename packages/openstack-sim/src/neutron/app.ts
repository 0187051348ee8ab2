import { neutronError } from '../http.ts';
import { canSee, findVisible, type Kind, type NeutronCall } from './common.ts';
import { extensions } from './extensions.ts';
import { floatingIpKind, floatingips } from './floatingips.ts';
import { networkKind, networks } from './networks.ts';
import { portKind, ports } from './ports.ts';
import { listBody, selectFields } from './query.ts';
import { handleQuotas } from './quotas.ts';
import { routerKind, routers } from './routers.ts';
import { securityGroupKind, securityGroupRuleKind, securityGroupRules, securityGroups } from './security-groups.ts';
import { subnetPoolKind, subnetpools } from './subnetpools.ts';
import { subnetKind, subnets } from './subnets.ts';
import { handleTags } from './tags.ts';
import { trunkKind, trunks } from './trunks.ts';

/** Routes `/v2.0/...` of the Neutron API to the resource handlers. */
export interface NeutronResult {
  status: number;
  /** `null` is sent as a literal JSON `null` (`PUT …/tags/{t}`); undefined sends no body. */
  body?: unknown;
}

interface Handlers {
  kind: Kind<never>;
  create?(call: NeutronCall): NeutronResult;
  update?(call: NeutronCall, id: string): NeutronResult;
  delete?(call: NeutronCall, id: string): NeutronResult;
  beforeList?(call: NeutronCall): void;
  taggable: boolean;
}

function entry<R extends { id: string; project_id: string; tags: string[] }>(
  kind: Kind<R>,
  rest: Omit<Handlers, 'kind'>,
): Handlers {
  return { kind: kind as unknown as Kind<never>, ...rest };
}

const collections: Record<string, Handlers> = {
  networks: entry(networkKind, { ...networks, taggable: true }),
  subnets: entry(subnetKind, { ...subnets, taggable: true }),
  subnetpools: entry(subnetPoolKind, { ...subnetpools, taggable: true }),
  ports: entry(portKind, { ...ports, taggable: true }),
  routers: entry(routerKind, { ...routers, taggable: true }),
  floatingips: entry(floatingIpKind, { ...floatingips, taggable: true }),
  'security-groups': entry(securityGroupKind, {
    ...securityGroups,
    beforeList: (call: NeutronCall) => securityGroups.list(call),
    taggable: true,
  }),
  'security-group-rules': entry(securityGroupRuleKind, { ...securityGroupRules, taggable: false }),
  trunks: entry(trunkKind, { ...trunks, taggable: true }),
};

/** The trunk's member actions and their verbs (Zed routes another verb on them to a 405). */
const trunkActions: Record<string, string> = { add_subports: 'PUT', remove_subports: 'PUT', get_subports: 'GET' };

// pecan's `abort(405)` text.
const notAllowed = () =>
  neutronError(
    405,
    'HTTPMethodNotAllowed',
    'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  );
const noSuchPath = () => neutronError(404, 'HTTPNotFound', 'The resource could not be found.');

function list(h: Handlers, call: NeutronCall): NeutronResult {
  h.beforeList?.(call);
  const kind = h.kind as unknown as Kind<{ id: string; project_id: string; tags: string[] }>;
  const map = kind.map(call.store);
  const items = [...map.values()].filter((r) => canSee(kind, r, call)).map((r) => kind.serialize(r, call, 'list'));
  const body = listBody(items, {
    plural: kind.plural,
    href: `${call.href}/${kind.path}`,
    query: call.query,
    attributes: kind.attributes,
    lookup: (id) => {
      const r = map.get(id);
      return r && canSee(kind, r, call) ? kind.serialize(r, call, 'list') : undefined;
    },
    notFound: (id) => kind.notFound(id),
    ...(kind.special ? { special: kind.special } : {}),
    ...(kind.filterTypes ? { filterTypes: kind.filterTypes } : {}),
    ...(kind.missingMarker ? { missingMarker: kind.missingMarker } : {}),
  });
  return { status: 200, body };
}

/** Handles one Neutron API request below `/v2.0` (`segments` is the path after it). */
export function handleNeutron(call: NeutronCall, method: string, segments: string[]): NeutronResult {
  const [first, id, sub, subId, ...more] = segments;
  if (first === undefined) {
    if (method !== 'GET') throw notAllowed();
    const resources = ['network', 'subnet', 'subnetpool', 'port'].map((name) => ({
      name,
      collection: `${name}s`,
      links: [{ rel: 'self', href: `${call.href}/${name}s` }],
    }));
    return { status: 200, body: { resources } };
  }
  if (more.length > 0) throw noSuchPath();
  if (first === 'extensions') {
    if (id === undefined) return { status: 200, body: { extensions } };
    const ext = extensions.find((e) => e.alias === id);
    if (!ext) throw neutronError(404, 'HTTPNotFound', `Extension with alias ${id} does not exist`);
    return { status: 200, body: { extension: ext } };
  }
  if (first === 'quotas') return handleQuotas(call, method, id, sub);
  const h = collections[first];
  if (!h) throw noSuchPath();
  if (id === undefined) {
    if (method === 'GET') return list(h, call);
    if (method === 'POST' && h.create) return h.create(call);
    // Zed routes a PUT or DELETE on the collection as one on the member `None`.
    if (method === 'PUT' || method === 'DELETE') throw h.kind.notFound('None');
    throw notAllowed();
  }
  if (sub === 'tags' && h.taggable)
    return handleTags(
      h.kind as unknown as Kind<{
        id: string;
        project_id: string;
        tags: string[];
        revision_number: number;
        updated_at: string;
      }>,
      call,
      method,
      id,
      subId,
    );
  if (first === 'routers' && method === 'PUT' && subId === undefined) {
    if (sub === 'add_router_interface') return routers.addInterface(call, id);
    if (sub === 'remove_router_interface') return routers.removeInterface(call, id);
  }
  if (first === 'trunks' && subId === undefined) {
    const action = sub === undefined ? undefined : trunkActions[sub];
    if (action !== undefined && method !== action) throw notAllowed();
    if (sub === 'add_subports') return trunks.addSubports(call, id);
    if (sub === 'remove_subports') return trunks.removeSubports(call, id);
    if (sub === 'get_subports') return trunks.getSubports(call, id);
  }
  if (sub !== undefined) throw noSuchPath();
  if (method === 'GET') {
    const kind = h.kind as unknown as Kind<{ id: string; project_id: string; tags: string[] }>;
    const r = findVisible(kind, call, id);
    return {
      status: 200,
      body: { [kind.singular]: selectFields(kind.serialize(r, call, 'show'), call.query.getAll('fields')) },
    };
  }
  if (method === 'PUT' && h.update) return h.update(call, id);
  if (method === 'DELETE' && h.delete) return h.delete(call, id);
  throw notAllowed();
}
