import { z } from 'zod';
import { failureStatus, type StatusReason } from '../../../src/kube/api/index.ts';
import { apiErrors } from './http/errors.ts';
import { respond } from './http/respond.ts';
import type { MvccStore } from './store/index.ts';
import type { WatchHub } from './watch/index.ts';

/**
 * The test-only fault API (`--enable-fault-api`, never on by default), under `/_raven/faults/`, for `system:masters`
 * only (the admin token; any other user gets 403, in either authorization mode):
 * - `POST compact`: forget all history now, so older watches and paged lists get 410;
 * - `POST drop-watches` `{"mode":"abort"|"clean"}`: end every open watch (cut, or cleanly);
 * - `POST rules` `{"path","method"?,"count","status"?,"delayMs"?,"retryAfterSeconds"?}`: delay and/or fail the next
 *   `count` requests whose path starts with `path`; `GET rules` lists them, `DELETE rules` clears them.
 */
export const faultRuleSchema = z.object({
  path: z.string().startsWith('/'),
  method: z.string().toUpperCase().optional(),
  count: z.number().int().positive(),
  status: z.number().int().min(400).max(599).optional(),
  delayMs: z.number().int().min(0).max(600_000).optional(),
  retryAfterSeconds: z.number().int().min(0).optional(),
  message: z.string().optional(),
});

export type FaultRule = z.infer<typeof faultRuleSchema> & { id: number };

const reasons: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Expired',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export class FaultInjector {
  readonly #rules: FaultRule[] = [];
  #nextId = 1;
  readonly #store: MvccStore;
  readonly #hub: WatchHub;

  constructor(store: MvccStore, hub: WatchHub) {
    this.#store = store;
    this.#hub = hub;
  }

  /** Handles a request to the fault API itself. */
  async handle(method: string, path: string, body: unknown): Promise<Response> {
    const action = path.slice('/_raven/faults/'.length);
    if (method === 'POST' && action === 'compact') {
      this.#store.compact();
      return respond(200, { compactedResourceVersion: String(this.#store.compactedRv) });
    }
    if (method === 'POST' && action === 'drop-watches') {
      const mode = (body as { mode?: string } | undefined)?.mode === 'clean' ? 'clean' : 'abort';
      return respond(200, { dropped: this.#hub.dropAll(mode), mode });
    }
    if (action === 'rules') {
      if (method === 'GET') return respond(200, { rules: this.#rules });
      if (method === 'DELETE') {
        this.#rules.length = 0;
        return respond(200, { rules: [] });
      }
      if (method === 'POST') {
        const parsed = faultRuleSchema.safeParse(body);
        if (!parsed.success) throw apiErrors.badRequest(`invalid fault rule: ${z.prettifyError(parsed.error)}`);
        const rule = { ...parsed.data, id: this.#nextId++ };
        this.#rules.push(rule);
        return respond(201, rule);
      }
    }
    return Promise.reject(apiErrors.pathNotFound());
  }

  /** Applies the first rule matching a request: waits `delayMs`, then answers with `status` if it has one. */
  async intercept(method: string, path: string): Promise<Response | undefined> {
    const index = this.#rules.findIndex((r) => path.startsWith(r.path) && (!r.method || r.method === method));
    if (index < 0) return undefined;
    const rule = this.#rules[index]!;
    if (--rule.count === 0) this.#rules.splice(index, 1);
    if (rule.delayMs) await new Promise((resolve) => setTimeout(resolve, rule.delayMs));
    if (rule.status === undefined) return undefined;
    const status = failureStatus(
      rule.status,
      reasons[rule.status] ?? '',
      rule.message ?? `injected fault (rule ${rule.id})`,
    );
    const headers: Record<string, string> = {};
    if (rule.retryAfterSeconds !== undefined) headers['retry-after'] = String(rule.retryAfterSeconds);
    return respond(rule.status, status, 'json', headers);
  }
}
