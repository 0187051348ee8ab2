/**
 * EndpointSlices (discovery.k8s.io/v1) and NetworkPolicies (networking.k8s.io/v1), after pkg/apis/discovery and
 * pkg/apis/networking validation.
 */
import {
  validateDns1123Label,
  validateDns1123Subdomain,
  validatePortName,
  validatePortNumber,
  type KubeObject,
} from '../../../../src/kube/api/index.ts';
import {
  duplicate,
  forbidden,
  immutable,
  invalid,
  invalidEach,
  list,
  notSupported,
  num,
  record,
  required,
  str,
  tooMany,
  type FieldCause,
} from './field.ts';
import { ipFamilyOf, isValidCidr, specialIpProblems } from './ip.ts';
import { validateLabelSelector } from './meta.ts';
import { PORT_PROTOCOLS } from './pod.ts';

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;
const POLICY_TYPES = ['Ingress', 'Egress'];

/** One endpoint address for its slice's address type (unknown types are not checked, as upstream). */
function addressCauses(address: string, addressType: unknown, field: string): FieldCause[] {
  if (addressType === 'IPv4' || addressType === 'IPv6') {
    const causes =
      ipFamilyOf(address) === addressType ? [] : [invalid(field, address, `must be a valid ${addressType} address`)];
    return [...causes, ...invalidEach(field, address, specialIpProblems(address))];
  }
  if (addressType !== 'FQDN') return [];
  const name = address.replace(/\.$/, '');
  const errs = validateDns1123Subdomain(name);
  if (errs.length > 0) return [invalid(field, name, errs.join(','))];
  if (!name.includes('.'))
    return [invalid(field, name, 'should be a domain with at least two segments separated by dots')];
  return [];
}

function validateEndpoints(slice: KubeObject): FieldCause[] {
  const endpoints = list(slice.endpoints);
  if (endpoints.length > MAX_ENDPOINTS) return [tooMany('endpoints', endpoints.length, MAX_ENDPOINTS)];
  const causes: FieldCause[] = [];
  endpoints.forEach((raw, i) => {
    const endpoint = record(raw) ?? {};
    const path = `endpoints[${i}].addresses`;
    const addresses = list(endpoint.addresses);
    if (addresses.length === 0) causes.push(required(path, 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) causes.push(tooMany(path, addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, j) => causes.push(...addressCauses(str(a) ?? String(a), slice.addressType, `${path}[${j}]`)));
    const nodeName = str(endpoint.nodeName);
    if (nodeName) causes.push(...invalidEach(`endpoints[${i}].nodeName`, nodeName, validateDns1123Subdomain(nodeName)));
    const hostname = str(endpoint.hostname);
    if (hostname) causes.push(...invalidEach(`endpoints[${i}].hostname`, hostname, validateDns1123Label(hostname)));
  });
  return causes;
}

function validateSlicePorts(ports: unknown): FieldCause[] {
  const all = list(ports);
  if (all.length > MAX_PORTS) return [tooMany('ports', all.length, MAX_PORTS)];
  const causes: FieldCause[] = [];
  const names = new Set<string>();
  all.forEach((raw, i) => {
    const port = record(raw) ?? {};
    const at = `ports[${i}]`;
    const name = str(port.name) ?? '';
    if (name) causes.push(...invalidEach(`${at}.name`, name, validateDns1123Label(name)));
    if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
    names.add(name);
    // An absent (or null) protocol is defaulted to TCP before validation upstream.
    if (
      port.protocol !== undefined &&
      port.protocol !== null &&
      !(PORT_PROTOCOLS as readonly unknown[]).includes(port.protocol)
    ) {
      causes.push(notSupported(`${at}.protocol`, port.protocol, PORT_PROTOCOLS));
    }
    if (port.port !== undefined && port.port !== null)
      causes.push(...invalidEach(`${at}.port`, port.port, validatePortNumber(num(port.port) ?? NaN)));
  });
  return causes;
}

/** EndpointSlice create and update: a supported, unchanging addressType; endpoints with addresses of that type. */
export function validateEndpointSlice(obj: KubeObject, old?: KubeObject): FieldCause[] {
  const causes: FieldCause[] = [];
  const addressType = obj.addressType;
  if (addressType === undefined || addressType === null || addressType === '') causes.push(required('addressType'));
  else if (!ADDRESS_TYPES.includes(addressType as string))
    causes.push(notSupported('addressType', addressType, ADDRESS_TYPES));
  causes.push(...validateEndpoints(obj), ...validateSlicePorts(obj.ports));
  if (old) causes.push(...immutable('addressType', obj.addressType, old.addressType));
  return causes;
}

function validatePolicyPort(raw: unknown, at: string): FieldCause[] {
  const port = record(raw) ?? {};
  const causes: FieldCause[] = [];
  if (
    port.protocol !== undefined &&
    port.protocol !== null &&
    !(PORT_PROTOCOLS as readonly unknown[]).includes(port.protocol)
  ) {
    causes.push(notSupported(`${at}.protocol`, port.protocol, PORT_PROTOCOLS));
  }
  if (typeof port.port === 'string') causes.push(...invalidEach(`${at}.port`, port.port, validatePortName(port.port)));
  else if (port.port !== undefined && port.port !== null)
    causes.push(...invalidEach(`${at}.port`, port.port, validatePortNumber(num(port.port) ?? NaN)));
  return causes;
}

function validatePeer(raw: unknown, at: string): FieldCause[] {
  const peer = record(raw) ?? {};
  const causes: FieldCause[] = [];
  let peers = 0;
  for (const key of ['podSelector', 'namespaceSelector'] as const) {
    if (peer[key] === undefined || peer[key] === null) continue;
    peers++;
    causes.push(...validateLabelSelector(peer[key], `${at}.${key}`));
  }
  const ipBlock = record(peer.ipBlock);
  if (ipBlock) {
    peers++;
    const cidr = str(ipBlock.cidr) ?? '';
    if (!cidr) causes.push(required(`${at}.ipBlock.cidr`));
    else if (!isValidCidr(cidr))
      causes.push(
        invalid(`${at}.ipBlock.cidr`, cidr, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'),
      );
    list(ipBlock.except).forEach((e, k) => {
      const value = str(e) ?? String(e);
      if (!isValidCidr(value))
        causes.push(
          invalid(
            `${at}.ipBlock.except[${k}]`,
            value,
            'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
          ),
        );
    });
  }
  if (peers === 0) causes.push(required(at, 'must specify a peer'));
  else if (peers > 1 && ipBlock) causes.push(forbidden(at, 'may not specify both ipBlock and another peer'));
  return causes;
}

/**
 * NetworkPolicy create and update. A missing `podSelector` is accepted, as the real server decodes it to `{}`
 * (all pods); only a present one is checked.
 */
export function validateNetworkPolicy(obj: KubeObject): FieldCause[] {
  const spec = record(obj.spec) ?? {};
  const causes = validateLabelSelector(spec.podSelector, 'spec.podSelector');
  for (const [direction, peersKey] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    list(spec[direction]).forEach((rawRule, i) => {
      const rule = record(rawRule) ?? {};
      const at = `spec.${direction}[${i}]`;
      list(rule.ports).forEach((p, j) => causes.push(...validatePolicyPort(p, `${at}.ports[${j}]`)));
      list(rule[peersKey]).forEach((p, j) => causes.push(...validatePeer(p, `${at}.${peersKey}[${j}]`)));
    });
  }
  const policyTypes = list(spec.policyTypes);
  if (policyTypes.length > POLICY_TYPES.length) {
    causes.push(invalid('spec.policyTypes', policyTypes, 'may not specify more than two policyTypes'));
  } else {
    policyTypes.forEach((t, i) => {
      if (!POLICY_TYPES.includes(t as string)) causes.push(notSupported(`spec.policyTypes[${i}]`, t, POLICY_TYPES));
    });
  }
  return causes;
}
