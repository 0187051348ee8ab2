import { readFile, stat } from 'node:fs/promises';
import type { Clock } from '../../../core/index.ts';

/**
 * How long a file's contents are trusted without re-reading, even when its mtime has not moved (client-go's period).
 */
export const FILE_MAX_AGE_MS = 60_000;

/**
 * A file that rotates under us (a projected service-account token, a `tokenFile`, a client certificate): each call
 * stats it and re-reads it when its mtime, size or inode changed, or when the last read is a minute old (mtimes can be
 * coarse). Calls never overlap a read. When a re-read fails after a good one, the last contents are kept, as
 * client-go's
 * `cachingTokenSource` does: a rotation in progress must not fail requests.
 *
 * @param fail turns a first-read failure into the error to throw (with file and field).
 */
export function watchedFile(path: string, clock: Clock, fail: (err: unknown) => Error): () => Promise<string> {
  let cached: { text: string; stamp: string; readAt: number } | undefined;
  let inflight: Promise<string> | undefined;

  const refresh = async (): Promise<string> => {
    try {
      const st = await stat(path);
      const stamp = `${st.mtimeMs}/${st.size}/${st.ino}`;
      if (cached && cached.stamp === stamp && clock.now() - cached.readAt < FILE_MAX_AGE_MS) return cached.text;
      const text = await readFile(path, 'utf8');
      cached = { text, stamp, readAt: clock.now() };
      return text;
    } catch (err) {
      if (cached) return cached.text;
      throw fail(err);
    }
  };

  return () => {
    inflight ??= refresh().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
}
