import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../../test/support/node-test.ts';
import {
  client,
  type Call,
  type Network,
  type Port,
  type Subnet,
  neutronError,
  runOpenStackSim,
  type RunningOpenStackSim,
} from '../../../../test/support/openstack-sim.ts';

interface Router {
  id: string;
  revision_number: number;
  external_gateway_info: {
    network_id: string;
    external_fixed_ips: { subnet_id: string; ip_address: string }[];
    enable_snat: boolean;
  } | null;
}
interface FloatingIp {
  id: string;
  floating_ip_address: string;
  router_id: string | null;
  port_id: string | null;
  fixed_ip_address: string | null;
  status: string;
  port_details: { device_id: string } | null;
}
interface Rule {
  id: string;
  direction: string;
  ethertype: string;
  normalized_cidr: string | null;
}
interface SecurityGroup {
  id: string;
  name: string;
  security_group_rules: Rule[];
}

/** Routers, floating IPs and security groups (docs/openstack.md, "Neutron"). */
describe('simulated Neutron L3 and security groups', () => {
  let sim: RunningOpenStackSim;
  let api: Call;
  let ext: Network;
  let extSubnet: Subnet;
  let net: Network;
  let subnet: Subnet;

  const create = async <T>(path: string, key: string, body: Record<string, unknown>): Promise<T> => {
    const res = await api<Record<string, T>>('POST', path, { [key]: body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body[key]!;
  };
  const error = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    neutronError(api, method, path, body, headers);

  before(async () => {
    sim = await runOpenStackSim({ auth: 'noauth', seed: 11 });
    api = client(`${sim.neutronUrl}/v2.0`);
    ext = await create('/networks', 'network', {
      name: 'public',
      'router:external': true,
      'provider:network_type': 'flat',
      'provider:physical_network': 'public',
    });
    extSubnet = await create('/subnets', 'subnet', {
      network_id: ext.id,
      cidr: '172.24.4.0/24',
      ip_version: 4,
      enable_dhcp: false,
    });
    net = await create('/networks', 'network', { name: 'tenant' });
    subnet = await create('/subnets', 'subnet', { network_id: net.id, cidr: '10.10.0.0/24', ip_version: 4 });
  });
  after(() => sim.close());

  it('routes a subnet to the external network, and floating IPs follow the port through that router', async () => {
    const router = await create<Router>('/routers', 'router', {
      name: 'r',
      external_gateway_info: { network_id: ext.id },
    });
    const gw = router.external_gateway_info!;
    assert.equal(gw.enable_snat, true);
    assert.equal(gw.external_fixed_ips[0]!.subnet_id, extSubnet.id);
    assert.match(gw.external_fixed_ips[0]!.ip_address, /^172\.24\.4\.\d+$/);
    const vm = await create<Port>('/ports', 'port', { network_id: net.id, name: 'vm' });
    assert.deepEqual(
      await error('POST', '/floatingips', { floatingip: { floating_network_id: ext.id, port_id: vm.id } }),
      {
        status: 404,
        type: 'ExternalGatewayForFloatingIPNotFound',
        message: `External network ${ext.id} is not reachable from subnet ${subnet.id}.  Therefore, cannot associate Port ${vm.id} with a Floating IP.`,
      },
    );
    assert.equal((await api<{ floatingips: FloatingIp[] }>('GET', '/floatingips')).body.floatingips.length, 0);
    const added = await api<Record<string, unknown>>('PUT', `/routers/${router.id}/add_router_interface`, {
      subnet_id: subnet.id,
    });
    assert.deepEqual(Object.keys(added.body), ['id', 'tenant_id', 'port_id', 'network_id', 'subnet_id', 'subnet_ids']);
    const routerPorts = await api<{ ports: Port[] }>(
      'GET',
      `/ports?device_id=${router.id}&fields=device_owner&fields=fixed_ips&fields=status`,
    );
    assert.deepEqual(routerPorts.body.ports.map((p) => p.device_owner).sort(), [
      'network:router_gateway',
      'network:router_interface',
    ]);
    assert.ok(routerPorts.body.ports.some((p) => p.fixed_ips[0]!.ip_address === '10.10.0.1'));
    assert.deepEqual(await error('PUT', `/routers/${router.id}/add_router_interface`, { subnet_id: subnet.id }), {
      status: 400,
      type: 'BadRequest',
      message: `Bad router request: Router already has a port on subnet ${subnet.id}.`,
    });
    const fip = await create<FloatingIp>('/floatingips', 'floatingip', {
      floating_network_id: ext.id,
      floating_ip_address: '172.24.4.77',
      port_id: vm.id,
    });
    assert.deepEqual(
      [fip.router_id, fip.fixed_ip_address, fip.status, fip.port_details?.device_id],
      [router.id, vm.fixed_ips[0]!.ip_address, 'DOWN', vm.device_id],
    );
    assert.deepEqual(
      await error('POST', '/floatingips', {
        floatingip: { floating_network_id: ext.id, floating_ip_address: '172.24.4.77' },
      }),
      {
        status: 409,
        type: 'IpAddressAlreadyAllocated',
        message: `IP address 172.24.4.77 already allocated in subnet ${extSubnet.id}`,
      },
    );
    assert.deepEqual(await error('PUT', `/routers/${router.id}/remove_router_interface`, { subnet_id: subnet.id }), {
      status: 409,
      type: 'RouterInterfaceInUseByFloatingIP',
      message: `Router interface for subnet ${subnet.id} on router ${router.id} cannot be deleted, as it is required by one or more floating IPs.`,
    });
    const off = await api<{ floatingip: FloatingIp }>('PUT', `/floatingips/${fip.id}`, {
      floatingip: { port_id: null },
    });
    assert.deepEqual(
      [off.body.floatingip.port_id, off.body.floatingip.router_id, off.body.floatingip.port_details],
      [null, null, null],
    );
    assert.equal(
      (await api('PUT', `/routers/${router.id}/remove_router_interface`, { subnet_id: subnet.id })).status,
      200,
    );
    assert.deepEqual(await error('PUT', `/routers/${router.id}/remove_router_interface`, { subnet_id: subnet.id }), {
      status: 404,
      type: 'RouterInterfaceNotFoundForSubnet',
      message: `Router ${router.id} has no interface on subnet ${subnet.id}`,
    });
    const cleared = await api<{ router: Router }>('PUT', `/routers/${router.id}`, {
      router: { external_gateway_info: {} },
    });
    assert.equal(cleared.body.router.external_gateway_info, null);
    assert.equal((await api<{ ports: Port[] }>('GET', `/ports?device_id=${router.id}`)).body.ports.length, 0);
    assert.equal((await api('DELETE', `/floatingips/${fip.id}`)).status, 204);
    assert.equal((await api('DELETE', `/routers/${router.id}`)).status, 204);
    // The floating IP's address is free again.
    assert.equal(
      (
        await create<FloatingIp>('/floatingips', 'floatingip', {
          floating_network_id: ext.id,
          floating_ip_address: '172.24.4.77',
        })
      ).floating_ip_address,
      '172.24.4.77',
    );
  });

  it('gives security groups the two default egress rules, detects duplicate rules, and refuses to delete a group in use', async () => {
    const sg = await create<SecurityGroup>('/security-groups', 'security_group', { name: 'np', description: 'np' });
    assert.deepEqual(sg.security_group_rules.map((r) => `${r.direction}/${r.ethertype}`).sort(), [
      'egress/IPv4',
      'egress/IPv6',
    ]);
    const rule = {
      security_group_id: sg.id,
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 80,
      port_range_max: 80,
      remote_ip_prefix: '10.1.2.3/8',
    };
    const created = await create<Rule>('/security-group-rules', 'security_group_rule', rule);
    assert.equal(created.normalized_cidr, '10.0.0.0/8');
    assert.deepEqual(await error('POST', '/security-group-rules', { security_group_rule: rule }), {
      status: 409,
      type: 'SecurityGroupRuleExists',
      message: `Security group rule already exists. Rule id is ${created.id}.`,
    });
    const bulk = await error('POST', '/security-group-rules', {
      security_group_rules: [
        { ...rule, port_range_min: 81, port_range_max: 81 },
        { security_group_id: sg.id, direction: 'egress', ethertype: 'IPv4' },
      ],
    });
    assert.equal(bulk.type, 'SecurityGroupRuleExists');
    const rules = await api<{ security_group_rules: Rule[] }>(
      'GET',
      `/security-group-rules?security_group_id=${sg.id}`,
    );
    assert.equal(rules.body.security_group_rules.length, 3, 'the failed bulk created nothing');
    const defaults = await api<{ security_groups: SecurityGroup[] }>('GET', '/security-groups?name=default');
    assert.equal(defaults.body.security_groups.length, 1);
    const p = await create<Port>('/ports', 'port', { network_id: net.id, security_groups: [sg.id] });
    assert.deepEqual(p.security_groups, [sg.id]);
    assert.deepEqual(await error('DELETE', `/security-groups/${sg.id}`), {
      status: 409,
      type: 'SecurityGroupInUse',
      message: `Security Group ${sg.id} in use.`,
    });
    await api('DELETE', `/ports/${p.id}`);
    assert.equal((await api('DELETE', `/security-groups/${sg.id}`)).status, 204);
    assert.equal(
      (await api<{ security_group_rules: Rule[] }>('GET', `/security-group-rules?security_group_id=${sg.id}`)).body
        .security_group_rules.length,
      0,
    );
  });
});
