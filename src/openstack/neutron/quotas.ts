import { seg, type CallOptions } from './query.ts';
import { badResponse, type NeutronTransport } from './resource.ts';

/** The resources Neutron counts against a project's quota (ML2 + router + trunk; -1 means unlimited). */
export type QuotaResource =
  | 'network'
  | 'subnet'
  | 'subnetpool'
  | 'port'
  | 'router'
  | 'floatingip'
  | 'rbac_policy'
  | 'security_group'
  | 'security_group_rule'
  | 'trunk';

/**
 * A project's limits by resource. Extensions may add resources, and with quotas switched off
 * (`DbQuotaDriverNull`) Neutron answers an empty set.
 */
export type QuotaSet = Partial<Record<QuotaResource, number>> & Record<string, number | undefined>;

export interface QuotaUsage {
  limit: number;
  used: number;
  reserved: number;
}

export type QuotaDetails = Partial<Record<QuotaResource, QuotaUsage>> & Record<string, QuotaUsage | undefined>;

/**
 * `/v2.0/quotas/<project>`: limits per project (admin for other projects). Going over a limit makes the create
 * fail with 409 `OverQuota` ("Quota exceeded for resources: ['port'].").
 */
export class QuotasApi {
  readonly #transport: NeutronTransport;

  constructor(transport: NeutronTransport) {
    this.#transport = transport;
  }

  /** The project's limits (its overrides, else the defaults). */
  async get(projectId: string, options: CallOptions = {}): Promise<QuotaSet> {
    return this.#quota<QuotaSet>('GET', `/quotas/${seg(projectId)}`, undefined, options);
  }

  /** Limit, usage and reservations per resource. */
  async details(projectId: string, options: CallOptions = {}): Promise<QuotaDetails> {
    return this.#quota<QuotaDetails>('GET', `/quotas/${seg(projectId)}/details`, undefined, options);
  }

  /** Overrides some limits; resolves with all of the project's limits. */
  async update(
    projectId: string,
    limits: Partial<Record<QuotaResource, number>> & Record<string, number>,
    options: CallOptions = {},
  ): Promise<QuotaSet> {
    return this.#quota<QuotaSet>('PUT', `/quotas/${seg(projectId)}`, { quota: limits }, options);
  }

  /** Drops the project's overrides: back to the defaults. */
  async reset(projectId: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.send('DELETE', `/quotas/${seg(projectId)}`, options);
  }

  async #quota<T>(method: 'GET' | 'PUT', path: string, body: unknown, options: CallOptions): Promise<T> {
    const res = await this.#transport.send<{ quota?: T }>(method, path, { body, ...options });
    const quota = res.body?.quota;
    if (!quota || typeof quota !== 'object') throw badResponse(res, method, path, 'no "quota" object in the answer');
    return quota;
  }
}
