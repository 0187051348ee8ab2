/**
 * @raven/openstack-sim: the OpenStack simulator (the test wing, not the product). Keystone v3, Neutron v2.0 and
 * Octavia v2 as in-memory HTTP apps behind one `fetch(Request) → Response` function, answering with the same JSON
 * shapes, status codes and error bodies as real Keystone 22 / Neutron 21 / Octavia 11 (Zed) — see docs/openstack.md.
 * A behaviour that differs from real OpenStack is a bug: the contract suite runs the same tests against both.
 *
 * Contract:
 * - paths: `/identity/v3/...`, `/network/v2.0/...` (endpoint `<url>/network`), `/load-balancer/v2/...`
 *   (endpoint `<url>/load-balancer`), and the test API `/_sim/...` (faults, counters);
 * - auth `keystone` (tokens required, users admin/demo) or `noauth` (Neutron's fake_project_id, Octavia's
 *   X-Project-Id);
 * - time (Octavia's PENDING_* states, token expiry, timestamps) comes from an injected Clock, randomness from a
 *   seed; nothing here binds a port (@raven/dev's `run-openstack-sim.ts` does).
 * Imports: core only (never the real OpenStack clients in src/openstack).
 */
export { createOpenStackSim, noauthProjectId, type OpenStackSim, type OpenStackSimOptions } from './sim.ts';
export { SimFaults, routeKey, type FaultRule, type FaultRuleSpec } from './faults.ts';
export type { QuotaResource } from './neutron/store.ts';
