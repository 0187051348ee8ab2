/**
 * Services (core/v1), after ValidateService / ValidateServiceUpdate: ports, types, cluster IPs (syntax, headless
 * rules, the primary address fixed once set) and node ports. Absent defaulted fields (type, protocol, targetPort,
 * sessionAffinity) are accepted: the server defaults them before validating.
 */
import {
  goQuote,
  validateDns1123Label,
  validateDns1123Subdomain,
  validatePortName,
  validatePortNumber,
  validateQualifiedName,
  type KubeObject,
} from '../../../../src/kube/api/index.ts';
import {
  duplicate,
  forbidden,
  invalid,
  invalidEach,
  list,
  notSupported,
  num,
  record,
  required,
  semanticEqual,
  str,
  type FieldCause,
} from './field.ts';
import { ipFamilyOf, isValidCidr, specialIpProblems } from './ip.ts';
import { validateLabels } from './meta.ts';
import { PORT_PROTOCOLS } from './pod.ts';

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const SESSION_AFFINITIES = ['ClientIP', 'None'];
const KUBELET_PORT = 10250;
const IP_EXAMPLE = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/**
 * The addresses a Service asks to be reachable at: `externalIPs` (valid, and not special: loopback, link-local…),
 * `loadBalancerIP`, and `loadBalancerSourceRanges` (CIDRs, space-padding tolerated, only for LoadBalancer Services).
 */
function validateServiceAddresses(spec: Record<string, unknown>, type: string): FieldCause[] {
  const causes: FieldCause[] = [];
  list(spec.externalIPs).forEach((ip, i) => {
    const field = `spec.externalIPs[${i}]`;
    const text = str(ip) ?? String(ip);
    if (ipFamilyOf(text) === undefined) causes.push(invalid(field, text, IP_EXAMPLE));
    else for (const problem of specialIpProblems(text)) causes.push(invalid(field, text, problem));
  });
  const lbIP = str(spec.loadBalancerIP);
  if (lbIP && ipFamilyOf(lbIP) === undefined) causes.push(invalid('spec.loadBalancerIP', lbIP, IP_EXAMPLE));
  const ranges = list(spec.loadBalancerSourceRanges);
  if (ranges.length > 0 && type !== 'LoadBalancer')
    causes.push(forbidden('spec.loadBalancerSourceRanges', "may only be used when `type` is 'LoadBalancer'"));
  ranges.forEach((range, i) => {
    const text = (str(range) ?? String(range)).trim();
    if (!isValidCidr(text))
      causes.push(
        invalid(
          `spec.loadBalancerSourceRanges[${i}]`,
          text,
          'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
        ),
      );
  });
  return causes;
}

/** The cluster IPs a spec asks for: `clusterIPs`, or `[clusterIP]` from clients that only know the old field. */
function clusterIPsOf(spec: Record<string, unknown>): string[] {
  const ips = list(spec.clusterIPs).map((ip) => str(ip) ?? String(ip));
  if (ips.length > 0) return ips;
  const ip = str(spec.clusterIP);
  return ip ? [ip] : [];
}

/** Go's `%#v` of the core.ServicePort key upstream reports for a duplicate (protocol, port) pair. */
function servicePortKey(protocol: string, port: number): string {
  return (
    `core.ServicePort{Name:"", Protocol:${goQuote(protocol)}, AppProtocol:(*string)(nil), Port:${port}, ` +
    'TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}'
  );
}

function validateTargetPort(value: unknown, field: string): FieldCause[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return invalidEach(field, value, validatePortName(value));
  return invalidEach(field, value, validatePortNumber(num(value) ?? NaN));
}

function validatePorts(spec: Record<string, unknown>, type: string): FieldCause[] {
  const causes: FieldCause[] = [];
  const ports = list(spec.ports).map((p) => record(p) ?? {});
  const names = new Set<string>();
  const seen = new Set<string>();
  const seenNodePorts = new Set<string>();
  ports.forEach((port, i) => {
    const at = `spec.ports[${i}]`;
    const name = str(port.name) ?? '';
    if (ports.length > 1 && !name) causes.push(required(`${at}.name`));
    else if (name) {
      causes.push(...invalidEach(`${at}.name`, name, validateDns1123Label(name)));
      if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
      else names.add(name);
    }
    const number = num(port.port) ?? 0;
    causes.push(...invalidEach(`${at}.port`, port.port ?? 0, validatePortNumber(number)));
    const protocol = port.protocol === undefined ? 'TCP' : port.protocol;
    const protocolKey = typeof protocol === 'string' ? protocol : JSON.stringify(protocol);
    if (protocol === '') causes.push(required(`${at}.protocol`));
    else if (!(PORT_PROTOCOLS as readonly unknown[]).includes(protocol))
      causes.push(notSupported(`${at}.protocol`, protocol, PORT_PROTOCOLS));
    causes.push(...validateTargetPort(port.targetPort, `${at}.targetPort`));
    const appProtocol = str(port.appProtocol);
    if (appProtocol !== undefined)
      causes.push(...invalidEach(`${at}.appProtocol`, appProtocol, validateQualifiedName(appProtocol)));
    if (type === 'LoadBalancer' && number === KUBELET_PORT) {
      causes.push(invalid(at, number, `may not expose port ${KUBELET_PORT} externally since it is used by kubelet`));
    }
    const nodePort = num(port.nodePort) ?? 0;
    if (nodePort !== 0) {
      if (type === 'ClusterIP') causes.push(forbidden(`${at}.nodePort`, "may not be used when `type` is 'ClusterIP'"));
      causes.push(...invalidEach(`${at}.nodePort`, nodePort, validatePortNumber(nodePort)));
      const nodeKey = `${protocolKey}/${nodePort}`;
      if (seenNodePorts.has(nodeKey)) causes.push(duplicate(`${at}.nodePort`, nodePort));
      seenNodePorts.add(nodeKey);
    }
    const key = `${protocolKey}/${number}`;
    if (seen.has(key)) {
      causes.push({
        reason: 'FieldValueDuplicate',
        field: at,
        message: `Duplicate value: ${servicePortKey(protocolKey, number)}`,
      });
    }
    seen.add(key);
  });
  return causes;
}

function validateClusterIPs(spec: Record<string, unknown>, type: string, ips: string[]): FieldCause[] {
  const causes: FieldCause[] = [];
  const headless = ips[0] === 'None';
  if (type === 'ExternalName') {
    if (ips.length > 0) causes.push(forbidden('spec.clusterIPs', 'may not be set for ExternalName services'));
    if (list(spec.ipFamilies).length > 0)
      causes.push(forbidden('spec.ipFamilies', 'may not be set for ExternalName services'));
    if (spec.ipFamilyPolicy !== undefined && spec.ipFamilyPolicy !== null) {
      causes.push(forbidden('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
    }
    return causes;
  }
  if (headless && (type === 'LoadBalancer' || type === 'NodePort')) {
    causes.push(invalid('spec.clusterIPs[0]', 'None', `may not be set to 'None' for ${type} services`));
  }
  ips.forEach((ip, i) => {
    if (i === 0 && headless) return;
    if (ipFamilyOf(ip) === undefined)
      causes.push(
        invalid(`spec.clusterIPs[${i}]`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'),
      );
  });
  if (ips.length > 2) causes.push(invalid('spec.clusterIPs', ips, 'may only hold up to 2 values'));
  causes.push(...validateIpFamilies(spec, headless ? [] : ips));
  return causes;
}

const IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
const IP_FAMILIES = ['IPv4', 'IPv6'];

/**
 * ValidateServiceClusterIPsRelatedFields' family rules: a known policy, known families each once (two at most), at
 * most one cluster IP per family, and each cluster IP of the family `ipFamilies` names at its index.
 */
function validateIpFamilies(spec: Record<string, unknown>, ips: string[]): FieldCause[] {
  const causes: FieldCause[] = [];
  const policy = spec.ipFamilyPolicy;
  if (policy !== undefined && policy !== null && !IP_FAMILY_POLICIES.includes(policy as string))
    causes.push(notSupported('spec.ipFamilyPolicy', policy, IP_FAMILY_POLICIES));
  const families = list(spec.ipFamilies);
  const seen = new Set<unknown>();
  families.forEach((family, i) => {
    if (!IP_FAMILIES.includes(family as string))
      causes.push(notSupported(`spec.ipFamilies[${i}]`, family, IP_FAMILIES));
    else if (seen.has(family)) causes.push(duplicate(`spec.ipFamilies[${i}]`, family));
    seen.add(family);
  });
  if (families.length > 2) causes.push(invalid('spec.ipFamilies', families, 'may only hold up to 2 values'));
  const ipFamilies = ips.map((ip) => ipFamilyOf(ip));
  if (ipFamilies.length === 2 && ipFamilies[0] !== undefined && ipFamilies[0] === ipFamilies[1])
    causes.push(invalid('spec.clusterIPs', ips, 'may specify no more than one IP for each IP family'));
  ipFamilies.forEach((family, i) => {
    const wanted = families[i];
    if (family !== undefined && IP_FAMILIES.includes(wanted as string) && wanted !== family)
      causes.push(
        invalid(
          `spec.clusterIPs[${i}]`,
          ips[i],
          `expected an ${wanted as string} value as indicated by \`ipFamilies[${i}]\``,
        ),
      );
  });
  return causes;
}

/**
 * Service create and update. On update the primary cluster IP may not change once allocated (unless the service
 * becomes or stops being ExternalName); an absent one is fine, since the server keeps the stored address.
 */
export function validateService(obj: KubeObject, old?: KubeObject): FieldCause[] {
  const spec = record(obj.spec) ?? {};
  const type = str(spec.type) ?? 'ClusterIP';
  const ips = clusterIPsOf(spec);
  const causes: FieldCause[] = [];
  if (list(spec.ports).length === 0 && ips[0] !== 'None' && type !== 'ExternalName')
    causes.push(required('spec.ports'));
  if (type === 'ExternalName') {
    const cname = (str(spec.externalName) ?? '').replace(/\.$/, '');
    if (cname) causes.push(...invalidEach('spec.externalName', cname, validateDns1123Subdomain(cname)));
    else causes.push(required('spec.externalName'));
  }
  causes.push(...validatePorts(spec, type));
  causes.push(...validateServiceAddresses(spec, type));
  if (spec.selector !== undefined && spec.selector !== null)
    causes.push(...validateLabels(spec.selector, 'spec.selector'));
  if (spec.sessionAffinity !== undefined && !SESSION_AFFINITIES.includes(spec.sessionAffinity as string)) {
    causes.push(notSupported('spec.sessionAffinity', spec.sessionAffinity, SESSION_AFFINITIES));
  }
  if (spec.type !== undefined && !SERVICE_TYPES.includes(spec.type as string))
    causes.push(notSupported('spec.type', spec.type, SERVICE_TYPES));

  const oldSpec = old ? (record(old.spec) ?? {}) : undefined;
  const oldIPs = oldSpec ? clusterIPsOf(oldSpec) : [];
  const clusterIP = str(spec.clusterIP);
  // A client that changed only `clusterIP` leaves the stored `clusterIPs` behind; upstream then treats `clusterIP`
  // as the request, so the change is reported as such rather than as a mismatch.
  const onlyClusterIPChanged =
    oldSpec !== undefined && semanticEqual(spec.clusterIPs, oldSpec.clusterIPs) && !!clusterIP;
  const primary = onlyClusterIPChanged ? clusterIP : ips[0];
  if (!onlyClusterIPChanged && clusterIP && list(spec.clusterIPs).length > 0 && clusterIP !== ips[0]) {
    causes.push(invalid('spec.clusterIPs', ips, 'first value must match `clusterIP`'));
  }
  causes.push(...validateClusterIPs(spec, type, ips));
  const oldType = str(oldSpec?.type) ?? 'ClusterIP';
  if (
    oldSpec &&
    type !== 'ExternalName' &&
    oldType !== 'ExternalName' &&
    oldIPs[0] &&
    primary &&
    primary !== oldIPs[0]
  ) {
    causes.push(invalid('spec.clusterIPs[0]', primary, 'may not change once set'));
  }
  return causes;
}
