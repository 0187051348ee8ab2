/**
 * The topology view's API shape (docs/topology.md): what `GET /topology/api/snapshot` answers and each `snapshot`
 * event of `GET /topology/api/events` carries. Plain JSON: other tools may read it. Bump {@link TOPOLOGY_VERSION} on
 * any change that is not an added optional field.
 */
export const TOPOLOGY_VERSION = 1;

/** Why an object cannot make progress: the latest Warning Event Raven recorded on it. */
export interface Problem {
  reason: string;
  message: string;
  /** ISO time of the Event's latest occurrence. */
  at: string;
}

export interface SubnetView {
  subnetId: string;
  networkId: string;
  cidr: string;
  family: 4 | 6;
}

export interface ClusterView {
  clusterId: string;
  /** Whether the bootstrap has ensured the cluster network yet. */
  ready: boolean;
  routerId?: string | undefined;
  externalNetworkId?: string | undefined;
  /** The shared pod subnets (`shared` strategy), one per family. */
  podSubnets: SubnetView[];
  serviceSubnets: SubnetView[];
  subnetStrategy: string;
}

export interface PortView {
  id: string;
  mac: string;
  addresses: string[];
  networkId: string;
  /** Neutron's status is ACTIVE. */
  active: boolean;
  /** `binding:host_id`. */
  host: string;
  securityGroups: string[];
  /** Taken from a warm pool (a claim exists or existed) rather than made for the pod. */
  warm: boolean;
  /** A pool port's claim (its `device_id` and name written to Neutron): pending until it lands. */
  claim?: 'pending' | undefined;
}

export interface PodView {
  name: string;
  uid: string;
  node?: string | undefined;
  phase?: string | undefined;
  /** Raven's record of the pod's Neutron port; absent while it has none. */
  port?: PortView | undefined;
  problem?: Problem | undefined;
}

export interface MemberView {
  id: string;
  address: string;
  port: number;
}

export interface LoadBalancerView {
  id: string;
  provisioningStatus: string;
  operatingStatus: string;
  vips: string[];
  listeners: { id: string; protocol: string; port: number; allowedCidrs: string[] }[];
  pools: { id: string; protocol: string; method: string; members: MemberView[] }[];
  floatingIps: string[];
}

export interface ServiceView {
  name: string;
  uid: string;
  type: string;
  clusterIPs: string[];
  sourceRanges: string[];
  /** The Service's `loadbalancer.openstack.org/*` annotations (OCCM's options). */
  options: Record<string, string>;
  /** As Raven last saw it in Octavia; absent before the first pass that got that far. */
  loadBalancer?: LoadBalancerView | undefined;
  problem?: Problem | undefined;
}

/** One of a policy's security groups. */
export interface PolicyGroupView {
  /** The translation's id of the group. */
  id: string;
  /** `target`: the pods the policy selects (the group holds its rules); `peer`: pods its rules name. */
  role: 'target' | 'peer';
  /** What the group is, for people (`pods app=web of namespace shop`). */
  description: string;
  /** The rules the translation wants in it (from every policy that shares the group). */
  rules: number;
  /** Absent until Raven made it. */
  neutronId?: string | undefined;
  /** Pods whose port (in Raven's record) carries it; a free warm pool port that carries it is not counted. */
  members: number;
}

export interface PolicyView {
  name: string;
  uid: string;
  policyTypes: string[];
  /** Its security groups; absent when the NetworkPolicy translation is off, empty when it cannot be translated. */
  groups?: PolicyGroupView[] | undefined;
  problem?: Problem | undefined;
}

export interface NamespaceView {
  name: string;
  uid: string;
  /** The namespace's own network (`namespace` strategy), as Raven recorded it. */
  network?: { networkId: string; subnets: SubnetView[] } | undefined;
  problem?: Problem | undefined;
  pods: PodView[];
  services: ServiceView[];
  policies: PolicyView[];
}

export interface SecurityGroupView {
  /** The translation's id of the group. */
  id: string;
  neutronId: string;
  name: string;
  rules: number;
  /** Pods whose port (in Raven's record) carries it; a free warm pool port that carries it is not counted. */
  members: number;
}

export interface PoolView {
  node: string;
  networkId: string;
  subnetIds: string[];
  securityGroups: string[];
  free: number;
  /** Ports the pool's pods hold now. */
  taken: number;
  /** A refill (a bulk create) is in flight. */
  refilling: boolean;
  /** How long the last refill took (ms); absent before one. */
  lastRefillMs?: number | undefined;
}

export interface TopologySnapshot {
  version: typeof TOPOLOGY_VERSION;
  /** ISO time the snapshot was built. */
  generatedAt: string;
  cluster: ClusterView;
  namespaces: NamespaceView[];
  securityGroups: SecurityGroupView[];
  pools: PoolView[];
  /** How many objects carry a problem. */
  stuck: number;
}

/** One object and Raven's record of what it became: what a click on an item shows. */
export interface ObjectDetail {
  kind: 'pod' | 'service' | 'namespace' | 'networkpolicy';
  kubernetes: unknown;
  record: unknown;
}

/** What the view reads: Raven's caches and records, composed (`reconcilers/topology`). Never calls a cloud. */
export interface TopologySource {
  snapshot(): TopologySnapshot;
  detail(kind: ObjectDetail['kind'], namespace: string, name: string): ObjectDetail | undefined;
}
