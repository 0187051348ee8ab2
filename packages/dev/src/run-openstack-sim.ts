import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { silentLogger, type Clock, type Logger } from '../../../src/core/index.ts';
import { createOpenStackSim, noauthProjectId, type OpenStackSim, type OpenStackSimOptions } from '@raven/openstack-sim';
import { listen } from '../../../src/daemon/http-server.ts';

export interface RunOpenStackSimOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  auth?: 'keystone' | 'noauth';
  /** Password of `admin` and `demo` (random when absent; goes into clouds.yaml, never into the logs). */
  password?: string;
  provisioningDelayMs?: number;
  tokenLifetimeMs?: number;
  octaviaLeaksVipPort?: boolean;
  /** Octavia's default provider (`amphora` unless set). */
  octaviaDefaultProvider?: OpenStackSimOptions['octaviaDefaultProvider'];
  seed?: number;
  /** Hosts where ports bind as linuxbridge (`binding:vif_type` `bridge`). */
  linuxbridgeHosts?: readonly string[];
  /** The trunk driver Neutron emulates (`ovn` unless set). */
  trunkDriver?: OpenStackSimOptions['trunkDriver'];
  clock?: Clock;
  /** Write an openstacksdk clouds.yaml here (mode 0600). */
  cloudsYamlOut?: string;
  logger?: Logger;
}

export interface RunningOpenStackSim {
  url: string;
  /** Keystone's auth URL (`<url>/identity/v3`). */
  keystoneUrl: string;
  /** Neutron's endpoint (clients append `/v2.0/...`). */
  neutronUrl: string;
  /** Octavia's endpoint (clients append `/v2/lbaas/...`). */
  octaviaUrl: string;
  adminPassword: string;
  /** The clouds.yaml text (also written to `cloudsYamlOut` when set). */
  cloudsYaml: string;
  sim: OpenStackSim;
  close(): Promise<void>;
}

/**
 * clouds.yaml for the running sim: `raven-sim` (admin) and `raven-sim-demo` (member) with password auth in keystone
 * mode; `raven-sim-noauth` with endpoint overrides in noauth mode. Its project, Octavia's X-Project-Id, is
 * `load_balancer_project_id`: under `project_id` the openstack CLI hands it to its `none` auth plugin, which fails.
 */
export function simCloudsYaml(
  auth: 'keystone' | 'noauth',
  urls: { keystoneUrl: string; neutronUrl: string; octaviaUrl: string },
  password: string,
): string {
  const passwordCloud = (user: string) => ({
    auth_type: 'password',
    auth: {
      auth_url: urls.keystoneUrl,
      username: user,
      password,
      project_name: user,
      user_domain_name: 'Default',
      project_domain_name: 'Default',
    },
    region_name: 'RegionOne',
    interface: 'public',
    identity_api_version: 3,
  });
  const clouds =
    auth === 'keystone'
      ? { 'raven-sim': passwordCloud('admin'), 'raven-sim-demo': passwordCloud('demo') }
      : {
          'raven-sim-noauth': {
            auth_type: 'none',
            network_endpoint_override: urls.neutronUrl,
            load_balancer_endpoint_override: urls.octaviaUrl,
            load_balancer_project_id: noauthProjectId,
            region_name: 'RegionOne',
          },
        };
  return `# written by raven sim openstack (auth: ${auth})\n${stringify({ clouds })}`;
}

/** Starts the OpenStack simulator on a port (loopback by default) and writes its clouds.yaml. */
export async function runOpenStackSim(options: RunOpenStackSimOptions = {}): Promise<RunningOpenStackSim> {
  const logger = options.logger ?? silentLogger;
  const host = options.host ?? '127.0.0.1';
  const auth = options.auth ?? 'keystone';
  const sim = createOpenStackSim({
    auth,
    logger,
    ...(options.password !== undefined ? { adminPassword: options.password } : {}),
    ...(options.provisioningDelayMs !== undefined ? { provisioningDelayMs: options.provisioningDelayMs } : {}),
    ...(options.tokenLifetimeMs !== undefined ? { tokenLifetimeMs: options.tokenLifetimeMs } : {}),
    ...(options.octaviaLeaksVipPort !== undefined ? { octaviaLeaksVipPort: options.octaviaLeaksVipPort } : {}),
    ...(options.octaviaDefaultProvider ? { octaviaDefaultProvider: options.octaviaDefaultProvider } : {}),
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.linuxbridgeHosts ? { linuxbridgeHosts: options.linuxbridgeHosts } : {}),
    ...(options.trunkDriver ? { trunkDriver: options.trunkDriver } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const server = await listen((request) => sim.fetch(request), {
    host,
    port: options.port ?? 0,
    portFlag: '--port',
    logger,
  }).catch((err: unknown) => {
    sim.close();
    throw err;
  });
  sim.setBaseUrl(server.url);
  const urls = {
    keystoneUrl: `${server.url}/identity/v3`,
    neutronUrl: `${server.url}/network`,
    octaviaUrl: `${server.url}/load-balancer`,
  };
  const cloudsYaml = simCloudsYaml(auth, urls, sim.adminPassword);
  if (options.cloudsYamlOut) {
    try {
      await mkdir(dirname(options.cloudsYamlOut), { recursive: true });
      await writeFile(options.cloudsYamlOut, cloudsYaml, { mode: 0o600 });
      await chmod(options.cloudsYamlOut, 0o600);
    } catch (err) {
      sim.close();
      await server.close();
      throw err;
    }
  }
  logger.info({ url: server.url, auth, cloudsYaml: options.cloudsYamlOut }, 'OpenStack simulator listening');
  return {
    url: server.url,
    ...urls,
    adminPassword: sim.adminPassword,
    cloudsYaml,
    sim,
    async close() {
      sim.close();
      await server.close();
    },
  };
}
