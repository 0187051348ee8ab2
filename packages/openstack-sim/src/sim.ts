import { errorMessage, realClock, silentLogger, type Clock, type Logger } from '../../../src/core/index.ts';
import { noauthNeutronContext, type CallerContext } from './context.ts';
import { SimFaults } from './faults.ts';
import {
  authRequiredMessage,
  jsonResponse,
  keystoneError,
  neutronError,
  octaviaError,
  readJson,
  SimHttpError,
} from './http.ts';
import { handleKeystone, type Endpoints } from './keystone/app.ts';
import { Identity } from './keystone/identity.ts';
import { handleNeutron } from './neutron/app.ts';
import type { NeutronCall, TrunkDriverName } from './neutron/common.ts';
import { NeutronStore, quotaResources, type QuotaResource } from './neutron/store.ts';
import { handleOctavia } from './octavia/app.ts';
import type { OctaviaCall } from './octavia/common.ts';
import type { ProviderName } from './octavia/providers.ts';
import { Provisioner } from './octavia/provisioning.ts';
import { OctaviaStore } from './octavia/store.ts';
import { secretString, SeededRandom } from './random.ts';
import { handleSimApi } from './sim-api.ts';

export interface OpenStackSimOptions {
  /** `keystone`: tokens from the sim's Keystone are required; `noauth`: Neutron's and Octavia's noauth behaviour. */
  auth?: 'keystone' | 'noauth';
  /** Password of user `admin` (random when absent). */
  adminPassword?: string;
  /** Password of user `demo` (the admin password when absent). */
  demoPassword?: string;
  /** Token lifetime (default 1 h; short values let tests see renewal). */
  tokenLifetimeMs?: number;
  /** How long Octavia's PENDING_* states last (default 300 ms; 0: done as soon as the response is built). */
  provisioningDelayMs?: number;
  /**
   * Leave the VIP port in Neutron when a load balancer is deleted, as real Octavia (noop worker) does. Default true.
   */
  octaviaLeaksVipPort?: boolean;
  /**
   * Octavia's `default_provider_driver`: the provider of a load balancer created without `provider` (default
   * `amphora`). `amphora`, `noop_driver` and `ovn` are enabled whatever the default.
   */
  octaviaDefaultProvider?: ProviderName;
  /** Neutron's default quotas (default -1, unlimited, for every resource, like the recipe's config). */
  quotaDefaults?: Partial<Record<QuotaResource, number>>;
  /** Seed for ids, MACs, addresses and fault rolls: the same seed and requests give the same results. */
  seed?: number;
  /**
   * Hosts with a live linuxbridge agent, as ML2's `linuxbridge` driver sees them: a port bound there gets
   * `binding:vif_type` `bridge` and stays DOWN (the agent marks it ACTIVE only once it sees the tap, and the sim has
   * none). Any other host binds as the `test` driver says.
   */
  linuxbridgeHosts?: readonly string[];
  /**
   * The trunk driver (docs/openstack.md, "Trunks"): `ovn` (default; nested pods' backend: a bound port can be a
   * parent, subports become `trunk:subport`, the trunk ACTIVE) or `inert` (wires nothing, no bound parents: as
   * the contract rig, scripts/openstack/real-openstack.sh).
   */
  trunkDriver?: TrunkDriverName;
  clock?: Clock;
  /** The sim's public URL (for catalogs and links); derived from each request's Host when absent. */
  baseUrl?: string;
  logger?: Logger;
}

/** Host names the emulated ML2 `test` driver binds (docs/openstack.md, "Neutron"); any other host fails to bind. */
const testDriverHosts = { 'host-ovs-filter-active': { vifType: 'ovs', details: { port_filter: true }, active: true } };
const linuxbridgeBinding = { vifType: 'bridge', details: { connectivity: 'l2', port_filter: true }, active: false };

/** The project noauth Neutron puts requests without `X-Project-Id` in. */
export const noauthProjectId = 'fake_project_id';

/**
 * The OpenStack simulator: Keystone v3 under `/identity`, Neutron v2.0 under `/network` and Octavia v2 under
 * `/load-balancer`, in memory, as one `fetch(Request) → Response` function (`daemon/` binds it to a port).
 *
 * @example
 * const sim = createOpenStackSim({ auth: 'noauth', provisioningDelayMs: 0 });
 * const res = await sim.fetch(new Request('http://sim/network/v2.0/networks'));
 */
export interface OpenStackSim {
  fetch(request: Request): Promise<Response>;
  readonly auth: 'keystone' | 'noauth';
  readonly adminPassword: string;
  readonly demoPassword: string;
  readonly identity: Identity;
  readonly neutron: NeutronStore;
  readonly octavia: OctaviaStore;
  readonly faults: SimFaults;
  readonly provisioner: Provisioner;
  /** Sets the public URL once it is known (a port-0 bind). */
  setBaseUrl(url: string): void;
  /**
   * Calls `listener` after every write (any method but GET and HEAD) the sim answered, in order, before the response
   * leaves: a test reads the stores in each state a client's writes pass through. Returns the unsubscribe.
   */
  observeWrites(listener: (write: { method: string; path: string; status: number }) => void): () => void;
  /** Stops Octavia's timers. */
  close(): void;
}

function endpointsOf(base: string): Endpoints {
  return { identity: `${base}/identity/v3`, network: `${base}/network`, loadBalancer: `${base}/load-balancer` };
}

function requestId(sim: SeededRandom): string {
  return `req-${sim.uuid()}`;
}

export function createOpenStackSim(options: OpenStackSimOptions = {}): OpenStackSim {
  const auth = options.auth ?? 'keystone';
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? silentLogger;
  const random = new SeededRandom(options.seed);
  const adminPassword = options.adminPassword ?? secretString(18);
  const demoPassword = options.demoPassword ?? adminPassword;
  const bindingHosts = {
    ...testDriverHosts,
    ...Object.fromEntries((options.linuxbridgeHosts ?? []).map((host) => [host, linuxbridgeBinding])),
  };
  const trunkDriver = options.trunkDriver ?? 'ovn';
  const identity = new Identity(
    clock,
    random,
    { admin: adminPassword, demo: demoPassword },
    options.tokenLifetimeMs ?? 3_600_000,
  );
  const quotaDefaults = Object.fromEntries(quotaResources.map((r) => [r, options.quotaDefaults?.[r] ?? -1])) as Record<
    QuotaResource,
    number
  >;
  const neutron = new NeutronStore(clock, random, quotaDefaults);
  const octavia = new OctaviaStore(clock, random);
  const faults = new SimFaults(random, clock);
  const provisioner = new Provisioner(clock, options.provisioningDelayMs ?? 300, (id) => faults.isStuck(id));
  faults.onRelease = (id) => provisioner.release(id);
  let baseUrl = options.baseUrl;
  /**
   * A node's agent saw a port's device plugged (`up`) or unplugged: a bound port goes ACTIVE or DOWN, and each change
   * is a revision (Neutron's agents report it with `update_device_up` / `_down`; an `If-Match` on the port's former
   * revision is then refused). An unbound port, or one whose binding failed, stays DOWN: no agent wires it.
   */
  const link = (portId: string, up: boolean): Response => {
    const port = neutron.ports.get(portId);
    if (!port) return jsonResponse(404, { error: `no port ${portId}` });
    const status = up && port.vif_type !== 'unbound' && port.vif_type !== 'binding_failed' ? 'ACTIVE' : 'DOWN';
    if (port.status !== status) {
      port.status = status;
      neutron.touch(port);
    }
    return jsonResponse(200, { status: port.status, revision_number: port.revision_number });
  };
  const stats = () => ({
    networks: neutron.networks.size,
    subnets: neutron.subnets.size,
    subnetpools: neutron.subnetpools.size,
    ports: neutron.ports.size,
    routers: neutron.routers.size,
    floatingips: neutron.floatingips.size,
    security_groups: neutron.securityGroups.size,
    security_group_rules: neutron.securityGroupRules.size,
    loadbalancers: octavia.loadbalancers.size,
    listeners: octavia.listeners.size,
    pools: octavia.pools.size,
    members: octavia.members.size,
    healthmonitors: octavia.healthmonitors.size,
    tokens: identity.tokens.size,
  });

  /** keystonemiddleware: a valid token or 401 (with where to get one). */
  function tokenContext(headers: Headers, base: string): CallerContext {
    const token = identity.validate(headers.get('x-auth-token'));
    if (!token || token.projectId === undefined) {
      throw keystoneError(401, authRequiredMessage, {
        'www-authenticate': `Keystone uri="${endpointsOf(base).identity}"`,
      });
    }
    return {
      projectId: token.projectId,
      userId: token.userId,
      roles: token.roles,
      isAdmin: token.roles.includes('admin'),
    };
  }

  async function route(request: Request, url: URL, base: string): Promise<Response> {
    const method = request.method.toUpperCase();
    const path = url.pathname;
    const [, service, ...rest] = path.split('/');
    const segments = rest.filter((s) => s !== '').map(decodeURIComponent);
    const headers: Record<string, string> = { 'x-openstack-request-id': requestId(random) };
    const injected = await faults.intercept(method, path);
    if (injected) throw injected;
    let body: unknown;
    try {
      body = method === 'GET' || method === 'HEAD' || method === 'DELETE' ? undefined : await readJson(request);
    } catch {
      if (service === 'network')
        throw neutronError(400, 'MalformedRequestBody', 'Malformed request body: Cannot understand JSON');
      if (service === 'load-balancer') throw octaviaError(400, 'Request is not in valid JSON format');
      throw keystoneError(400, 'Malformed JSON');
    }
    const endpoints = endpointsOf(base);
    if (service === 'identity') {
      const result = handleKeystone(
        identity,
        endpoints,
        method,
        segments,
        request.headers,
        body,
        new URL(request.url).searchParams,
      );
      return jsonResponse(result.status, result.body, { ...headers, ...result.headers });
    }
    if (service === 'network') {
      if (segments.length === 0) {
        return jsonResponse(
          200,
          {
            versions: [{ id: 'v2.0', status: 'CURRENT', links: [{ href: `${endpoints.network}/v2.0/`, rel: 'self' }] }],
          },
          headers,
        );
      }
      if (segments[0] !== 'v2.0') throw neutronError(404, 'HTTPNotFound', 'The resource could not be found.');
      const ctx =
        auth === 'keystone'
          ? tokenContext(request.headers, base)
          : request.headers.has('x-project-id')
            ? { projectId: undefined, userId: undefined, roles: ['admin'], isAdmin: true }
            : noauthNeutronContext;
      const last = segments.length - 1;
      if (last > 0 && segments[last]!.endsWith('.json')) segments[last] = segments[last]!.slice(0, -5);
      const ifMatch = /revision_number=(\d+)/.exec(request.headers.get('if-match') ?? '')?.[1];
      const call: NeutronCall = {
        ctx,
        store: neutron,
        query: url.searchParams,
        href: `${endpoints.network}/v2.0`,
        body,
        ifMatch: ifMatch === undefined ? undefined : Number(ifMatch),
        bindingHosts,
        trunkDriver,
      };
      const result = handleNeutron(call, method, segments.slice(1));
      return jsonResponse(result.status, result.body, headers);
    }
    if (service === 'load-balancer') {
      if (segments.length === 0)
        return jsonResponse(200, handleOctavia({} as OctaviaCall, method, [], endpoints.loadBalancer).body, headers);
      const ctx: CallerContext =
        auth === 'keystone'
          ? tokenContext(request.headers, base)
          : {
              projectId: request.headers.get('x-project-id') ?? undefined,
              userId: undefined,
              roles: ['admin'],
              isAdmin: true,
            };
      const neutronCall: NeutronCall = {
        ctx: { projectId: undefined, userId: undefined, roles: ['admin'], isAdmin: true },
        store: neutron,
        query: new URLSearchParams(),
        href: '',
        body: undefined,
        ifMatch: undefined,
        bindingHosts,
        trunkDriver,
      };
      const call: OctaviaCall = {
        ctx,
        noauth: auth === 'noauth',
        store: octavia,
        provisioner,
        neutron: neutronCall,
        query: url.searchParams,
        body,
        href: `${endpoints.loadBalancer}/v2`,
        leaksVipPort: options.octaviaLeaksVipPort ?? true,
        defaultProvider: options.octaviaDefaultProvider ?? 'amphora',
        onNewLoadBalancer: (id) => faults.noteNewLoadBalancer(id),
      };
      const result = handleOctavia(call, method, segments, endpoints.loadBalancer);
      return jsonResponse(result.status, result.body, headers);
    }
    return new Response('404 Not Found\n\nThe resource could not be found.\n', {
      status: 404,
      headers: { 'content-type': 'text/plain' },
    });
  }

  const writeListeners = new Set<(write: { method: string; path: string; status: number }) => void>();
  return {
    auth,
    adminPassword,
    demoPassword,
    identity,
    neutron,
    octavia,
    faults,
    provisioner,
    setBaseUrl(url: string) {
      baseUrl = url.replace(/\/$/, '');
    },
    observeWrites(listener) {
      writeListeners.add(listener);
      return () => writeListeners.delete(listener);
    },
    async fetch(request: Request): Promise<Response> {
      const response = await answer(request);
      if (writeListeners.size > 0 && request.method !== 'GET' && request.method !== 'HEAD') {
        const write = { method: request.method, path: new URL(request.url).pathname, status: response.status };
        for (const listener of writeListeners) listener(write);
      }
      return response;
    },
    close() {
      provisioner.close();
    },
  };

  async function answer(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const base = baseUrl ?? url.origin;
    if (url.pathname.startsWith('/_sim/')) {
      let body: unknown;
      try {
        body = request.method === 'POST' ? await readJson(request) : undefined;
      } catch {
        return jsonResponse(400, { error: 'body is not JSON' });
      }
      return handleSimApi(faults, stats, request.method.toUpperCase(), url, body, link);
    }
    const method = request.method.toUpperCase();
    try {
      const response = await route(request, url, base);
      faults.noteAnswer(method, url.pathname, response.status);
      return response;
    } catch (err) {
      faults.noteAnswer(method, url.pathname, err instanceof SimHttpError ? err.status : 500);
      if (err instanceof SimHttpError)
        return jsonResponse(err.status, err.body, { 'x-openstack-request-id': requestId(random), ...err.headers });
      logger.error(
        { err: errorMessage(err), method: request.method, path: url.pathname },
        'OpenStack simulator: request failed',
      );
      const service = url.pathname.split('/')[1];
      const fault =
        service === 'load-balancer'
          ? octaviaError(500, 'Internal Server Error')
          : service === 'identity'
            ? keystoneError(500, 'An unexpected error prevented the server from fulfilling your request.')
            : neutronError(
                500,
                'HTTPInternalServerError',
                'Request Failed: internal server error while processing your request.',
              );
      return jsonResponse(500, fault.body);
    }
  }
}
