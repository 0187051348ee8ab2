import { z } from 'zod';
import type { Clock } from '../../../src/core/index.ts';
import { keystoneError, neutronError, octaviaError, type SimHttpError } from './http.ts';
import type { SeededRandom } from './random.ts';

/**
 * Fault injection and call counters, for tests and benchmarks (in-process, and over HTTP under `/_sim/`):
 * - rules delay and/or fail requests by method and path (a prefix, or a pattern where `{x}` is one path segment and
 *   `*` anything), `count` times or forever, always or with probability `rate`, with a fixed delay or a log-normal
 *   latency given by its p50 and p99; errors carry the service's own error body;
 * - load balancers can be held in their PENDING_* state (by id, or every new one);
 * - every request is counted under its route with ids replaced by `{id}`, and every error answer under its route and
 *   status (`DELETE /network/v2.0/ports/{id} 404`).
 * Randomness comes from the sim's seeded generator, so a run replays.
 */
export const faultRuleSchema = z.strictObject({
  method: z.string().toUpperCase().optional(),
  path: z.string().startsWith('/'),
  count: z.number().int().positive().optional(),
  status: z.number().int().min(400).max(599).optional(),
  errorType: z.string().optional(),
  message: z.string().optional(),
  delayMs: z.number().min(0).max(600_000).optional(),
  latency: z.strictObject({ p50Ms: z.number().min(0), p99Ms: z.number().min(0) }).optional(),
  rate: z.number().min(0).max(1).optional(),
});

export type FaultRuleSpec = z.input<typeof faultRuleSchema>;
export type FaultRule = z.output<typeof faultRuleSchema> & { id: number; hits: number };

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const hex32 = /^[0-9a-f]{32}$/i;

/** `POST /network/v2.0/ports/1b4…/tags/x` → `POST /network/v2.0/ports/{id}/tags/{tag}`. */
export function routeKey(method: string, path: string): string {
  const parts = path.split('/');
  const out = parts.map((p, i) => {
    if (parts[i - 1] === 'tags') return '{tag}';
    if (parts[i - 1] === 'quotas' && p !== '') return '{id}';
    return uuid.test(p) || hex32.test(p) ? '{id}' : p;
  });
  return `${method} ${out.join('/')}`;
}

function compile(path: string): (p: string) => boolean {
  if (!/[{*]/.test(path)) return (p) => p.startsWith(path);
  const re = new RegExp(
    `^${path
      .split(/(\{[^}]*\}|\*)/)
      .map((part) => (part === '*' ? '.*' : part.startsWith('{') ? '[^/]+' : part.replace(/[.+?^$()|[\]\\]/g, '\\$&')))
      .join('')}$`,
  );
  return (p) => re.test(p);
}

const neutronTypes: Record<number, string> = {
  400: 'HTTPBadRequest',
  401: 'HTTPUnauthorized',
  403: 'HTTPForbidden',
  404: 'HTTPNotFound',
  409: 'HTTPConflict',
  429: 'HTTPTooManyRequests',
  500: 'HTTPInternalServerError',
  502: 'HTTPBadGateway',
  503: 'HTTPServiceUnavailable',
  504: 'HTTPGatewayTimeout',
};

export class SimFaults {
  readonly #random: SeededRandom;
  readonly #clock: Clock;
  #rules: (FaultRule & { match: (p: string) => boolean })[] = [];
  #nextId = 1;
  readonly #counters = new Map<string, number>();
  readonly #errors = new Map<string, number>();
  readonly #stuck = new Set<string>();
  #stuckNew = false;
  /** Called when a load balancer is released (the Octavia worker may finish it now). */
  onRelease: (lbId: string) => void = () => undefined;

  constructor(random: SeededRandom, clock: Clock) {
    this.#random = random;
    this.#clock = clock;
  }

  /** Adds a rule (validated; throws a ZodError for a bad one). */
  addRule(spec: FaultRuleSpec): FaultRule {
    const parsed = faultRuleSchema.parse(spec);
    const rule = { ...parsed, id: this.#nextId++, hits: 0 };
    this.#rules.push({ ...rule, match: compile(rule.path) });
    return rule;
  }

  get rules(): FaultRule[] {
    return this.#rules.map(({ match: _m, ...rule }) => rule);
  }

  clearRules(): void {
    this.#rules = [];
  }

  /** Counts the request and applies the first matching rule: waits, then returns the error to send (if any). */
  async intercept(method: string, path: string): Promise<SimHttpError | undefined> {
    const key = routeKey(method, path);
    this.#counters.set(key, (this.#counters.get(key) ?? 0) + 1);
    const index = this.#rules.findIndex((r) => (!r.method || r.method === method) && r.match(path));
    if (index < 0) return undefined;
    const rule = this.#rules[index]!;
    if (rule.rate !== undefined && this.#random.next() >= rule.rate) return undefined;
    rule.hits++;
    if (rule.count !== undefined && --rule.count === 0) this.#rules.splice(index, 1);
    const delay = rule.delayMs ?? (rule.latency ? this.#sampleLatency(rule.latency.p50Ms, rule.latency.p99Ms) : 0);
    if (delay > 0) await this.#clock.sleep(delay);
    if (rule.status === undefined) return undefined;
    const message = rule.message ?? `injected fault (rule ${rule.id})`;
    if (path.startsWith('/load-balancer')) return octaviaError(rule.status, message);
    if (path.startsWith('/identity')) return keystoneError(rule.status, message);
    return neutronError(rule.status, rule.errorType ?? neutronTypes[rule.status] ?? 'HTTPError', message);
  }

  /** Log-normal with the given median and 99th percentile (z(0.99) = 2.326). */
  #sampleLatency(p50: number, p99: number): number {
    const sigma = p50 > 0 && p99 > p50 ? Math.log(p99 / p50) / 2.326 : 0;
    const u = Math.max(this.#random.next(), 1e-12);
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.#random.next());
    return p50 * Math.exp(sigma * z);
  }

  /** Calls per route since the last reset, e.g. `{"POST /network/v2.0/ports": 12}`. */
  counters(): Record<string, number> {
    return Object.fromEntries([...this.#counters].sort(([a], [b]) => (a < b ? -1 : 1)));
  }

  /** Counts an answer of 400 or more under its route and status. */
  noteAnswer(method: string, path: string, status: number): void {
    if (status < 400) return;
    const key = `${routeKey(method, path)} ${status}`;
    this.#errors.set(key, (this.#errors.get(key) ?? 0) + 1);
  }

  /** Error answers per route and status since the last reset, e.g. `{"DELETE /network/v2.0/ports/{id} 404": 2}`. */
  errors(): Record<string, number> {
    return Object.fromEntries([...this.#errors].sort(([a], [b]) => (a < b ? -1 : 1)));
  }

  resetCounters(): void {
    this.#errors.clear();
    this.#counters.clear();
  }

  /** Holds a load balancer (or, without an id, every one created from now on) in its PENDING_* state. */
  stick(lbId?: string): void {
    if (lbId === undefined) this.#stuckNew = true;
    else this.#stuck.add(lbId);
  }

  /** Releases one load balancer, or all of them and stops holding new ones. */
  unstick(lbId?: string): void {
    const released = lbId === undefined ? [...this.#stuck] : this.#stuck.has(lbId) ? [lbId] : [];
    if (lbId === undefined) this.#stuckNew = false;
    for (const id of released) {
      this.#stuck.delete(id);
      this.onRelease(id);
    }
  }

  isStuck(lbId: string): boolean {
    return this.#stuck.has(lbId);
  }

  /** Octavia tells about every new load balancer, so "stick all new ones" can apply. */
  noteNewLoadBalancer(lbId: string): void {
    if (this.#stuckNew) this.#stuck.add(lbId);
  }

  get stuck(): { loadBalancerIds: string[]; allNew: boolean } {
    return { loadBalancerIds: [...this.#stuck], allNew: this.#stuckNew };
  }

  /** Clears rules, counters and held load balancers. */
  reset(): void {
    this.clearRules();
    this.resetCounters();
    this.unstick();
  }
}
