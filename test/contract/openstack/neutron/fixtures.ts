/**
 * Shared set-up for the Neutron contract files: a client on the target's admin session, a clean-up stack (run in
 * reverse creation order, so floating IPs go before router interfaces, ports before networks), and the networks most
 * tests need. Every name comes from `uniqueName`, and everything created is registered for deletion.
 */
import { randomBytes } from 'node:crypto';
import {
  isNotFound,
  NeutronClient,
  type Network,
  type Subnet,
  type SubnetCreate,
} from '../../../../src/openstack/index.ts';
import { teardown } from '../../../support/teardown.ts';
import { uniqueName, type ContractTarget, type TargetFactory } from '../target.ts';

export { uniqueName };

/** Runs clean-ups last-in first-out, every one (`teardown`); a 404 counts as done. */
export class Cleanup {
  readonly #steps: (() => Promise<unknown>)[] = [];

  add(step: () => Promise<unknown>): void {
    this.#steps.push(step);
  }

  async run(): Promise<void> {
    const steps = this.#steps.splice(0).reverse();
    await teardown(
      ...steps.map((step) => async () => {
        await step().catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      }),
    );
  }
}

export interface NeutronContext {
  target: ContractTarget;
  neutron: NeutronClient;
  cleanup: Cleanup;
  /** The project resources land in by default: `fake_project_id` without Keystone, the token's project with it. */
  projectId: string;
}

/** Opens the target and a client on it. */
export async function openNeutron(factory: TargetFactory): Promise<NeutronContext> {
  const target = await factory.open();
  const neutron = new NeutronClient(target.session);
  const auth = await target.session.authenticator.session();
  const projectId = target.auth === 'noauth' ? 'fake_project_id' : (auth.projectId ?? '');
  return { target, neutron, cleanup: new Cleanup(), projectId };
}

/** Cleans up, then closes the target. */
export async function closeNeutron(ctx: NeutronContext | undefined): Promise<void> {
  if (!ctx) return;
  try {
    await ctx.cleanup.run();
  } finally {
    await ctx.target.close();
  }
}

/** A tenant network with one IPv4 subnet (`cidr`), both deleted by the clean-up. */
export async function tenantNetwork(
  ctx: NeutronContext,
  cidr = '10.10.0.0/24',
  extra: Partial<SubnetCreate> = {},
): Promise<{ network: Network; subnet: Subnet }> {
  const network = await ctx.neutron.networks.create({ name: uniqueName('net') });
  ctx.cleanup.add(() => ctx.neutron.networks.delete(network.id));
  const subnet = await ctx.neutron.subnets.create({
    network_id: network.id,
    ip_version: 4,
    cidr,
    name: uniqueName('sub'),
    ...extra,
  } as SubnetCreate);
  ctx.cleanup.add(() => ctx.neutron.subnets.delete(subnet.id));
  return { network, subnet };
}

/**
 * An external flat network (admin) with a subnet `cidr` without DHCP. Each flat network needs its own physical
 * network name (409 `FlatNetworkInUse` otherwise), hence a random one.
 */
export async function externalNetwork(
  ctx: NeutronContext,
  cidr = '172.24.4.0/24',
): Promise<{ network: Network; subnet: Subnet }> {
  const network = await ctx.neutron.networks.create({
    name: uniqueName('ext'),
    'router:external': true,
    'provider:network_type': 'flat',
    'provider:physical_network': `ravenct${randomBytes(4).toString('hex')}`,
  });
  ctx.cleanup.add(() => ctx.neutron.networks.delete(network.id));
  const subnet = await ctx.neutron.subnets.create({
    network_id: network.id,
    ip_version: 4,
    cidr,
    enable_dhcp: false,
    name: uniqueName('extsub'),
  });
  ctx.cleanup.add(() => ctx.neutron.subnets.delete(subnet.id));
  return { network, subnet };
}

/**
 * Options for an `it` that checks real-Neutron behaviour the simulator does not have yet: on a sim target it runs
 * as a TODO (reported, not failing the run); on a real target it is an ordinary test. Each use names the gap; remove
 * the call once the simulator matches.
 */
export function simGap(factory: TargetFactory, gap: string): { todo?: string } {
  return factory.label.startsWith('sim/') ? { todo: `simulator differs from real Neutron: ${gap}` } : {};
}

/** A random, locally administered MAC in Neutron's `fa:16:3e` range. */
export function randomMac(): string {
  return `fa:16:3e:${[...randomBytes(3)].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;
}

/** The IPv4 addresses of a port's fixed IPs. */
export function addressesOf(port: { fixed_ips: { ip_address: string }[] }): string[] {
  return port.fixed_ips.map((f) => f.ip_address);
}
