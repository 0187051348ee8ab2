import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { RavenError } from '../../../src/core/index.ts';
import { DataplaneRuntime, type DataplaneRuntimeOptions } from '@raven/cluster-sim';
import { openNodeConnections, startNodeDaemon, type NodeDaemonOptions } from '../../../src/cni/index.ts';
import type { NetConfList } from '../../../src/cni/spec/index.ts';
import { bundleRavenCni } from '../../../src/daemon/cni-bundle.ts';
import type { RavenConfig } from '../../../src/daemon/config/index.ts';

/** What `scripts/dataplane/rig.sh start` writes into its env file: how to reach the rig's Neutron, and its node. */
export interface DataplaneRig {
  neutronUrl: string;
  cloudsYaml: string;
  cloud: string;
  /** The Neutron agents' host (the OVN chassis): the Kubernetes node whose pods are plugged for real. */
  host: string;
  /** `linuxbridge`, or `ovn` (ML2/OVN: raven-cni plugs into the rig's Open vSwitch). */
  backend: 'linuxbridge' | 'ovn';
  /** The rig's Open vSwitch (OVN backend): raven-cni's `ovs` configuration. */
  ovs?: { database: string; bridge: string; interfacePrefix: string };
  /** The pods' host-end name prefix (`tap` for linuxbridge) and network namespaces' prefix. */
  interfacePrefix: string;
  netnsPrefix: string;
  /**
   * The rig's Octavia, when it runs one (the OVN rig, with the `ovn` provider: the clouds.yaml names it too):
   * Services are translated, with this provider.
   */
  octavia?: { url: string; provider: string };
}

/** The rig's env file (`KEY=VALUE` lines), read; a missing file or key says how to get one. */
export async function readDataplaneRig(file: string): Promise<DataplaneRig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new RavenError(
      'DATAPLANE_RIG_NOT_RUNNING',
      `${file} does not exist: start the real dataplane first (npm run dataplane:start, as root)`,
    );
  }
  const vars = new Map(
    text
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const need = (key: string) => {
    const value = vars.get(key);
    if (!value) throw new RavenError('DATAPLANE_RIG_INVALID', `${file} has no ${key}: rewrite it with rig.sh start`);
    return value;
  };
  const backend = vars.get('RAVEN_DATAPLANE_BACKEND') ?? 'linuxbridge';
  if (backend !== 'linuxbridge' && backend !== 'ovn')
    throw new RavenError('DATAPLANE_RIG_INVALID', `${file} names backend "${backend}" (linuxbridge or ovn)`);
  const interfacePrefix = vars.get('RAVEN_DATAPLANE_INTERFACE_PREFIX') ?? 'tap';
  return {
    neutronUrl: need('RAVEN_DATAPLANE_NEUTRON_URL'),
    cloudsYaml: need('RAVEN_DATAPLANE_CLOUDS'),
    cloud: need('RAVEN_DATAPLANE_CLOUD'),
    host: need('RAVEN_DATAPLANE_HOST'),
    backend,
    ...(backend === 'ovn'
      ? {
          ovs: {
            database: need('RAVEN_DATAPLANE_OVS_DATABASE'),
            bridge: need('RAVEN_DATAPLANE_OVS_BRIDGE'),
            interfacePrefix,
          },
        }
      : {}),
    interfacePrefix,
    netnsPrefix: vars.get('RAVEN_DATAPLANE_NETNS_PREFIX') ?? 'raven-pod-',
    ...(vars.get('RAVEN_DATAPLANE_OCTAVIA_URL')
      ? {
          octavia: {
            url: need('RAVEN_DATAPLANE_OCTAVIA_URL'),
            provider: need('RAVEN_DATAPLANE_OCTAVIA_PROVIDER'),
          },
        }
      : {}),
  };
}

/**
 * Raven's configuration on a dataplane rig. With the rig's Octavia (the OVN rig), Services are translated with its
 * provider, and every Service with a clusterIP gets a load balancer: the pods have no kube-proxy, Raven's load
 * balancers are what serves a clusterIP there. Without one, Services would wait for an Octavia that is not there.
 */
export function dataplaneConfig(config: RavenConfig, rig: DataplaneRig): RavenConfig {
  if (!rig.octavia) return { ...config, translations: { ...config.translations, services: false } };
  const provider = config.loadBalancer.provider ?? rig.octavia.provider;
  return { ...config, emulateKubeProxy: true, loadBalancer: { ...config.loadBalancer, provider } };
}

/** A plugin directory holding `raven-cni`, freshly bundled from the sources (as installed on a node), for `CNI_PATH`. */
export async function ravenCniDir(dir: string): Promise<string> {
  await bundleRavenCni(dir);
  return resolve(dir);
}

/**
 * raven-cni's network configuration list for a node of `rig`, with `chain` after it; with `daemonSocket`, the plugin
 * forwards its calls to `raven node` there.
 */
export function ravenConflist(
  rig: DataplaneRig,
  kubeconfig: string,
  chain: NetConfList['plugins'] = [],
  daemonSocket?: string,
  node: NodeFiles = {},
): NetConfList {
  return {
    cniVersion: '1.0.0',
    name: 'raven',
    plugins: [
      {
        type: 'raven-cni',
        kubeconfig: resolve(kubeconfig),
        cloudsYaml: resolve(rig.cloudsYaml),
        cloud: rig.cloud,
        nodeName: rig.host,
        ...(daemonSocket ? { daemonSocket } : {}),
        ...(rig.ovs ? { ovs: rig.ovs } : {}),
        ...(node.vifKeyFile ? { vifKeyFile: resolve(node.vifKeyFile) } : {}),
        ...(node.stateDir ? { stateDir: resolve(node.stateDir) } : {}),
        vifTimeoutSeconds: 60,
      },
      ...chain,
    ],
  };
}

/** The node's own files in raven-cni's configuration: the VIF key it shares with Raven, where it keeps its state. */
export interface NodeFiles {
  vifKeyFile?: string | undefined;
  stateDir?: string | undefined;
}

/** The container runtime stand-in for the rig's node: raven-cni (and `chain`) from `pluginDirs`. */
export function dataplaneRuntime(
  rig: DataplaneRig,
  options: {
    kubeconfig: string;
    pluginDirs: string[];
    chain?: NetConfList['plugins'];
    daemonSocket?: string;
    node?: NodeFiles;
  } & Pick<DataplaneRuntimeOptions, 'logger'>,
): DataplaneRuntime {
  return new DataplaneRuntime({
    nodes: [rig.host],
    conflist: ravenConflist(rig, options.kubeconfig, options.chain, options.daemonSocket, options.node),
    pluginDirs: options.pluginDirs,
    netnsPrefix: rig.netnsPrefix,
    logger: options.logger,
  });
}

/**
 * `raven node` for the rig's node, in this process: serves raven-cni's forwarded calls on `socketPath` with the
 * credentials the conflist gives the plugin. Resolves once it listens; `stopped` ends when `signal` aborts.
 */
export async function startRigNode(
  rig: DataplaneRig,
  options: { kubeconfig: string; socketPath: string } & Pick<NodeDaemonOptions, 'log'>,
  signal: AbortSignal,
): Promise<{ stopped: Promise<void> }> {
  const connections = await openNodeConnections({
    kubeconfig: resolve(options.kubeconfig),
    cloudsYaml: resolve(rig.cloudsYaml),
    cloud: rig.cloud,
  });
  const { socketPath, log } = options;
  return startNodeDaemon({ socketPath, log, connections }, signal);
}
