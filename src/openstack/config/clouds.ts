import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { errorMessage } from '../../core/index.ts';
import { OpenStackConfigError, type ServiceType } from '../errors.ts';
import type { AuthConfig, CloudConfig, EndpointInterface } from './types.ts';

export interface LoadCloudOptions {
  /** `--os-cloud`; else `OS_CLOUD`. */
  cloud?: string | undefined;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  homeDir?: string;
}

type Raw = Record<string, unknown>;

const fileNames = ['clouds.yaml', 'clouds.yml', 'clouds.json'];
const secureNames = ['secure.yaml', 'secure.yml', 'secure.json'];

/** openstacksdk's search path: `./`, `~/.config/openstack/`, `/etc/openstack/` (first hit wins). */
function searchDirs(cwd: string, home: string): string[] {
  return [cwd, join(home, '.config', 'openstack'), '/etc/openstack'];
}

function findFile(explicit: string | undefined, envName: string, names: string[], dirs: string[]): string | undefined {
  if (explicit) {
    if (!existsSync(explicit))
      throw new OpenStackConfigError('CLOUDS_FILE_NOT_FOUND', `${envName}=${explicit}: no such file`);
    return explicit;
  }
  for (const dir of dirs) for (const name of names) if (existsSync(join(dir, name))) return join(dir, name);
  return undefined;
}

function readClouds(path: string): Record<string, Raw> {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new OpenStackConfigError('CLOUDS_FILE_INVALID', `${path}: not valid YAML/JSON: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  const clouds = (doc as Raw | null)?.clouds;
  if (clouds === undefined) return {};
  if (!isObject(clouds))
    throw new OpenStackConfigError('CLOUDS_FILE_INVALID', `${path}: "clouds" must be a mapping of cloud names`);
  for (const [name, cloud] of Object.entries(clouds)) {
    if (!isObject(cloud))
      throw new OpenStackConfigError('CLOUDS_FILE_INVALID', `${path}: clouds.${name} must be a mapping`);
  }
  return clouds as Record<string, Raw>;
}

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** secure.yaml's values win, merged key by key (openstacksdk's `_merge_clouds`). */
function merge(base: Raw, over: Raw): Raw {
  const out: Raw = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) && isObject(out[k]) ? merge(out[k], v) : v;
  return out;
}

/** `OS_*` variables as a clouds.yaml entry (python-openstackclient's names, `OS_TENANT_*` aliases included). */
function cloudFromEnv(env: NodeJS.ProcessEnv): Raw | undefined {
  const auth: Raw = {};
  const map: Record<string, string[]> = {
    auth_url: ['OS_AUTH_URL'],
    username: ['OS_USERNAME'],
    user_id: ['OS_USER_ID'],
    password: ['OS_PASSWORD'],
    project_name: ['OS_PROJECT_NAME', 'OS_TENANT_NAME'],
    project_id: ['OS_PROJECT_ID', 'OS_TENANT_ID'],
    user_domain_name: ['OS_USER_DOMAIN_NAME'],
    user_domain_id: ['OS_USER_DOMAIN_ID'],
    project_domain_name: ['OS_PROJECT_DOMAIN_NAME'],
    project_domain_id: ['OS_PROJECT_DOMAIN_ID'],
    domain_name: ['OS_DOMAIN_NAME'],
    domain_id: ['OS_DOMAIN_ID'],
    application_credential_id: ['OS_APPLICATION_CREDENTIAL_ID'],
    application_credential_name: ['OS_APPLICATION_CREDENTIAL_NAME'],
    application_credential_secret: ['OS_APPLICATION_CREDENTIAL_SECRET'],
    token: ['OS_TOKEN'],
  };
  for (const [key, names] of Object.entries(map)) {
    const value = names.map((n) => env[n]).find((v) => v !== undefined && v !== '');
    if (value !== undefined) auth[key] = value;
  }
  const cloud: Raw = { auth };
  const top: Record<string, string[]> = {
    auth_type: ['OS_AUTH_TYPE'],
    region_name: ['OS_REGION_NAME'],
    interface: ['OS_INTERFACE', 'OS_ENDPOINT_TYPE'],
    cacert: ['OS_CACERT'],
    network_endpoint_override: ['OS_NETWORK_ENDPOINT_OVERRIDE'],
    load_balancer_endpoint_override: ['OS_LOAD_BALANCER_ENDPOINT_OVERRIDE'],
    identity_endpoint_override: ['OS_IDENTITY_ENDPOINT_OVERRIDE'],
  };
  for (const [key, names] of Object.entries(top)) {
    const value = names.map((n) => env[n]).find((v) => v !== undefined && v !== '');
    if (value !== undefined) cloud[key] = value;
  }
  if (env.OS_INSECURE && /^(1|true|yes)$/i.test(env.OS_INSECURE)) cloud.insecure = true;
  if (auth.project_id !== undefined) cloud.project_id = auth.project_id;
  const any = Object.keys(auth).length > 0 || cloud.auth_type !== undefined;
  return any ? cloud : undefined;
}

const serviceKeys: Record<ServiceType, string> = {
  identity: 'identity',
  network: 'network',
  'load-balancer': 'load_balancer',
};

/**
 * Resolves one cloud the way openstacksdk and the `openstack` CLI do: the cloud named by `--os-cloud` or `OS_CLOUD`
 * from clouds.yaml (with secure.yaml merged over it), found via `OS_CLIENT_CONFIG_FILE` or `./`,
 * `~/.config/openstack/`, `/etc/openstack/`; else the `OS_*` variables; else the only cloud in clouds.yaml. Errors
 * name the file and the field that is wrong.
 *
 * @example
 * const cloud = loadCloudConfig({ cloud: flags.osCloud }); // OS_CLOUD=mycloud from the environment otherwise
 */
export function loadCloudConfig(options: LoadCloudOptions = {}): CloudConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const dirs = searchDirs(cwd, options.homeDir ?? homedir());
  const file = findFile(env.OS_CLIENT_CONFIG_FILE, 'OS_CLIENT_CONFIG_FILE', fileNames, dirs);
  const secure = findFile(env.OS_CLIENT_SECURE_FILE, 'OS_CLIENT_SECURE_FILE', secureNames, dirs);
  const clouds = file ? readClouds(file) : {};
  const secrets = secure ? readClouds(secure) : {};
  const name = options.cloud ?? env.OS_CLOUD;
  if (name) {
    const raw = clouds[name] ?? (secrets[name] ? {} : undefined);
    if (!raw) {
      const known = Object.keys(clouds);
      throw new OpenStackConfigError(
        'CLOUD_NOT_FOUND',
        `cloud "${name}" is not in ${file ?? `any clouds.yaml (searched OS_CLIENT_CONFIG_FILE, ${dirs.join(', ')})`}${known.length ? `; it has: ${known.join(', ')}` : ''}`,
      );
    }
    return toCloud(name, file ?? secure ?? 'secure.yaml', secrets[name] ? merge(raw, secrets[name]) : raw, cwd);
  }
  const fromEnv = cloudFromEnv(env);
  if (fromEnv) return toCloud('envvars', 'environment', fromEnv, cwd);
  const names = Object.keys(clouds);
  if (names.length === 1)
    return toCloud(
      names[0]!,
      file!,
      secrets[names[0]!] ? merge(clouds[names[0]!]!, secrets[names[0]!]!) : clouds[names[0]!]!,
      cwd,
    );
  throw new OpenStackConfigError(
    'NO_CLOUD',
    names.length > 1
      ? `${file} has ${names.length} clouds (${names.join(', ')}): choose one with --os-cloud or OS_CLOUD`
      : 'no OpenStack cloud configured: set OS_CLOUD with a clouds.yaml, or OS_AUTH_URL and the other OS_* variables',
  );
}

function toCloud(name: string, source: string, raw: Raw, cwd: string): CloudConfig {
  const where = source === 'environment' ? 'OS_* variables' : `${source}: clouds.${name}`;
  const auth = isObject(raw.auth) ? raw.auth : {};
  const str = (v: unknown, field: string): string | undefined => {
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string' && typeof v !== 'number')
      throw new OpenStackConfigError('CLOUD_INVALID', `${where}: ${field} must be a string`);
    return String(v);
  };
  const a = (key: string) => str(auth[key], `auth.${key}`);
  const need = (key: string, why: string): string => {
    const v = a(key);
    if (v === undefined) throw new OpenStackConfigError('CLOUD_INVALID', `${where}: auth.${key} is required ${why}`);
    return v;
  };
  const authType =
    str(raw.auth_type, 'auth_type') ?? (a('application_credential_secret') ? 'v3applicationcredential' : 'password');
  let config: AuthConfig;
  switch (authType) {
    case 'password':
    case 'v3password':
      config = {
        type: 'password',
        authUrl: need('auth_url', 'for password auth'),
        password: need('password', 'for password auth'),
        username: a('username'),
        userId: a('user_id'),
        userDomainName: a('user_domain_name'),
        userDomainId: a('user_domain_id'),
        projectName: a('project_name'),
        projectId: a('project_id'),
        projectDomainName: a('project_domain_name'),
        projectDomainId: a('project_domain_id'),
        domainName: a('domain_name'),
        domainId: a('domain_id'),
      };
      if (!config.username && !config.userId)
        throw new OpenStackConfigError(
          'CLOUD_INVALID',
          `${where}: auth.username or auth.user_id is required for password auth`,
        );
      break;
    case 'v3applicationcredential':
    case 'applicationcredential':
      config = {
        type: 'v3applicationcredential',
        authUrl: need('auth_url', 'for application credentials'),
        applicationCredentialSecret: need('application_credential_secret', 'for application credentials'),
        applicationCredentialId: a('application_credential_id'),
        applicationCredentialName: a('application_credential_name'),
        username: a('username'),
        userId: a('user_id'),
        userDomainName: a('user_domain_name'),
        userDomainId: a('user_domain_id'),
      };
      if (
        !config.applicationCredentialId &&
        !(config.applicationCredentialName && (config.username || config.userId))
      ) {
        throw new OpenStackConfigError(
          'CLOUD_INVALID',
          `${where}: auth.application_credential_id (or a credential name with auth.username/user_id) is required`,
        );
      }
      break;
    case 'token':
    case 'v3token':
      config = {
        type: 'token',
        authUrl: need('auth_url', 'for token auth'),
        token: need('token', 'for token auth'),
        projectName: a('project_name'),
        projectId: a('project_id'),
        projectDomainName: a('project_domain_name'),
        projectDomainId: a('project_domain_id'),
      };
      break;
    case 'none':
    case 'noauth':
      config = { type: 'none' };
      break;
    default:
      throw new OpenStackConfigError(
        'CLOUD_INVALID',
        `${where}: auth_type "${authType}" is not supported (password, v3applicationcredential, token, none)`,
      );
  }
  const iface = str(raw.interface ?? raw.endpoint_type, 'interface') ?? 'public';
  if (!['public', 'internal', 'admin'].includes(iface.replace(/URL$/, '')))
    throw new OpenStackConfigError('CLOUD_INVALID', `${where}: interface "${iface}" must be public, internal or admin`);
  const endpointOverrides: Partial<Record<ServiceType, string>> = {};
  for (const [service, key] of Object.entries(serviceKeys) as [ServiceType, string][]) {
    const url = str(raw[`${key}_endpoint_override`], `${key}_endpoint_override`);
    if (url === undefined) continue;
    if (!URL.canParse(url))
      throw new OpenStackConfigError('CLOUD_INVALID', `${where}: ${key}_endpoint_override "${url}" is not a URL`);
    endpointOverrides[service] = url;
  }
  const cacert = str(raw.cacert, 'cacert');
  let ca: string | undefined;
  if (cacert) {
    try {
      ca = readFileSync(resolve(cwd, cacert), 'utf8');
    } catch (err) {
      throw new OpenStackConfigError('CLOUD_INVALID', `${where}: cacert ${cacert}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
  }
  return {
    name,
    source,
    auth: config,
    regionName: str(raw.region_name, 'region_name'),
    interface: iface.replace(/URL$/, '') as EndpointInterface,
    endpointOverrides,
    ca,
    insecure: raw.verify === false || raw.insecure === true || raw.insecure === 'true',
    // `load_balancer_project_id` is Raven's: openstacksdk moves a cloud's `project_id` into `auth`, and the `none`
    // plugin then rejects it ("FixedEndpointPlugin … unexpected keyword argument 'project_id'"), while it leaves a key
    // it does not know alone. `project_id` is still read, for clouds.yaml files only Raven reads.
    projectId:
      str(raw.load_balancer_project_id, 'load_balancer_project_id') ??
      str(raw.project_id, 'project_id') ??
      a('project_id'),
  };
}
