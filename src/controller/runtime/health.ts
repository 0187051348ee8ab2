import { RavenError, errorMessage } from '../../core/index.ts';

/** `healthz` (alive: restart me if this fails) or `readyz` (ready: send me work / count me in). */
export type HealthKind = 'healthz' | 'readyz';

/** What a passing check may say about the state it found (`?verbose` shows `[+]leader-election ok (standby)`). */
export interface HealthNote {
  readonly note: string;
}

/** Nothing (or a {@link HealthNote}) passes; a string says what is wrong. */
export type HealthCheckResult = void | string | undefined | HealthNote;

/**
 * A check passes when it returns nothing or a note; it fails when it throws or returns a string saying what is wrong.
 */
export type HealthCheck = () => HealthCheckResult | Promise<HealthCheckResult>;

export interface HealthReport {
  ok: boolean;
  /** Each check's name and, when it failed, why; when it passed with a note, the note. */
  checks: { name: string; ok: boolean; reason?: string; note?: string }[];
}

export interface HealthRunOptions {
  /** Checks to skip (Kubernetes' `?exclude=`). */
  exclude?: readonly string[];
  /** Only this check (Kubernetes' `/healthz/<name>`). */
  only?: string;
}

const checkName = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/**
 * Named health checks, run the way Kubernetes components serve `/healthz` and `/readyz`: every check runs (bounded by
 * a timeout) and the report is OK only when all pass. The daemon serves reports over HTTP in kube-apiserver's format.
 */
export class HealthChecks {
  readonly #checks: Record<HealthKind, Map<string, HealthCheck>> = { healthz: new Map(), readyz: new Map() };
  readonly #timeoutMs: number;

  constructor(options: { timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? 5_000;
  }

  add(kind: HealthKind, name: string, check: HealthCheck): void {
    if (!checkName.test(name))
      throw new RavenError(
        'HEALTH_CHECK_INVALID',
        `health check name "${name}" must be lower-case letters, digits and '-'`,
      );
    if (this.#checks[kind].has(name))
      throw new RavenError('HEALTH_CHECK_INVALID', `${kind} check "${name}" is already registered`);
    this.#checks[kind].set(name, check);
  }

  names(kind: HealthKind): string[] {
    return [...this.#checks[kind].keys()];
  }

  /** Runs the checks; an unknown `only` is reported as a failed check of that name. */
  async run(kind: HealthKind, options: HealthRunOptions = {}): Promise<HealthReport> {
    const exclude = new Set(options.exclude ?? []);
    let entries = [...this.#checks[kind]].filter(([name]) => !exclude.has(name));
    if (options.only !== undefined) {
      const check = this.#checks[kind].get(options.only);
      if (!check) return { ok: false, checks: [{ name: options.only, ok: false, reason: 'no such check' }] };
      entries = [[options.only, check]];
    }
    const checks = await Promise.all(
      entries.map(async ([name, check]) => {
        const result = await this.#runOne(check);
        if (typeof result === 'string') return { name, ok: false, reason: result };
        return result ? { name, ok: true, note: result.note } : { name, ok: true };
      }),
    );
    return { ok: checks.every((c) => c.ok), checks };
  }

  async #runOne(check: HealthCheck): Promise<string | HealthNote | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`timed out after ${this.#timeoutMs} ms`), this.#timeoutMs);
    });
    try {
      const result = await Promise.race([Promise.resolve().then(check), timeout]);
      if (typeof result === 'string') return result === '' ? undefined : result;
      return result && typeof result.note === 'string' && result.note !== '' ? { note: result.note } : undefined;
    } catch (err) {
      return errorMessage(err) || 'failed';
    } finally {
      clearTimeout(timer);
    }
  }
}
