import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { apiErrors } from '../http/errors.ts';
import { storageKeyOf, type ResourceDef } from '../resources/index.ts';
import { parseQuantity } from '../validation/index.ts';
import type { ApiContext, Target } from './context.ts';

/** ResourceQuotas' table. */
const QUOTAS = '/resourcequotas';

interface QuotaObject extends KubeObject {
  spec?: { hard?: Record<string, string> };
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

/**
 * What one object counts for against a quota, by quota resource name, as upstream's evaluators count: every
 * namespaced object `count/<resource>[.<group>]`; the core kinds' own names (`pods` not yet finished, `services`,
 * `services.loadbalancers`, `services.nodeports`, `configmaps`, `secrets`, `resourcequotas`…).
 */
function usageOf(def: ResourceDef, obj: KubeObject): Map<string, number> {
  const usage = new Map([[def.group ? `count/${def.resource}.${def.group}` : `count/${def.resource}`, 1]]);
  if (def.group !== '') return usage;
  const o = obj as { spec?: Record<string, unknown>; status?: Record<string, unknown> };
  switch (def.resource) {
    case 'pods':
      if (o.status?.phase !== 'Succeeded' && o.status?.phase !== 'Failed') usage.set('pods', 1);
      break;
    case 'services': {
      usage.set('services', 1);
      const ports = Array.isArray(o.spec?.ports) ? o.spec.ports.length : 0;
      if (o.spec?.type === 'LoadBalancer') {
        usage.set('services.loadbalancers', 1);
        if (o.spec.allocateLoadBalancerNodePorts !== false) usage.set('services.nodeports', ports);
      }
      if (o.spec?.type === 'NodePort') usage.set('services.nodeports', ports);
      break;
    }
    case 'configmaps':
    case 'secrets':
    case 'resourcequotas':
    case 'persistentvolumeclaims':
    case 'replicationcontrollers':
      usage.set(def.resource, 1);
  }
  return usage;
}

/** The resource whose objects a quota resource name counts. */
function defOf(ctx: ApiContext, name: string): ResourceDef | undefined {
  const [resource = '', ...group] = (name.startsWith('count/') ? name.slice('count/'.length) : name).split('.');
  const core = !name.startsWith('count/');
  return ctx.registry
    .all()
    .find((d) => d.namespaced && d.resource === resource && d.group === (core ? '' : group.join('.')));
}

/** What the objects of a namespace use of each quota resource name (counted from the store: never behind). */
function usedIn(ctx: ApiContext, namespace: string, names: Iterable<string>): Map<string, number> {
  const used = new Map<string, number>();
  for (const name of names) {
    const def = defOf(ctx, name);
    const objects = def ? ctx.store.list(storageKeyOf(def), namespace) : [];
    used.set(
      name,
      objects.reduce((n, o) => n + (usageOf(def!, o).get(name) ?? 0), 0),
    );
  }
  return used;
}

/** Upstream's `prettyPrint`: `name=value` of the given names, sorted, joined by commas. */
function prettyPrint(values: ReadonlyMap<string, string | number>, names: readonly string[]): string {
  return [...names]
    .sort()
    .map((n) => `${n}=${values.get(n)}`)
    .join(',');
}

const hardOf = (quota: QuotaObject): Map<string, string> => new Map(Object.entries(quota.spec?.hard ?? {}));

/**
 * The quota admission of a create, as upstream's: for each ResourceQuota of the namespace (by name) that limits
 * something the object counts for, usage + the object must stay within `spec.hard`; otherwise 403 `Forbidden`,
 * `<resource> "<name>" is forbidden: exceeded quota: <quota>, requested: …, used: …, limited: …`.
 */
export function admitQuota(ctx: ApiContext, target: Target, obj: KubeObject): void {
  const namespace = target.namespace;
  if (!target.def.namespaced || !namespace) return;
  const quotas = ctx.store.list(QUOTAS, namespace) as QuotaObject[];
  if (quotas.length === 0) return;
  const requested = usageOf(target.def, obj);
  for (const quota of [...quotas].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
    const hard = hardOf(quota);
    const limited = [...hard.keys()].filter((n) => (requested.get(n) ?? 0) > 0);
    if (limited.length === 0) continue;
    const used = usedIn(ctx, namespace, limited);
    const exceeded = limited.filter(
      (n) => used.get(n)! + requested.get(n)! > (parseQuantity(hard.get(n)!) ?? Number.POSITIVE_INFINITY),
    );
    if (exceeded.length === 0) continue;
    throw apiErrors.forbidden(
      target.def,
      obj.metadata.name ?? '',
      `exceeded quota: ${quota.metadata.name ?? ''}, requested: ${prettyPrint(requested, exceeded)}, ` +
        `used: ${prettyPrint(used, exceeded)}, limited: ${prettyPrint(hard, exceeded)}`,
    );
  }
}

/**
 * Keeps every ResourceQuota's `status` (`hard` = `spec.hard`, `used` counted) as upstream's quota controller does:
 * after any change in a namespace that has quotas, once per namespace and tick.
 */
export function watchQuotaUsage(ctx: ApiContext): () => void {
  const scheduled = new Set<string>();
  return ctx.store.subscribe((event) => {
    if (event.namespace === '' || scheduled.has(event.namespace)) return;
    if (ctx.store.count(QUOTAS, event.namespace) === 0) return;
    scheduled.add(event.namespace);
    setImmediate(() => {
      scheduled.delete(event.namespace);
      refreshQuotas(ctx, event.namespace);
    });
  });
}

function refreshQuotas(ctx: ApiContext, namespace: string): void {
  for (const quota of ctx.store.list(QUOTAS, namespace) as QuotaObject[]) {
    const hard = hardOf(quota);
    const used = usedIn(ctx, namespace, hard.keys());
    const status = {
      hard: Object.fromEntries(hard),
      used: Object.fromEntries([...used].map(([n, v]) => [n, String(v)])),
    };
    if (JSON.stringify(status) === JSON.stringify(quota.status ?? {})) continue;
    ctx.store.update(QUOTAS, { ...structuredClone(quota), status });
  }
}
