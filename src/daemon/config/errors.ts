import { RavenError } from '../../core/index.ts';

/**
 * Raven's configuration is invalid. `problems` holds every problem found (not just the first), each naming where the
 * bad value came from: `raven.yaml: subnets.namespace.cidr: …`, `RAVEN_CLUSTER_ID: …`, `--workers-pods: …`.
 */
export class ConfigError extends RavenError {
  readonly problems: readonly string[];

  constructor(problems: readonly string[], options?: { cause?: unknown }) {
    const message =
      problems.length === 1
        ? problems[0]!
        : `${problems.length} configuration problems:\n  - ${problems.join('\n  - ')}`;
    super('CONFIG_INVALID', message, options);
    this.problems = Object.freeze([...problems]);
  }
}
