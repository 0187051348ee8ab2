/**
 * allocators: the API server's pools of cluster IPs (from the service CIDR) and node ports (from the node-port
 * range), with upstream's rules and error messages. Pure in-memory state: the server re-`allocate`s what stored
 * Services hold after a restart.
 */
export { ServiceIpAllocator, ServiceIpFamilies, IPV6_RANGE_CAP } from './service-ip.ts';
export { PortAllocator } from './ports.ts';
