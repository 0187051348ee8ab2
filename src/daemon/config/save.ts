import { stringify } from 'yaml';
import type { RavenConfig } from './schema.ts';

/**
 * `config` as a config file that loads back to the same settings (`raven dev` writes its effective settings for
 * `raven plan` and `raven gc`). Loading fills each single-value alternative's list twin (`cidr` → `cidrs`); the file
 * keeps only the list, since setting both is an error. `header` goes first, as `#` comments.
 */
export function configFileText(config: RavenConfig, header: readonly string[] = []): string {
  const copy = structuredClone(config) as unknown as Record<string, Record<string, Record<string, unknown>>>;
  const groups = [copy.subnets?.shared, copy.subnets?.namespace, copy.serviceSubnet as Record<string, unknown>];
  for (const group of groups) {
    if (group === undefined) continue;
    for (const [one, many] of [
      ['cidr', 'cidrs'],
      ['subnetId', 'subnetIds'],
      ['subnetPoolId', 'subnetPoolIds'],
    ] as const)
      if (group[many] !== undefined) delete group[one];
  }
  return `${header.map((line) => `# ${line}\n`).join('')}${stringify(copy)}`;
}
