import type { Endpoints } from '../../kube/api/index.ts';

/** What Raven keeps of a core/v1 Endpoints object: identity and, per subset, the ready addresses' IPs and the ports. */
export interface CachedEndpoints extends Endpoints {
  subsets: { addresses: { ip: string }[]; ports: { name?: string; port: number; protocol?: string }[] }[];
}

/**
 * Trims an Endpoints object to a {@link CachedEndpoints}: not managedFields, annotations, `notReadyAddresses` (never
 * members) or each address's `targetRef`, `nodeName` and `hostname`. Every Service of a real cluster has one, so the
 * fallback must cost little when unused.
 */
export function trimEndpoints(endpoints: Endpoints): CachedEndpoints {
  const m = endpoints.metadata;
  return {
    apiVersion: endpoints.apiVersion,
    kind: endpoints.kind,
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion },
    // A subset with no ready address adds no member.
    subsets: (endpoints.subsets ?? [])
      .filter((s) => (s.addresses?.length ?? 0) > 0)
      .map((s) => ({
        addresses: (s.addresses ?? []).map((a) => ({ ip: a.ip })),
        ports: (s.ports ?? []).map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })),
      })),
  };
}
