import type { OpenStackSession } from '../session.ts';
import { FloatingIpsApi } from './floating-ips.ts';
import { NetworksApi } from './networks.ts';
import { PortsApi } from './ports.ts';
import { QuotasApi } from './quotas.ts';
import { untilAborted, type CallOptions } from './query.ts';
import { badResponse, NeutronTransport } from './resource.ts';
import { RoutersApi } from './routers.ts';
import { SecurityGroupRulesApi, SecurityGroupsApi } from './security-groups.ts';
import { SubnetPoolsApi, SubnetsApi } from './subnets.ts';
import { TagsApi } from './tags.ts';
import { TrunksApi } from './trunks.ts';

/** One API extension, as `GET /v2.0/extensions` lists it. */
export interface NeutronExtension {
  alias: string;
  name: string;
  description: string;
  updated?: string;
  links?: unknown[];
}

/**
 * A typed Neutron v2.0 client on an {@link OpenStackSession}: one sub-API per resource family, plus tags, quotas and
 * the server's extensions. It never sleeps or polls; every method takes `{ signal }`.
 *
 * @example
 * const neutron = new NeutronClient(session);
 * const net = await neutron.networks.create({ name: `raven/${cluster}/${ns}` }, { signal });
 * await neutron.tags.replace('networks', net.id, [`raven-ns=${uid}`], { signal });
 * const filter = { network_id: net.id, 'tags-any': ['raven'] };
 * const ports = await neutron.ports.list(filter, { fields: ['id', 'fixed_ips'], signal });
 */
export class NeutronClient {
  readonly networks: NetworksApi;
  readonly subnets: SubnetsApi;
  readonly subnetPools: SubnetPoolsApi;
  readonly routers: RoutersApi;
  readonly ports: PortsApi;
  readonly floatingIps: FloatingIpsApi;
  readonly securityGroups: SecurityGroupsApi;
  readonly securityGroupRules: SecurityGroupRulesApi;
  readonly trunks: TrunksApi;
  readonly tags: TagsApi;
  readonly quotas: QuotasApi;
  readonly #transport: NeutronTransport;
  #extensions: Promise<NeutronExtension[]> | undefined;

  constructor(session: OpenStackSession) {
    const transport = new NeutronTransport(session);
    this.#transport = transport;
    this.networks = new NetworksApi(transport);
    this.subnets = new SubnetsApi(transport);
    this.subnetPools = new SubnetPoolsApi(transport);
    this.routers = new RoutersApi(transport);
    this.tags = new TagsApi(transport);
    this.ports = new PortsApi(transport, this.tags, (alias, options) => this.supports(alias, options));
    this.floatingIps = new FloatingIpsApi(transport);
    this.securityGroups = new SecurityGroupsApi(transport);
    this.securityGroupRules = new SecurityGroupRulesApi(transport);
    this.trunks = new TrunksApi(transport);
    this.quotas = new QuotasApi(transport);
  }

  /**
   * The server's API extensions, fetched once and cached for the client's life (a failed fetch is retried on the next
   * call). The fetch is shared, so one caller's abort only stops that caller's wait.
   */
  extensions(options: CallOptions = {}): Promise<NeutronExtension[]> {
    if (!this.#extensions) {
      const fetching = this.#fetchExtensions(options.timeoutMs);
      this.#extensions = fetching;
      fetching.catch(() => {
        if (this.#extensions === fetching) this.#extensions = undefined;
      });
    }
    return untilAborted(this.#extensions, options.signal);
  }

  /** Whether the server has the extension `alias` (`standard-attr-tag`, `tag-ports-during-bulk-creation` …). */
  async supports(alias: string, options: CallOptions = {}): Promise<boolean> {
    return (await this.extensions(options)).some((e) => e.alias === alias);
  }

  async #fetchExtensions(timeoutMs: number | undefined): Promise<NeutronExtension[]> {
    const res = await this.#transport.send<{ extensions?: NeutronExtension[] }>('GET', '/extensions', { timeoutMs });
    const list = res.body?.extensions;
    if (!Array.isArray(list)) throw badResponse(res, 'GET', '/extensions', 'no "extensions" list in the answer');
    return list;
  }
}
