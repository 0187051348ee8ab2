/**
 * Octavia's version document (`GET <endpoint>/`) and the features that depend on the v2 minor version.
 *
 * Octavia has no microversion header: every v2.x shares the `/v2` path, and the root lists one entry per minor
 * version, the newest with status `CURRENT` (octavia/api/root_controller.py; Zed 11.0.0 ends at v2.26). A client
 * finds out what the server understands by reading that list, then leaves out what the server would reject.
 */

/**
 * The minor version that introduced each feature Raven may use, from the comments beside each entry in Octavia's
 * `root_controller.py` (and the "New in version 2.x" notes of the API reference).
 */
export const octaviaFeatures = {
  /** `tags` on every object, and the `tags`, `tags-any`, `not-tags`, `not-tags-any` filters. */
  tags: 5,
  /** Load balancer `flavor_id`. */
  flavors: 6,
  /** Listener client TLS authentication (`client_ca_tls_container_ref` …). */
  tlsClientAuth: 8,
  /** L7 policy `redirect_http_code`. */
  redirectHttpCode: 9,
  /** Health monitor `http_version` and `domain_name` (the Host header). */
  healthMonitorHostHeader: 10,
  /** `PUT /pools/{id}/members?additive_only=true`. */
  additiveMemberBatch: 11,
  /** Listener `allowed_cidrs` (VIP ACL). */
  vipAcl: 12,
  /** `lb_algorithm: SOURCE_IP_PORT`. */
  sourceIpPortAlgorithm: 13,
  /** Load balancer `availability_zone`. */
  availabilityZones: 14,
  /** `tls_ciphers` on listeners and pools. */
  tlsCiphers: 15,
  /** HTTP and TCP health monitors on UDP pools. */
  udpHttpTcpHealthMonitors: 16,
  listenerTlsVersions: 17,
  poolTlsVersions: 18,
  listenerAlpn: 20,
  /** Pool protocol `PROXYV2`. */
  proxyV2: 22,
  sctp: 23,
  poolAlpn: 24,
  /** Listener protocol `PROMETHEUS`. */
  prometheusListener: 25,
  /** Load balancer `additional_vips`. */
  additionalVips: 26,
} as const satisfies Record<string, number>;

export type OctaviaFeature = keyof typeof octaviaFeatures;

export interface OctaviaVersion {
  /** As listed: `v2.26`. */
  id: string;
  major: number;
  minor: number;
  /** `CURRENT`, `SUPPORTED` or `DEPRECATED`. */
  status: string;
  updated?: string | undefined;
}

/** What one Octavia endpoint speaks: its version list and the newest v2 minor version. */
export class OctaviaVersions {
  /** Every v2.x the server lists, oldest first. */
  readonly versions: readonly OctaviaVersion[];
  /** The server's newest v2 version (the `CURRENT` entry, else the highest listed). */
  readonly current: OctaviaVersion;

  constructor(versions: readonly OctaviaVersion[]) {
    const v2 = versions.filter((v) => v.major === 2).sort((a, b) => a.minor - b.minor);
    const newest = v2.at(-1);
    if (!newest) throw new Error('the version document lists no v2 API');
    this.versions = v2;
    this.current = [...v2].reverse().find((v) => v.status === 'CURRENT') ?? newest;
  }

  /** The current v2 minor version (`26` for `v2.26`). */
  get minor(): number {
    return this.current.minor;
  }

  /** True when the server's v2 minor version is at least `minor`. */
  atLeast(minor: number): boolean {
    return this.current.minor >= minor;
  }

  /**
   * True when the server understands `feature` (see {@link octaviaFeatures}).
   *
   * @example
   * const spec = { name, vip_subnet_id, ...((await octavia.versions({ signal })).supports('tags') ? { tags } : {}) };
   */
  supports(feature: OctaviaFeature): boolean {
    return this.atLeast(octaviaFeatures[feature]);
  }
}

/**
 * Reads Octavia's `{"versions": [{"id": "v2.0", "status": "SUPPORTED", …}, …]}`. Returns undefined when the body is
 * not such a document (the caller reports it).
 */
export function parseVersionDocument(body: unknown): OctaviaVersions | undefined {
  const list = (body as { versions?: unknown } | undefined)?.versions;
  if (!Array.isArray(list)) return undefined;
  const versions: OctaviaVersion[] = [];
  for (const entry of list as unknown[]) {
    const e = entry as { id?: unknown; status?: unknown; updated?: unknown } | null;
    const match = typeof e?.id === 'string' ? /^v(\d+)(?:\.(\d+))?$/.exec(e.id) : null;
    if (!e || !match) continue;
    versions.push({
      id: e.id as string,
      major: Number(match[1]),
      minor: Number(match[2] ?? 0),
      status: typeof e.status === 'string' ? e.status : '',
      updated: typeof e.updated === 'string' ? e.updated : undefined,
    });
  }
  return versions.some((v) => v.major === 2) ? new OctaviaVersions(versions) : undefined;
}
