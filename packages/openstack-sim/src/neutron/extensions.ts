/**
 * The extensions the simulator implements, under the aliases real Neutron uses. Only what the sim really does is
 * listed, so a client that checks `GET /v2.0/extensions` (as it should on a real cloud) sees the truth. Not listed:
 * `tag-ports-during-bulk-creation` (Zed's recipe config does not load that ML2 extension driver: a port POST takes
 * `tags` but drops them, other resources refuse them), `dhcp_agent_scheduler`, `agent` (there are no agents).
 */
const list: [alias: string, name: string, description: string][] = [
  [
    'standard-attr-tag',
    'Tag support for resources with standard attribute: subnet, trunk, network_segment_range, router, network, policy, subnetpool, port, security_group, floatingip',
    'Enables to set tag on resources with standard attribute.',
  ],
  ['standard-attr-description', 'standard-attr-description', 'Extension to add descriptions to standard attributes'],
  [
    'standard-attr-revisions',
    'Resource revision numbers',
    'This extension will display the revision number of neutron resources.',
  ],
  [
    'standard-attr-timestamp',
    'Resource timestamps',
    'Adds created_at and updated_at fields to all Neutron resources that have Neutron standard attributes.',
  ],
  [
    'revision-if-match',
    'If-Match constraints based on revision_number',
    'Extension indicating that If-Match based on revision_number is supported.',
  ],
  ['project-id', 'project_id field enabled', 'Extension that indicates that project_id field is enabled.'],
  ['filter-validation', 'Filter parameters validation', 'Provides validation on filter parameters.'],
  ['pagination', 'Pagination support', 'Extension that indicates that pagination is enabled.'],
  ['sorting', 'Sorting support', 'Extension that indicates that sorting is enabled.'],
  ['provider', 'Provider Network', 'Expose mapping of virtual networks to physical networks'],
  ['external-net', 'Neutron external network', 'Adds external network attribute to network resource.'],
  ['net-mtu', 'Network MTU', 'Provides MTU attribute for a network resource.'],
  ['binding', 'Port Binding', 'Expose port bindings of a virtual port to external application'],
  ['port-security', 'Port Security', 'Provides port security'],
  ['allowed-address-pairs', 'Allowed Address Pairs', 'Provides allowed address pairs'],
  [
    'extra_dhcp_opt',
    'Neutron Extra DHCP options',
    'Extra options configuration for DHCP. For example PXE boot options to DHCP clients can be specified (e.g. tftp-server, server-ip-address, bootfile-name)',
  ],
  ['subnet_allocation', 'Subnet Allocation', 'Enables allocation of subnets from a subnet pool'],
  ['security-group', 'security-group', 'The security groups extension.'],
  [
    'stateful-security-group',
    'Stateful security group',
    'Extension adding possibility to make security groups stateless.',
  ],
  [
    'router',
    'Neutron L3 Router',
    'Router abstraction for basic L3 forwarding between L2 Neutron networks and access to external networks via a NAT gateway.',
  ],
  [
    'ext-gw-mode',
    'Neutron L3 Configurable external gateway mode',
    'Extension of the router abstraction for specifying whether SNAT should occur on the external gateway',
  ],
  ['extraroute', 'Neutron Extra Route', 'Extra routes configuration for L3 router'],
  ['fip-port-details', 'Floating IP Port Details Extension', 'Add port_details attribute to Floating IP resource'],
  ['trunk', 'Trunk Extension', 'Provides support for trunk ports'],
  ['trunk-details', 'Trunk port details', 'Expose trunk port details'],
  ['quotas', 'Quota management support', 'Expose functions for quotas management per project'],
  ['quota_details', 'Quota details management support', 'Expose functions for quotas usage statistics per project'],
];

export interface Extension {
  name: string;
  alias: string;
  description: string;
  updated: string;
  links: [];
}

export const extensions: Extension[] = list.map(([alias, name, description]) => ({
  name,
  alias,
  description,
  updated: '2017-01-01T10:00:00-00:00',
  links: [],
}));
