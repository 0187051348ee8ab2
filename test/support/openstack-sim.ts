/**
 * The OpenStack simulator for tests: started on a real socket on port 0 (`runOpenStackSim`, as `raven sim openstack`
 * starts it), and a tiny JSON client for the simulator's own tests.
 */
export { runOpenStackSim, type RunningOpenStackSim, type RunOpenStackSimOptions } from '@raven/dev';

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOpenStackSim, type RunningOpenStackSim } from '@raven/dev';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../../src/openstack/index.ts';

/** A simulator (noauth, no provisioning delay) with a session and a Neutron client of Raven's own on it. */
export interface SimWithClients {
  sim: RunningOpenStackSim;
  session: OpenStackSession;
  neutron: NeutronClient;
  close(): Promise<void>;
}

export async function simWithClients(): Promise<SimWithClients> {
  const dir = mkdtempSync(join(tmpdir(), 'raven-sim-'));
  const cloudsYamlOut = join(dir, 'clouds.yaml');
  const sim = await runOpenStackSim({ port: 0, auth: 'noauth', provisioningDelayMs: 0, cloudsYamlOut });
  const session = new OpenStackSession({
    cloud: loadCloudConfig({ cloud: 'raven-sim-noauth', env: { OS_CLIENT_CONFIG_FILE: cloudsYamlOut } }),
    timeoutMs: 30_000,
  });
  return {
    sim,
    session,
    neutron: new NeutronClient(session),
    close: async () => {
      await session.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface WireResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

/** The error bodies of the three services. */
export interface NeutronErrorBody {
  NeutronError: { type: string; message: string; detail: string };
}
export interface OctaviaErrorBody {
  faultcode: string;
  faultstring: string;
  debuginfo: null;
}

export type Call = <T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<WireResponse<T>>;

/** A client bound to a base URL (and default headers, e.g. a token). Bodies that are strings are sent as they are. */
export function client(base: string, defaults: Record<string, string> = {}): Call {
  return async <T>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<WireResponse<T>> => {
    const res = await fetch(path.startsWith('http') ? path : `${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...defaults, ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
  };
}

/** Sends a request expected to fail and returns Neutron's error as status, type and message. */
export async function neutronError(
  api: Call,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<{ status: number; type: string; message: string }> {
  const res = await api<NeutronErrorBody>(method, path, body, headers);
  return { status: res.status, type: res.body.NeutronError.type, message: res.body.NeutronError.message };
}

export interface FixedIp {
  subnet_id: string;
  ip_address: string;
}
export interface Port {
  id: string;
  name: string;
  network_id: string;
  mac_address: string;
  status: string;
  fixed_ips: FixedIp[];
  tags: string[];
  security_groups: string[];
  revision_number: number;
  device_owner: string;
  device_id: string;
  admin_state_up: boolean;
  'binding:host_id'?: string;
  'binding:vif_type'?: string;
  project_id: string;
}
export interface Network {
  id: string;
  name: string;
  mtu: number;
  status: string;
  tags: string[];
  subnets: string[];
  revision_number: number;
  project_id: string;
  'router:external': boolean;
  'provider:network_type'?: string;
  'provider:segmentation_id'?: number | null;
}
export interface Subnet {
  id: string;
  cidr: string;
  gateway_ip: string | null;
  allocation_pools: { start: string; end: string }[];
  network_id: string;
}
