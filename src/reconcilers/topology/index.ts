/**
 * reconcilers/topology: the live topology view's data, composed from the shared caches and each translation
 * module's read-only view (its records: pod ports and pools, load balancers as last seen, security groups, namespace
 * networks) and the Event recorder's latest Event per object. It imports the modules; none imports it.
 *
 * Contract: {@link topologySource} reads memory only — building a snapshot makes no Kubernetes or OpenStack request —
 * and answers the shape `dashboard/shape.ts` declares (docs/topology.md).
 */
export { topologySource, type TopologyInputs } from './topology.ts';
