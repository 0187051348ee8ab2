import { errorMessage, realClock, type Clock } from '../core/index.ts';
import type { NeutronClient, RequestObserver, RequestSample } from '../openstack/index.ts';

export interface OpenStackReadinessOptions {
  /** Probed (one cheap list) when no call has answered for `probeAfterMs`. */
  neutron: NeutronClient;
  /** Every call failing for this long fails the check, probe or not. */
  unreadyAfterMs: number;
  /** Default 10 s. */
  probeAfterMs?: number;
  clock?: Clock;
}

/**
 * A call failed when nothing answered (unreachable, timed out; our own aborts do not count), or the answer says the
 * cloud cannot serve Raven: a 5xx, or 401/403 (credentials refused). Any other answer, a 404 or a 409 included, is the
 * cloud working.
 */
function failed(s: RequestSample): boolean {
  return s.status === 0 || s.status >= 500 || s.status === 401 || s.status === 403;
}

/**
 * `/readyz`'s `openstack` check, fed by every call of the session ({@link observe}, for `session.observe`). It fails
 * until OpenStack has answered once, and then whenever every call has failed for `unreadyAfterMs` (a blip shorter than
 * that shows in the logs and the metrics, not as an unready pod). So that an idle Raven is judged too, the check probes
 * Neutron (the first page of one network id) when no call has answered for `probeAfterMs`, at most that often; the
 * probe is a call like any other. A busy Raven's own calls say whether the cloud answers, so probes add no load then.
 *
 * @example
 * const readiness = new OpenStackReadiness({ neutron, unreadyAfterMs: 30_000 });
 * manager.closeOnStop(session.observe(readiness.observe));
 * manager.addReadyzCheck('openstack', readiness.check);
 */
export class OpenStackReadiness {
  readonly #neutron: NeutronClient;
  readonly #unreadyAfterMs: number;
  readonly #probeAfterMs: number;
  readonly #clock: Clock;
  #lastAnswerAt: number | undefined;
  #lastProbeAt: number | undefined;
  #failingSince: number | undefined;
  #lastFailure = '';
  /** Why the last probe failed. */
  #probeProblem: string | undefined;
  #probing: Promise<void> | undefined;

  constructor(options: OpenStackReadinessOptions) {
    this.#neutron = options.neutron;
    this.#unreadyAfterMs = options.unreadyAfterMs;
    this.#probeAfterMs = options.probeAfterMs ?? 10_000;
    this.#clock = options.clock ?? realClock;
  }

  /** Takes every HTTP exchange of the session (`session.observe(readiness.observe)`). */
  readonly observe: RequestObserver = (s) => {
    if (s.failure === 'aborted') return;
    const now = this.#clock.now();
    if (failed(s)) {
      this.#failingSince ??= now;
      this.#lastFailure = `${s.service} ${s.method} ${s.operation}: ${s.status === 0 ? s.failure : s.status}`;
      return;
    }
    this.#lastAnswerAt = now;
    this.#failingSince = undefined;
  };

  /** The readiness check: undefined when ready, else what is wrong. */
  readonly check = async (): Promise<string | undefined> => {
    const now = this.#clock.now();
    const stale = (at: number | undefined): boolean => at === undefined || now - at >= this.#probeAfterMs;
    if (stale(this.#lastAnswerAt) && stale(this.#lastProbeAt)) await (this.#probing ??= this.#probe());
    if (this.#lastAnswerAt === undefined)
      return `OpenStack has not answered yet${this.#probeProblem ? ` (${this.#probeProblem})` : ''}`;
    const since = this.#failingSince;
    const failingFor = since === undefined ? 0 : this.#clock.now() - since;
    if (since === undefined || failingFor < this.#unreadyAfterMs) return undefined;
    return `every OpenStack call has failed for ${(failingFor / 1000).toFixed(1)} s (last: ${this.#lastFailure})`;
  };

  async #probe(): Promise<void> {
    this.#lastProbeAt = this.#clock.now();
    this.#probeProblem = undefined;
    try {
      // The first page only: `list` would walk every page.
      await this.#neutron.networks.pages({}, { fields: ['id'], limit: 1, signal: AbortSignal.timeout(4_000) }).next();
    } catch (err) {
      this.#probeProblem = `Neutron: ${errorMessage(err)}`;
    } finally {
      this.#probing = undefined;
    }
  }
}
