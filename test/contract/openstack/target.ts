/**
 * The contract suite's targets: the same tests run against the OpenStack simulator (in `npm test`) and against real
 * Keystone/Neutron/Octavia from Debian packages (`npm run test:openstack`, which starts them with
 * scripts/openstack/real-openstack.sh and sets the variables below).
 *
 * - `RAVEN_OPENSTACK_TARGET=sim` (default): a fresh simulator per target on 127.0.0.1, port 0, once with Keystone
 *   auth and once without.
 * - `RAVEN_OPENSTACK_TARGET=real`: the clouds in `RAVEN_OPENSTACK_CLOUDS` (the script's clouds.yaml); which auth
 *   modes run is `RAVEN_OPENSTACK_AUTH` (`keystone`, `noauth` or `both`; default both): clouds `raven-real` and
 *   `raven-real-noauth`.
 * Tests must name what they create uniquely (`uniqueName`) and delete it, so they can share a long-lived real cloud.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCloudConfig, OpenStackSession, type CloudConfig } from '../../../src/openstack/index.ts';
import { runOpenStackSim } from '@raven/dev';

export type AuthMode = 'keystone' | 'noauth';

export interface ContractTarget {
  /** e.g. `sim/keystone`, `real/noauth`: goes into test names. */
  label: string;
  kind: 'sim' | 'real';
  auth: AuthMode;
  cloud: CloudConfig;
  /** An admin session on the target. */
  session: OpenStackSession;
  close(): Promise<void>;
}

export interface TargetFactory {
  label: string;
  open(): Promise<ContractTarget>;
}

function modes(): AuthMode[] {
  const wanted = process.env.RAVEN_OPENSTACK_AUTH ?? 'both';
  if (wanted === 'both') return ['keystone', 'noauth'];
  if (wanted === 'keystone' || wanted === 'noauth') return [wanted];
  throw new Error(`RAVEN_OPENSTACK_AUTH must be keystone, noauth or both, not "${wanted}"`);
}

/** The targets this run covers; a contract test file runs its `describe` once per target. */
export function contractTargets(): TargetFactory[] {
  const kind = process.env.RAVEN_OPENSTACK_TARGET ?? 'sim';
  if (kind !== 'sim' && kind !== 'real') throw new Error(`RAVEN_OPENSTACK_TARGET must be sim or real, not "${kind}"`);
  return modes().map((auth) => ({
    label: `${kind}/${auth}`,
    open: () => (kind === 'sim' ? openSim(auth) : openReal(auth)),
  }));
}

async function openSim(auth: AuthMode): Promise<ContractTarget> {
  const cloudsYamlOut = join(mkdtempSync(join(tmpdir(), 'raven-sim-')), 'clouds.yaml');
  // The real targets' trunk driver (real-openstack.sh's raven_dev): wires nothing, cannot trunk a bound port.
  const sim = await runOpenStackSim({
    port: 0,
    auth,
    provisioningDelayMs: 50,
    cloudsYamlOut,
    trunkDriver: 'inert',
  });
  const cloud = loadCloudConfig({
    cloud: auth === 'keystone' ? 'raven-sim' : 'raven-sim-noauth',
    env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut },
  });
  const session = new OpenStackSession({ cloud });
  return {
    label: `sim/${auth}`,
    kind: 'sim',
    auth,
    cloud,
    session,
    close: async () => {
      await session.close();
      await sim.close();
    },
  };
}

function openReal(auth: AuthMode): Promise<ContractTarget> {
  const file = process.env.RAVEN_OPENSTACK_CLOUDS;
  if (!file)
    throw new Error(
      'RAVEN_OPENSTACK_TARGET=real needs RAVEN_OPENSTACK_CLOUDS (the clouds.yaml scripts/openstack/real-openstack.sh writes)',
    );
  const cloud = loadCloudConfig({
    cloud: auth === 'keystone' ? 'raven-real' : 'raven-real-noauth',
    env: { OS_CLIENT_CONFIG_FILE: file },
  });
  // A 100-port bulk create takes 10–20 s on a 2-core Neutron (docs/openstack.md, "Neutron").
  const session = new OpenStackSession({ cloud, timeoutMs: 120_000 });
  return Promise.resolve({ label: `real/${auth}`, kind: 'real', auth, cloud, session, close: () => session.close() });
}

/**
 * The targets of the OVN provider's contract (octavia-ovn-provider.test.ts): the simulator as usual, or — with
 * `RAVEN_OPENSTACK_TARGET=real` — the cloud `RAVEN_OVN_OCTAVIA_CLOUD` (default `dataplane-ovn`) of the clouds.yaml
 * `RAVEN_OVN_OCTAVIA_CLOUDS` names, a real Octavia with ML2/OVN and the `ovn` provider; without that variable the
 * usual real targets, where the file skips itself when their Octavia has no `ovn` provider.
 */
export function ovnProviderTargets(): TargetFactory[] {
  const file = process.env.RAVEN_OVN_OCTAVIA_CLOUDS;
  if ((process.env.RAVEN_OPENSTACK_TARGET ?? 'sim') !== 'real' || !file) return contractTargets();
  const name = process.env.RAVEN_OVN_OCTAVIA_CLOUD ?? 'dataplane-ovn';
  const open = (): Promise<ContractTarget> => {
    const cloud = loadCloudConfig({ cloud: name, env: { OS_CLIENT_CONFIG_FILE: file } });
    const auth: AuthMode = cloud.auth.type === 'none' ? 'noauth' : 'keystone';
    const session = new OpenStackSession({ cloud, timeoutMs: 120_000 });
    const label = `real-ovn/${auth}`;
    return Promise.resolve({ label, kind: 'real', auth, cloud, session, close: () => session.close() });
  };
  return [{ label: `real-ovn/${name}`, open }];
}

/** A name no other test (or earlier run against a shared cloud) uses: `raven-ct-<what>-<random>`. */
export function uniqueName(what: string): string {
  return `raven-ct-${what}-${randomBytes(4).toString('hex')}`;
}
