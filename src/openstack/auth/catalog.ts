import type { CloudConfig } from '../config/types.ts';
import { OpenStackConfigError, type ServiceType } from '../errors.ts';
import type { Authenticator, AuthSession } from './keystone.ts';
import type { Interceptor } from '../transport/http.ts';

/** Version suffixes some catalogs carry; Raven's clients add the version to every path themselves. */
const versionSuffix: Record<ServiceType, RegExp> = {
  identity: /\/v3$/,
  network: /\/v2\.0$/,
  'load-balancer': /\/v2(\.0)?$/,
};

/**
 * The base URL of a service: the cloud's `<service>_endpoint_override`, else the catalog entry of that type for the
 * configured interface (and region, when one is configured). Trailing slashes and version suffixes are removed.
 */
export function endpointFor(cloud: CloudConfig, service: ServiceType, session: AuthSession): string {
  const override = cloud.endpointOverrides[service];
  const pick = (url: string): string => url.replace(/\/+$/, '').replace(versionSuffix[service], '');
  if (override) return pick(override);
  if (cloud.auth.type === 'none') {
    const key = `${service.replace('-', '_')}_endpoint_override`;
    throw new OpenStackConfigError(
      'ENDPOINT_NOT_FOUND',
      `cloud "${cloud.name}" (${cloud.source}) uses auth_type none, so ${key} must give the ${service} endpoint`,
    );
  }
  const entries = session.catalog.filter((s) => s.type === service);
  const candidates = entries.flatMap((s) => s.endpoints).filter((e) => e.interface === cloud.interface);
  const match = cloud.regionName
    ? candidates.find((e) => (e.region_id ?? e.region) === cloud.regionName || e.region === cloud.regionName)
    : candidates[0];
  if (!match) {
    const seen = session.catalog.flatMap((s) =>
      s.endpoints.map((e) => `${s.type}/${e.interface}/${e.region_id ?? e.region ?? '-'}`),
    );
    throw new OpenStackConfigError(
      'ENDPOINT_NOT_FOUND',
      `no ${service} endpoint with interface ${cloud.interface}${cloud.regionName ? ` in region ${cloud.regionName}` : ''} in the catalog of cloud "${cloud.name}" (it has: ${seen.join(', ') || 'nothing'})`,
    );
  }
  return pick(match.url);
}

/**
 * Resolves the URL, adds the token, and on a 401 drops the token and tries once more with a fresh one (a 401 means
 * the service did nothing, so resending is safe even for a POST). Without Keystone, Octavia takes the project from
 * `X-Project-Id`.
 */
export function authenticate(cloud: CloudConfig, auth: Authenticator): Interceptor {
  return (next) => async (req) => {
    for (let attempt = 1; ; attempt++) {
      const session = await auth.session(req.signal);
      const query = req.query.toString();
      const url = `${endpointFor(cloud, req.service, session)}${req.path}${query ? `?${query}` : ''}`;
      const headers = { ...req.headers };
      if (session.token) headers['x-auth-token'] = session.token;
      else if (req.service === 'load-balancer' && cloud.projectId && !headers['x-project-id'])
        headers['x-project-id'] = cloud.projectId;
      const res = await next({ ...req, url, headers });
      if (res.status === 401 && session.token && attempt === 1) {
        auth.invalidate(session.token);
        continue;
      }
      return res;
    }
  };
}
