import type { ServiceType } from '../errors.ts';

/** Keystone v3 password auth (openstacksdk `auth_type: password` / `v3password`). */
export interface PasswordAuth {
  type: 'password';
  authUrl: string;
  username?: string | undefined;
  userId?: string | undefined;
  password: string;
  userDomainName?: string | undefined;
  userDomainId?: string | undefined;
  projectName?: string | undefined;
  projectId?: string | undefined;
  projectDomainName?: string | undefined;
  projectDomainId?: string | undefined;
  /** Domain scope, when no project is given. */
  domainName?: string | undefined;
  domainId?: string | undefined;
}

/** Keystone v3 application credential (`auth_type: v3applicationcredential`): scoped by the credential itself. */
export interface ApplicationCredentialAuth {
  type: 'v3applicationcredential';
  authUrl: string;
  applicationCredentialId?: string | undefined;
  applicationCredentialName?: string | undefined;
  applicationCredentialSecret: string;
  /** Needed with a credential *name* (names are per user). */
  username?: string | undefined;
  userId?: string | undefined;
  userDomainName?: string | undefined;
  userDomainId?: string | undefined;
}

/** An existing Keystone token, exchanged for a scoped one (`auth_type: token` / `v3token`). */
export interface TokenAuth {
  type: 'token';
  authUrl: string;
  token: string;
  projectName?: string | undefined;
  projectId?: string | undefined;
  projectDomainName?: string | undefined;
  projectDomainId?: string | undefined;
}

/** No Keystone (`auth_type: none`): services run with `auth_strategy = noauth` and every endpoint is given. */
export interface NoAuth {
  type: 'none';
}

export type AuthConfig = PasswordAuth | ApplicationCredentialAuth | TokenAuth | NoAuth;

export type EndpointInterface = 'public' | 'internal' | 'admin';

/**
 * One cloud, resolved from clouds.yaml (+ secure.yaml) or `OS_*` variables. Holds secrets: log it with {@link
 * describeCloud}.
 */
export interface CloudConfig {
  /** The cloud's name in clouds.yaml, or `envvars`. */
  name: string;
  /** Where it came from: the clouds.yaml path, or `environment`. */
  source: string;
  auth: AuthConfig;
  regionName?: string | undefined;
  interface: EndpointInterface;
  /**
   * `<service>_endpoint_override`: used instead of the catalog (and required for every service with `auth_type: none`).
   */
  endpointOverrides: Partial<Record<ServiceType, string>>;
  /** PEM bundle to trust (read from `cacert`). */
  ca?: string | undefined;
  /** `verify: false` / `insecure: true`: skip TLS verification. */
  insecure: boolean;
  /**
   * The project to act in where the service takes it from a header (Octavia noauth's `X-Project-Id`):
   * `load_balancer_project_id` (which the `openstack` CLI ignores), else `project_id`.
   */
  projectId?: string | undefined;
}

/** The config with every secret replaced, for logs and error messages. */
export function describeCloud(cloud: CloudConfig): Record<string, unknown> {
  const auth: Record<string, unknown> = { ...cloud.auth };
  for (const key of ['password', 'applicationCredentialSecret', 'token']) if (key in auth) auth[key] = '<redacted>';
  return {
    name: cloud.name,
    source: cloud.source,
    auth,
    regionName: cloud.regionName,
    interface: cloud.interface,
    endpointOverrides: cloud.endpointOverrides,
    insecure: cloud.insecure,
    ca: cloud.ca ? '<pem>' : undefined,
  };
}
