/**
 * reconcilers: Raven's translation of Kubernetes objects into Neutron and Octavia resources. Imports core, kube/*,
 * controller and openstack.
 *
 * Layout: `network/` holds what every reconciler stands on (marks, subnet strategies, router and subnet helpers);
 * `cluster/`, `namespace/`, `pod/`, `service/`, `policy/` and `gc/` each import `network/` and nothing of each other.
 * Each wires its own controllers in its `module.ts`; `modules.ts` sets the modules up in order (the daemon calls it).
 *
 * Contract:
 * - Every reconciler is level-triggered on a key: it reads the desired state from an informer cache, finds the actual
 *   state in OpenStack by Raven's marks (tags `raven.cluster/kind/uid`, names `raven/<cluster>/…`, `device_id` = pod
 *   uid), and converges them; running it again — after a crash at any line — changes nothing more. Its outcome
 *   depends on the caches, the cloud and the key; anything else it hears of arrives as an event on a channel.
 * - Neutron tags are the record; annotations (`raven.openstack.org/vif` on pods, `raven.openstack.org/network` on
 *   namespaces) are projections for consumers, written only when they differ (one Kubernetes write per pod).
 * - Failures a user must see become Warning Events with a reason (`QuotaExceeded`, `SubnetExhausted` …) and are
 *   retried with back-off; they never stop other keys.
 * - The garbage collector deletes this cluster's resources whose owner is gone (after a grace age) and never touches
 *   anything untagged or another cluster's.
 */
export * from './network/index.ts';
export * from './cluster/index.ts';
export * from './namespace/index.ts';
export * from './pod/index.ts';
export * from './service/index.ts';
export * from './gc/index.ts';
export * from './policy/index.ts';
export * from './modules.ts';
