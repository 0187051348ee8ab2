import { z } from 'zod';
import {
  CniError,
  CniErrorCode,
  netConfBaseSchema,
  netConfListSchema,
  SUPPORTED_VERSIONS,
  type CniVersion,
} from './spec/index.ts';

/** Where OVS's own tools look for its database. */
const OVS_DATABASE = 'unix:/var/run/openvswitch/db.sock';

/**
 * `raven-cni`'s network configuration: the spec's keys plus where the node's credentials are. Both files are read,
 * never logged: a kubeconfig that may read pods, and a clouds.yaml that may read Neutron ports, subnets and networks.
 */
export const ravenCniConfSchema = netConfBaseSchema.extend({
  type: z.literal('raven-cni'),
  /** A kubeconfig that can get and watch pods. */
  kubeconfig: z.string().min(1),
  /** A clouds.yaml with the cloud to read Neutron from. */
  cloudsYaml: z.string().min(1),
  /** The cloud's name in `cloudsYaml`; default: its only cloud. */
  cloud: z.string().min(1).optional(),
  /** This node's name: the Neutron agent's `host` and every local port's `binding:host_id`. Default: the hostname. */
  nodeName: z.string().min(1).optional(),
  /**
   * The unix socket of this node's `raven node` daemon. When set, the plugin only forwards the call there: the daemon
   * holds the connections, so a call pays neither the full start-up nor a new Keystone token (docs/cni.md).
   */
  daemonSocket: z.string().min(1).optional(),
  /**
   * The VIF key this node shares with Raven (a file of at least 32 bytes, mounted from a Secret). With it, a VIF that
   * Raven signed for this node is plugged without asking Neutron (docs/pools.md, "Signed VIFs"); without it, or for
   * any VIF whose signature does not hold, the port is verified against Neutron.
   */
  vifKeyFile: z.string().min(1).optional(),
  /**
   * The Lease Raven's replicas elect their leader on (with leader election): a signature is trusted alone only when
   * made in the Lease's current term, so a leader paused past its Lease cannot be trusted without Neutron.
   */
  leaderLease: z.object({ namespace: z.string().min(1), name: z.string().min(1) }).optional(),
  /**
   * `host` (default): this node is a hypervisor-like host whose Neutron agent binds the pods' ports (`bridge`, `ovs`).
   * `nested`: this node is a Nova VM and every pod's port is a subport of the VM's trunk, reached through a VLAN
   * sub-interface of the VM's NIC (docs/cni.md, "Nested mode"). Each mode refuses the other's VIFs.
   */
  mode: z.enum(['host', 'nested']).default('host'),
  /**
   * Nested mode: this VM's Nova server id, the `device_id` of its own port (the trunk's parent). Unset: read from the
   * Node's `spec.providerID` (`openstack:///<server id>`, as the OpenStack cloud provider sets it).
   */
  serverId: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/)
    .optional(),
  /** Where this node records which sandbox holds which port (a tmpfs: a reboot ends every sandbox). */
  stateDir: z.string().min(1).default('/run/raven-cni'),
  /** How long ADD waits for Raven to write the pod's VIF annotation before it answers "try again later". */
  vifTimeoutSeconds: z.number().positive().max(600).default(60),
  /** This node's Open vSwitch, for ports Neutron binds as `ovs` (ML2/OVN, ML2/OVS): defaults as Neutron's and OVS's. */
  ovs: z
    .object({
      /** The integration bridge, when the port's `vif_details` name none (Neutron's `integration_bridge`). */
      bridge: z
        .string()
        .regex(/^[A-Za-z0-9_.-]{1,15}$/)
        .default('br-int'),
      /** The OVS database, as `ovs-vsctl --db` takes it (OVS's own default). */
      database: z.string().min(1).default(OVS_DATABASE),
      /** The host end's name prefix: `tap` as Nova and os-vif name it; another keeps two setups apart on one host. */
      interfacePrefix: z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,3}$/)
        .default('tap'),
      /** Each `ovs-vsctl` call's bound (its own `--timeout`, and the child process is killed a little after). */
      timeoutSeconds: z.number().positive().max(120).default(10),
    })
    .default({ bridge: 'br-int', database: OVS_DATABASE, interfacePrefix: 'tap', timeoutSeconds: 10 }),
});
export type RavenCniConf = z.infer<typeof ravenCniConfSchema>;

/** The configuration on stdin, checked: bad JSON is a decoding failure, a bad field names its path. */
export function parseRavenCniConf(stdin: string): RavenCniConf & { cniVersion: CniVersion } {
  let raw: unknown;
  try {
    raw = JSON.parse(stdin);
  } catch (err) {
    throw new CniError(CniErrorCode.DECODING_FAILURE, `the network configuration on stdin is not JSON`, { cause: err });
  }
  const parsed = ravenCniConfSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'the configuration';
    throw new CniError(CniErrorCode.INVALID_CONFIG, `network configuration: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  const conf = parsed.data;
  if (!isSupportedVersion(conf.cniVersion))
    throw new CniError(
      CniErrorCode.INCOMPATIBLE_VERSION,
      `cniVersion ${conf.cniVersion} is not supported (supported: ${SUPPORTED_VERSIONS.join(', ')})`,
    );
  return { ...conf, cniVersion: conf.cniVersion };
}

export function isSupportedVersion(version: string): version is CniVersion {
  return (SUPPORTED_VERSIONS as readonly string[]).includes(version);
}

/**
 * raven-cni's entry in a network configuration list (`.conflist`), with the list's name and version, as the runtime
 * would hand it to the plugin: what `raven node` reads its credentials and socket from.
 */
export function ravenEntryOfConflist(text: string, file: string): RavenCniConf & { cniVersion: CniVersion } {
  let list;
  try {
    list = netConfListSchema.parse(JSON.parse(text));
  } catch (err) {
    throw new CniError(CniErrorCode.INVALID_CONFIG, `${file} is not a CNI configuration list`, { cause: err });
  }
  const entry = list.plugins.find((p) => p.type === 'raven-cni');
  if (!entry) throw new CniError(CniErrorCode.INVALID_CONFIG, `${file} has no plugin of type raven-cni`);
  return parseRavenCniConf(JSON.stringify({ ...entry, cniVersion: list.cniVersion, name: list.name }));
}
