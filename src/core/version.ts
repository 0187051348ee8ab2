import { readFileSync } from 'node:fs';

function packageVersion(): string {
  try {
    return (
      (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string })
        .version ?? '0.0.0'
    );
  } catch {
    return '0.0.0';
  }
}

/** Raven's version, from package.json. */
export const ravenVersion = packageVersion();

/** `raven/<version>`: the User-Agent of every client Raven sends requests with. */
export const ravenUserAgent = `raven/${ravenVersion}`;
