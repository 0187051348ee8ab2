/**
 * Shared pieces of the Octavia contract tests: a Neutron network + subnet for VIPs (raw requests, so these tests do
 * not depend on the Neutron client), bounded waits (tests may wait; the client never does), and clean-up that also
 * removes the VIP ports real Octavia leaves behind (docs/openstack.md, "Octavia").
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  isImmutable,
  isNotFound,
  provisioningState,
  type LoadBalancer,
  type OctaviaClient,
  type OpenStackError,
  type OpenStackSession,
} from '../../../src/openstack/index.ts';
import type { ContractTarget } from './target.ts';

/** How long a target may take: real Octavia needs ~1 s per step on a busy 2-core machine; the sim is set to 50 ms. */
export function budget(target: ContractTarget): { waitMs: number; pollMs: number } {
  return target.kind === 'real' ? { waitMs: 30_000, pollMs: 200 } : { waitMs: 5_000, pollMs: 20 };
}

export interface VipNetwork {
  networkId: string;
  subnetId: string;
  /**
   * `10.77.0.0/24`: member and VIP addresses in the tests come from here. Those a test names itself are below
   * `.100`, out of the allocation pool, so an address Neutron picks for another VIP never takes one of them.
   */
  cidr: string;
}

export const vipCidr = '10.77.0.0/24';

/** A tenant network with one IPv4 subnet, for `vip_subnet_id`. */
export async function createVipNetwork(session: OpenStackSession, name: string): Promise<VipNetwork> {
  const net = await session.request<{ network: { id: string } }>({
    service: 'network',
    method: 'POST',
    path: '/v2.0/networks',
    body: { network: { name } },
  });
  const subnet = await session.request<{ subnet: { id: string } }>({
    service: 'network',
    method: 'POST',
    path: '/v2.0/subnets',
    body: {
      subnet: {
        name,
        network_id: net.body.network.id,
        cidr: vipCidr,
        ip_version: 4,
        allocation_pools: [{ start: '10.77.0.100', end: '10.77.0.254' }],
      },
    },
  });
  return { networkId: net.body.network.id, subnetId: subnet.body.subnet.id, cidr: vipCidr };
}

/** Deletes every port left on the network (VIP ports outlive their load balancers), then the subnet and network. */
export async function deleteVipNetwork(session: OpenStackSession, net: VipNetwork): Promise<void> {
  const { body } = await session.request<{ ports: { id: string }[] }>({
    service: 'network',
    method: 'GET',
    path: '/v2.0/ports',
    query: { network_id: net.networkId, fields: 'id' },
  });
  for (const port of body.ports)
    await ignoreNotFound(session.request({ service: 'network', method: 'DELETE', path: `/v2.0/ports/${port.id}` }));
  await ignoreNotFound(
    session.request({ service: 'network', method: 'DELETE', path: `/v2.0/subnets/${net.subnetId}` }),
  );
  await ignoreNotFound(
    session.request({ service: 'network', method: 'DELETE', path: `/v2.0/networks/${net.networkId}` }),
  );
}

export interface Port {
  id: string;
  name: string;
  device_owner: string;
  device_id: string;
  admin_state_up: boolean;
  project_id: string;
  fixed_ips: { subnet_id: string; ip_address: string }[];
}

/** The Neutron port, or undefined when it does not exist. */
export async function findPort(session: OpenStackSession, id: string): Promise<Port | undefined> {
  try {
    return (await session.request<{ port: Port }>({ service: 'network', method: 'GET', path: `/v2.0/ports/${id}` }))
      .body.port;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function ignoreNotFound(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Polls `probe` until `done` holds, for at most `waitMs`; fails with the last value seen. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  limits: { waitMs: number; pollMs: number },
): Promise<T> {
  const deadline = Date.now() + limits.waitMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline)
      assert.fail(
        `${what}: still not there after ${limits.waitMs} ms; last seen ${JSON.stringify(value)?.slice(0, 400)}`,
      );
    await sleep(limits.pollMs);
  }
}

/** Waits for the load balancer (and so every change below it) to settle in ACTIVE; fails at once on ERROR. */
export async function waitForActive(
  octavia: OctaviaClient,
  lbId: string,
  limits: { waitMs: number; pollMs: number },
): Promise<LoadBalancer> {
  const lb = await waitFor(
    `load balancer ${lbId} ACTIVE`,
    () => octavia.loadBalancers.find(lbId),
    (v) => provisioningState(v).state !== 'PENDING',
    limits,
  );
  assert.equal(
    lb?.provisioning_status,
    'ACTIVE',
    `load balancer ${lbId} settled in ${lb?.provisioning_status ?? 'nothing (404)'}`,
  );
  return lb;
}

/** Waits until GET answers 404. */
export async function waitForGone(
  what: string,
  find: () => Promise<unknown>,
  limits: { waitMs: number; pollMs: number },
): Promise<void> {
  await waitFor(`${what} gone`, find, (v) => v === undefined, limits);
}

/**
 * Best-effort clean-up of a load balancer from a test: cascade delete (retrying while it is busy), then wait for the
 * 404. The VIP port is left for {@link deleteVipNetwork}.
 */
export async function removeLoadBalancer(
  octavia: OctaviaClient,
  lbId: string,
  limits: { waitMs: number; pollMs: number },
): Promise<void> {
  await waitFor(
    `cascade delete of ${lbId} accepted`,
    async () => {
      try {
        await octavia.loadBalancers.delete(lbId, { cascade: true });
        return true;
      } catch (err) {
        if (isImmutable(err)) return false;
        throw err;
      }
    },
    (v) => v,
    limits,
  );
  await waitForGone(`load balancer ${lbId}`, () => octavia.loadBalancers.find(lbId), limits);
}

/**
 * Makes the load balancer busy, then at once sends a change that must be refused with Octavia's "busy" 409. The
 * window is short (the sim's 50 ms, real Octavia's 0.25 – 1 s), so a slow machine may miss it: then the test settles
 * and tries again, up to `attempts` times. `poke` must be harmless when it does get through.
 */
export async function expectBusy(
  makeBusy: () => Promise<unknown>,
  poke: () => Promise<unknown>,
  settle: () => Promise<unknown>,
  attempts = 5,
): Promise<OpenStackError> {
  for (let attempt = 1; ; attempt++) {
    await makeBusy();
    try {
      await poke();
    } catch (err) {
      assert.ok(isImmutable(err), `expected the busy 409, got ${String(err)}`);
      return err;
    }
    assert.ok(
      attempt < attempts,
      `a change right behind another was accepted ${attempts} times: the load balancer never looked busy`,
    );
    await settle();
  }
}

/**
 * The project the target's Octavia puts new objects in: the token's project, or the cloud's `project_id` without
 * Keystone.
 */
export async function callerProject(target: ContractTarget): Promise<string | undefined> {
  return target.auth === 'noauth' ? target.cloud.projectId : (await target.session.authenticator.session()).projectId;
}
