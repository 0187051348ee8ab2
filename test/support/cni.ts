/**
 * The node side for raven-cni's tests: a real API server and the OpenStack simulator (noauth, ports on `nodeName`
 * bind as linuxbridge), their credentials as files (as a node has them), a plugin directory holding `raven-cni`, and
 * "Raven's part" done by hand: a port made in Neutron and a VIF annotation written for a pod.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { formatVif, VIF_ANNOTATION, POD_DEVICE_OWNER, type Pod, type Vif } from '../../src/kube/api/index.ts';
import { KubeClient, resources } from '../../src/kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession, type Port } from '../../src/openstack/index.ts';
export { execPlugin, CniCallError } from '@raven/cluster-sim';
import { runOpenStackSim, type RunningOpenStackSim } from './openstack-sim.ts';
import { startTestServer, testConnection, type TestServer } from './server.ts';

/** `bin/raven-cni.js`: the plugin from the sources, as the runtime would run it. */
export const ravenCniBin = new URL('../../bin/raven-cni.js', import.meta.url).pathname;

export interface CniNode {
  nodeName: string;
  server: TestServer;
  openstack: RunningOpenStackSim;
  kube: KubeClient;
  neutron: NeutronClient;
  /** The node's credentials, as files. */
  kubeconfig: string;
  cloudsYaml: string;
  /** A temporary directory of this node's own (sockets), removed by close(). */
  dir: string;
  networkId: string;
  subnetId: string;
  /** raven-cni's network configuration for this node (extra keys override). */
  conf(extra?: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startCniNode(nodeName = 'node-cni'): Promise<CniNode> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-cni-'));
  const server = await startTestServer();
  const cloudsYaml = join(dir, 'clouds.yaml');
  const openstack = await runOpenStackSim({ auth: 'noauth', linuxbridgeHosts: [nodeName], cloudsYamlOut: cloudsYaml });
  const kube = new KubeClient({ connection: testConnection(server) });
  const session = new OpenStackSession({ cloud: loadCloudConfig({ env: { OS_CLIENT_CONFIG_FILE: cloudsYaml } }) });
  const neutron = new NeutronClient(session);
  const network = await neutron.networks.create({ name: 'cni-test' });
  const subnet = await neutron.subnets.create({
    network_id: network.id,
    ip_version: 4,
    cidr: '10.66.0.0/24',
    gateway_ip: '10.66.0.1',
    enable_dhcp: false,
  });
  return {
    nodeName,
    server,
    openstack,
    kube,
    neutron,
    kubeconfig: server.kubeconfig,
    cloudsYaml,
    dir,
    networkId: network.id,
    subnetId: subnet.id,
    conf: (extra = {}) => ({
      cniVersion: '1.0.0',
      name: 'raven',
      type: 'raven-cni',
      kubeconfig: server.kubeconfig,
      cloudsYaml,
      nodeName,
      vifTimeoutSeconds: 5,
      stateDir: join(dir, 'state'),
      ...extra,
    }),
    async close() {
      await Promise.all([kube.close(), session.close()]);
      await Promise.all([server.close(), openstack.close()]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A pod (with `annotations`) in namespace `default`, as the API stores it. */
export function createPod(node: CniNode, name: string, annotations: Record<string, string> = {}): Promise<Pod> {
  return node.kube.create(resources.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', annotations },
    spec: { nodeName: node.nodeName, containers: [{ name: 'app', image: 'app' }] },
  });
}

/** What Raven does for a pod: a `compute:raven` port with `device_id` = its uid, bound to `host`. */
export function createPodPort(node: CniNode, pod: Pod, host = node.nodeName): Promise<Port> {
  return node.neutron.ports.create({
    network_id: node.networkId,
    fixed_ips: [{ subnet_id: node.subnetId }],
    device_id: pod.metadata.uid ?? '',
    device_owner: POD_DEVICE_OWNER,
    'binding:host_id': host,
  });
}

/** A warm pool's port on this node: bound, no owner yet (its claim has not reached Neutron). */
export function createPoolPort(node: CniNode): Promise<Port> {
  return node.neutron.ports.create({
    network_id: node.networkId,
    fixed_ips: [{ subnet_id: node.subnetId }],
    device_id: '',
    device_owner: POD_DEVICE_OWNER,
    'binding:host_id': node.nodeName,
  });
}

/** The VIF annotation Raven writes for `port`, for the pod with `podUid`. */
export function vifFor(node: CniNode, port: Port, podUid: string): Vif {
  return {
    version: 1,
    podUid,
    portId: port.id,
    networkId: port.network_id,
    subnetId: node.subnetId,
    mac: port.mac_address,
    ips: port.fixed_ips.map((ip) => ({ address: ip.ip_address, prefixLength: 24, gateway: '10.66.0.1' })),
    mtu: 1450,
    active: false,
  };
}

/** Writes the VIF annotation on the pod (a merge patch, as Raven does). */
export async function annotate(node: CniNode, pod: Pod, vif: Vif): Promise<void> {
  await node.kube.patch(
    resources.pods,
    pod.metadata.name ?? '',
    'default',
    { metadata: { annotations: { [VIF_ANNOTATION]: formatVif(vif) } } },
    'merge',
  );
}

/**
 * Writes up to `bytes` with no newline to the unix socket at `socketPath`, as fast as the other end reads, until it
 * closes the connection: what it answered, and how many bytes were sent by then (issue 26, row 12: a 50 MB line made
 * `raven node` grow to 273 MB).
 */
export function floodSocket(socketPath: string, bytes: number): Promise<{ answer: string; sent: number }> {
  const client = connect(socketPath);
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let answer = '';
  let sent = 0;
  client.setEncoding('utf8');
  client.on('data', (d: string) => (answer += d));
  client.on('error', () => undefined); // EPIPE once the other end has closed: expected.
  const write = (): void => {
    while (sent < bytes && !client.destroyed) {
      sent += chunk.length;
      if (!client.write(chunk)) return void client.once('drain', write);
    }
  };
  client.once('connect', write);
  return new Promise((resolve) => client.once('close', () => resolve({ answer, sent })));
}
