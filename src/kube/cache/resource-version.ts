/**
 * True when resourceVersion `rv` is older than `than`. Clients must treat resourceVersions as opaque, so only a pair
 * of decimal integers (etcd's revisions, the embedded server's counter) is compared; anything else is never "older".
 * The reflector asks only to notice a server that went back in time, and answers with a relist, which is always
 * safe: a wrong answer costs one list, never correctness.
 */
export function isOlderResourceVersion(rv: string, than: string): boolean {
  if (!/^\d+$/.test(rv) || !/^\d+$/.test(than)) return false;
  return BigInt(rv) < BigInt(than);
}
