import { setTimeout as sleep } from 'node:timers/promises';
import { hostname } from 'node:os';
import { errorMessage } from '../core/index.ts';
import { KubeClient, loadConnection, resources } from '../kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../openstack/index.ts';
import { parseRavenCniConf, isSupportedVersion, type RavenCniConf } from './config.ts';
import { hostMaster, plugLinuxBridge, unplug, type Plugged } from './linuxbridge.ts';
import { inspectOvsPort, plugOvs, unplugOvs } from './ovs.ts';
import { defaultRoutes, inspectPod, type Sandbox } from './veth.ts';
import { readNested, readNeutron, waitForVif, type PodRef } from './lookup.ts';
import { plugVlan, vlanProblem } from './vlan.ts';
import {
  CniError,
  CniErrorCode,
  cniResultSchema,
  readCniEnvironment,
  SUPPORTED_VERSIONS,
  type CniEnvironment,
  type CniResult,
  type CniVersion,
} from './spec/index.ts';
import { stdinField } from './stdin-field.ts';
import { verifyNested, verifyPort, type PlugPlan } from './verify.ts';
import type { Vif } from '../kube/api/index.ts';
import { holdPort, releasePorts } from './claims.ts';
import { distrust, LeaderTerm, planFromSignedVif, readVifKey } from './signed.ts';

export interface PluginInvocation {
  env: NodeJS.ProcessEnv;
  stdin: string;
  signal: AbortSignal;
  /** Milliseconds from process start to the plugin's first line (Node.js start-up and module loading). */
  startupMs: number;
  /** One JSON object per call: the runtime keeps the plugin's stderr as its log. Never given a secret. */
  log: (entry: Record<string, unknown>) => void;
  /** The node daemon's long-lived connections; absent, each call opens its own (and closes them). */
  connections?: NodeConnections | undefined;
}

export interface PluginOutcome {
  stdout: string;
  exitCode: number;
}

/** Where ADD spends its time, for the log line and the benchmark. */
export interface AddTimings {
  startupMs: number;
  /** Every Kubernetes read, the first one's wait for Raven's VIF included. */
  kubernetesMs: number;
  /** The first Kubernetes read alone: up to Raven's VIF. */
  vifMs: number;
  /** Every Neutron read (the port, its network's subnets, the network). */
  neutronMs: number;
  /** How many times Neutron was read: more than one when the claim (`device_id`) had not landed yet. */
  neutronReads: number;
  /** Asleep between those reads, waiting for the claim. */
  claimWaitMs: number;
  plumbingMs: number;
  /** Whether this ADD made the network's bridge (the first pod of the network on the node). */
  bridgeCreated: boolean;
  /** `signature`: plugged on Raven's signature alone, no Neutron read; `neutron`: checked against Neutron. */
  verifiedBy: VerifiedPlan['by'];
  totalMs: number;
}

/**
 * One invocation of `raven-cni` (CNI 1.0: ADD, DEL, CHECK, VERSION): never throws, answers what the spec says to
 * print on stdout and the exit status. Errors are the spec's error object with a code and a message saying why.
 */
export async function runPlugin(call: PluginInvocation): Promise<PluginOutcome> {
  let version: string = '1.0.0';
  try {
    // Read leniently, so that even a bad configuration is answered in the version it asked for.
    const requested = stdinField(call.stdin, 'cniVersion');
    if (requested && isSupportedVersion(requested)) version = requested;
    const env = readCniEnvironment(call.env);
    if (env.command === 'VERSION') return ok({ cniVersion: version, supportedVersions: [...SUPPORTED_VERSIONS] });
    const conf = parseRavenCniConf(call.stdin);
    version = conf.cniVersion;
    switch (env.command) {
      case 'ADD':
        return ok(await add(conf, env, call));
      case 'DEL':
        await del(conf, env, call.signal);
        call.log({ msg: 'DEL done', containerId: env.containerId, pod: podLabel(env) });
        return { stdout: '', exitCode: 0 };
      case 'CHECK':
        await check(conf, env, call);
        return { stdout: '', exitCode: 0 };
    }
  } catch (err) {
    const failure =
      err instanceof CniError ? err : new CniError(CniErrorCode.IO_FAILURE, errorMessage(err), { cause: err });
    call.log({ level: 'error', msg: failure.message, code: failure.cniCode, command: call.env.CNI_COMMAND });
    return { stdout: JSON.stringify(failure.body(version)), exitCode: 1 };
  }
}

const ok = (body: unknown): PluginOutcome => ({ stdout: JSON.stringify(body), exitCode: 0 });

function podRef(env: CniEnvironment): PodRef {
  const namespace = env.args.K8S_POD_NAMESPACE;
  const name = env.args.K8S_POD_NAME;
  if (!namespace || !name)
    throw new CniError(
      CniErrorCode.INVALID_ENVIRONMENT,
      'CNI_ARGS must name the pod (K8S_POD_NAMESPACE and K8S_POD_NAME): raven-cni plugs Kubernetes pods only',
    );
  return { namespace, name, uid: env.args.K8S_POD_UID || undefined };
}

const podLabel = (env: CniEnvironment) => `${env.args.K8S_POD_NAMESPACE ?? '?'}/${env.args.K8S_POD_NAME ?? '?'}`;

/** The node's two read-only connections: Kubernetes (pods) and Neutron (ports, subnets, networks). */
export interface NodeConnections {
  kube: KubeClient;
  neutron: NeutronClient;
  /** The leader's term as last read, shared by the calls (absent: each call reads the Lease). */
  term?: LeaderTerm;
  close(): Promise<void>;
}

/** Opens the connections the configuration's credential files describe; a bad file is a configuration error. */
export async function openNodeConnections(
  conf: Pick<RavenCniConf, 'kubeconfig' | 'cloudsYaml' | 'cloud'>,
): Promise<NodeConnections> {
  try {
    const kube = new KubeClient({ connection: await loadConnection({ kubeconfig: conf.kubeconfig }) });
    const session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: conf.cloud, env: { OS_CLIENT_CONFIG_FILE: conf.cloudsYaml } }),
      timeoutMs: 15_000,
    });
    return {
      kube,
      neutron: new NeutronClient(session),
      term: new LeaderTerm(),
      close: async () => void (await Promise.all([kube.close(), session.close()])),
    };
  } catch (err) {
    throw new CniError(CniErrorCode.INVALID_CONFIG, `node credentials: ${errorMessage(err)}`, { cause: err });
  }
}

/** `use` with the node daemon's long-lived connections, or with ones opened for this call and closed after it. */
async function withConnections<T>(
  conf: RavenCniConf,
  shared: NodeConnections | undefined,
  use: (connections: NodeConnections) => Promise<T>,
): Promise<T> {
  if (shared) return use(shared);
  const own = await openNodeConnections(conf);
  try {
    return await use(own);
  } finally {
    await own.close();
  }
}

/** The phases of ADD that {@link verifiedPlan} and the plumbing mark as they end. */
export type AddPhase = 'kubernetes' | 'neutron' | 'claim' | 'plumbing';

/**
 * A stopwatch over ADD's phases: `lap(phase)` adds the time since the previous lap to that phase, so a phase run
 * several times (a Neutron read repeated while the claim lands) is summed; `first` keeps each phase's first lap.
 */
export function phaseClock(started = performance.now()) {
  const total: Partial<Record<AddPhase, number>> = {};
  const first: Partial<Record<AddPhase, number>> = {};
  const count: Partial<Record<AddPhase, number>> = {};
  let last = started;
  const lap = (phase: AddPhase) => {
    const now = performance.now();
    total[phase] = (total[phase] ?? 0) + (now - last);
    first[phase] ??= now - last;
    count[phase] = (count[phase] ?? 0) + 1;
    last = now;
  };
  /** The phases as the ADD log line gives them, rounded to ms. */
  const phases = () => ({
    kubernetesMs: Math.round(total.kubernetes ?? 0),
    vifMs: Math.round(first.kubernetes ?? 0),
    neutronMs: Math.round(total.neutron ?? 0),
    neutronReads: count.neutron ?? 0,
    claimWaitMs: Math.round(total.claim ?? 0),
    plumbingMs: Math.round(total.plumbing ?? 0),
  });
  return { lap, count, phases };
}

/** The plan to plug by, and what it was checked against (with, for Neutron, why the signature was not enough). */
export interface VerifiedPlan {
  plan: PlugPlan;
  by: 'signature' | 'neutron';
  /** Why the VIF's signature was not trusted alone (absent when the node has no VIF key). */
  distrust?: string | undefined;
}

/**
 * Reads the pod's VIF and checks it: on Raven's signature alone when the node holds the VIF key and the signature is
 * this node's and the current leader term's; otherwise against Neutron. The plan to plug by, or the reason to refuse.
 * Exported for the benchmark, which runs this verification alone against a Neutron whose ports it cannot plug.
 */
export async function verifiedPlan(
  conf: RavenCniConf,
  env: CniEnvironment,
  connections: Pick<NodeConnections, 'kube' | 'neutron' | 'term'>,
  options: { vifTimeoutMs: number; signal: AbortSignal; lap?: (phase: AddPhase) => void },
): Promise<VerifiedPlan> {
  const { kube, neutron } = connections;
  const nodeName = conf.nodeName ?? hostname();
  const key = conf.vifKeyFile === undefined ? undefined : await readVifKey(conf.vifKeyFile);
  const lease = conf.leaderLease;
  const term = connections.term ?? new LeaderTerm();
  const nested = conf.mode === 'nested';
  let serverId: string | undefined;
  let deadline: number | undefined;
  let why: string | undefined;
  for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
    const { pod, vif } = await waitForVif(kube, podRef(env), options.vifTimeoutMs, options.signal);
    checkMode(vif, nested, pod);
    if (key) {
      why = await distrust(vif, {
        key,
        nodeName,
        nested,
        term: lease && (() => term.current(kube, lease, options.signal)),
      });
      if (why === undefined && vif.signed) {
        options.lap?.('kubernetes');
        return { plan: planFromSignedVif(vif, vif.signed.plug, pod, conf.ovs), by: 'signature' };
      }
    }
    const server = vif.nested
      ? (serverId ??= conf.serverId ?? (await nodeServerId(connections.kube, nodeName, options.signal)))
      : undefined;
    options.lap?.('kubernetes');
    // A claim lands in well under a second; 10 s (at most the VIF wait) covers a loaded Neutron. Counted from the VIF:
    // in a burst the VIF comes late and its claim 3–4 s after it, and a wait begun at the ADD had run out by then.
    deadline ??= performance.now() + Math.min(options.vifTimeoutMs, 10_000);
    const nestedView = vif.nested && (await readNested(neutron, { ...vif, nested: vif.nested }, options.signal));
    const view = nestedView || (await readNeutron(neutron, vif, options.signal));
    options.lap?.('neutron');
    // A warm-pool port is published before Neutron's device_id says it is the pod's (Raven writes that claim right
    // after; a subport's only after it joined the trunk), and a forged annotation is rewritten within a second: both
    // are worth a short wait. Past the VIF wait, the port is refused as another's.
    if (view.port.device_id === pod.uid || performance.now() + wait > deadline)
      return {
        plan:
          nestedView && server !== undefined
            ? verifyNested(vif, pod, server, nestedView)
            : verifyPort(vif, pod, nodeName, view, conf.ovs),
        by: 'neutron',
        distrust: why,
      };
    await sleep(wait, undefined, { signal: options.signal });
    options.lap?.('claim');
  }
}

/**
 * A VIF of the other mode is refused before anything is read (a VM's plugin plugs subports only, a host's bound ports
 * only), and a nested VIF's fields are checked for their shape: they are a tenant's to write, and go into `ip`'s
 * arguments.
 */
function checkMode(vif: Vif, nested: boolean, pod: { namespace: string; name: string }): void {
  const label = `pod ${pod.namespace}/${pod.name}`;
  if (!vif.nested) {
    if (nested)
      throw new CniError(
        CniErrorCode.UNSUPPORTED_VIF_TYPE,
        `${label}: its VIF is not a trunk subport, and this node (a VM, "mode": "nested") plugs only subports`,
      );
    return;
  }
  if (!nested)
    throw new CniError(
      CniErrorCode.UNSUPPORTED_VIF_TYPE,
      `${label}: its VIF is a trunk subport (nested); this node plugs bound ports: a Nova VM's raven-cni runs with ` +
        `"mode": "nested"`,
    );
  const { trunkId, vlan, parentMac } = vif.nested as unknown as Partial<Record<string, unknown>>;
  if (
    typeof trunkId !== 'string' ||
    !/^[A-Za-z0-9-]{1,64}$/.test(trunkId) ||
    typeof vlan !== 'number' ||
    !Number.isInteger(vlan) ||
    vlan < 1 ||
    vlan > 4094 ||
    typeof parentMac !== 'string' ||
    !/^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$/.test(parentMac)
  )
    throw new CniError(
      CniErrorCode.PORT_VERIFICATION_FAILED,
      `${label}: the VIF's nested field is not {trunkId, vlan 1–4094, parentMac}`,
    );
}

/**
 * This VM's Nova server id, from its Node's `spec.providerID` (`openstack:///<id>` or `openstack://<region>/<id>`, as
 * the OpenStack cloud provider sets it), when the configuration does not give `serverId`.
 */
async function nodeServerId(kube: KubeClient, nodeName: string, signal: AbortSignal): Promise<string> {
  let providerId: string | undefined;
  try {
    providerId = (await kube.get(resources.nodes, nodeName, undefined, { signal })).spec?.providerID;
  } catch (err) {
    throw new CniError(
      CniErrorCode.UPSTREAM_UNAVAILABLE,
      `nested mode: reading Node ${nodeName} for its providerID failed (or set serverId): ${errorMessage(err)}`,
      { cause: err },
    );
  }
  const id = /^openstack:\/\/[^/]*\/([A-Za-z0-9-]{1,64})$/.exec(providerId ?? '')?.[1];
  if (!id)
    throw new CniError(
      CniErrorCode.INVALID_CONFIG,
      `nested mode: Node ${nodeName} has providerID "${providerId ?? ''}", not openstack:///<server id>; set serverId`,
    );
  return id;
}

async function add(conf: RavenCniConf & { cniVersion: CniVersion }, env: CniEnvironment, call: PluginInvocation) {
  const sandbox: Sandbox = { netns: env.netns, ifName: env.ifName };
  const started = performance.now();
  const { lap, phases } = phaseClock(started);
  const { verified, plugged } = await withConnections(conf, call.connections, async (connections) => {
    const verified = await verifiedPlan(conf, env, connections, {
      vifTimeoutMs: conf.vifTimeoutSeconds * 1000,
      signal: call.signal,
      lap,
    });
    const { plan } = verified;
    // Whoever signed or claimed what, one sandbox per port on this node.
    await holdPort(conf.stateDir, plan.portId, {
      containerId: env.containerId,
      podUid: plan.deviceId,
      netns: env.netns,
    });
    const plugged: Plugged = await plug(plan).catch(async (err: unknown) => {
      await releasePorts(conf.stateDir, env.containerId);
      throw err;
    });
    lap('plumbing');
    return { verified, plugged };
  });
  const { plan } = verified;
  const timings: AddTimings = {
    startupMs: Math.round(call.startupMs),
    ...phases(),
    bridgeCreated: plugged.bridgeCreated,
    verifiedBy: verified.by,
    totalMs: Math.round(call.startupMs + performance.now() - started),
  };
  call.log({
    msg: 'ADD done',
    containerId: env.containerId,
    pod: podLabel(env),
    port: plan.portId,
    timings,
    ...(verified.distrust ? { signatureNotTrusted: verified.distrust } : {}),
  });
  return addResult(conf.cniVersion, plan, sandbox, plugged);

  async function plug(plan: PlugPlan): Promise<Plugged> {
    if (plan.kind === 'vlan') return plugVlan(plan, sandbox, call.signal);
    return plan.kind === 'ovs'
      ? {
          ...(await plugOvs(
            plan,
            sandbox,
            conf.ovs,
            { containerId: env.containerId, podUid: plan.deviceId },
            call.signal,
          )),
          bridgeCreated: false,
        }
      : await plugLinuxBridge(plan, sandbox, call.signal);
  }
}

/** The ADD result: the host and container interfaces, the port's addresses on the container end, its default route. */
export function addResult(
  version: CniVersion,
  plan: PlugPlan,
  sandbox: Sandbox,
  plugged: Pick<Plugged, 'hostMac' | 'hostName'>,
) {
  const result: CniResult = {
    cniVersion: version,
    interfaces: [
      { name: plugged.hostName ?? plan.tap, mac: plugged.hostMac },
      { name: sandbox.ifName, mac: plan.mac, sandbox: sandbox.netns },
    ],
    ips: plan.ips.map((a) => ({
      address: `${a.address}/${a.prefixLength}`,
      ...(a.gateway ? { gateway: a.gateway } : {}),
      interface: 1,
      ...(version === '0.4.0' ? { version: a.address.includes(':') ? ('6' as const) : ('4' as const) } : {}),
    })),
    routes: defaultRoutes(plan),
    dns: {},
  };
  return result;
}

/** The previous result the runtime passed, when it is one this plugin can read. */
function previousResult(conf: RavenCniConf): CniResult | undefined {
  if (conf.prevResult === undefined) return undefined;
  const parsed = cniResultSchema.safeParse(conf.prevResult);
  if (!parsed.success)
    throw new CniError(
      CniErrorCode.DECODING_FAILURE,
      `prevResult is not a CNI result: ${parsed.error.issues[0]?.message}`,
    );
  return parsed.data;
}

/**
 * No API calls: DEL must work when the pod, its port or the API are gone. An OVS port of this sandbox goes first (it
 * would outlive its veth in the OVS database), then the veth pair.
 */
async function del(conf: RavenCniConf, env: CniEnvironment, signal: AbortSignal): Promise<void> {
  const sandbox = { netns: env.netns || undefined, ifName: env.ifName };
  // In a VM the result's host interface is the VM's NIC: never deleted; the sub-interface goes with the namespace.
  if (conf.mode === 'nested') await unplug(sandbox);
  else {
    await unplugOvs(conf.ovs, env.containerId, signal);
    const tap = previousResult(conf)?.interfaces?.find((i) => !i.sandbox && i.name.startsWith('tap'))?.name;
    await unplug(sandbox, tap);
  }
  await releasePorts(conf.stateDir, env.containerId);
}

/** CHECK: what ADD made is still there and still what Neutron says. Differences are listed in the error. */
async function check(conf: RavenCniConf, env: CniEnvironment, call: PluginInvocation): Promise<void> {
  const prev = previousResult(conf);
  if (!prev) throw new CniError(CniErrorCode.INVALID_CONFIG, 'CHECK needs prevResult');
  const { plan } = await withConnections(conf, call.connections, (connections) =>
    // The VIF is there already: this bounds a slow read only. A fixed 5 s was too little in a VM under software
    // emulation, where the plugin's first Kubernetes read alone took 2–4 s (docs/ovn.md, "A real VM").
    verifiedPlan(conf, env, connections, { vifTimeoutMs: conf.vifTimeoutSeconds * 1000, signal: call.signal }),
  );
  const sandbox: Sandbox = { netns: env.netns, ifName: env.ifName };
  const expected = addResult(isSupportedVersion(prev.cniVersion) ? prev.cniVersion : '1.0.0', plan, sandbox, {
    hostMac: '',
  });
  const now = await inspectPod(sandbox).catch((err: unknown) => {
    throw new CniError(CniErrorCode.CHECK_FAILED, `${sandbox.ifName} is missing: ${errorMessage(err)}`);
  });
  const problems: string[] = [];
  if (now.mac.toLowerCase() !== plan.mac) problems.push(`${sandbox.ifName} has MAC ${now.mac}, the port ${plan.mac}`);
  if (now.mtu !== plan.mtu) problems.push(`${sandbox.ifName} has MTU ${now.mtu}, the network ${plan.mtu}`);
  for (const want of expected.ips ?? [])
    if (!now.addresses.includes(want.address)) problems.push(`${sandbox.ifName} lacks ${want.address}`);
  for (const route of expected.routes ?? [])
    if (route.gw && !now.gateways.includes(route.gw)) problems.push(`no default route via ${route.gw}`);
  if (plan.kind === 'vlan') {
    const problem = await vlanProblem(sandbox, plan.nested?.vlan ?? 0, call.signal);
    if (problem) problems.push(problem);
  } else if (plan.kind === 'ovs') {
    const port = await inspectOvsPort(plan.tap, conf.ovs, call.signal);
    if (port.bridge !== plan.bridge) problems.push(`${plan.tap} is not a port of OVS bridge ${plan.bridge}`);
    else if (port.ifaceId !== plan.portId)
      problems.push(`${plan.tap} carries iface-id "${port.ifaceId}", not ${plan.portId}`);
  } else if ((await hostMaster(plan.tap).catch(() => '')) !== plan.bridge)
    problems.push(`${plan.tap} is not in bridge ${plan.bridge}`);
  const prevIps = (prev.ips ?? []).map((i) => i.address).sort();
  const planIps = (expected.ips ?? []).map((i) => i.address).sort();
  if (prevIps.join() !== planIps.join())
    problems.push(`prevResult has ${prevIps.join(', ')}, the port has ${planIps.join(', ')}`);
  if (problems.length > 0) throw new CniError(CniErrorCode.CHECK_FAILED, problems.join('; '));
}
