import type { KubeObject } from '../../../../src/kube/api/index.ts';
import type { Authorizer, ServiceAccountTokens } from '../auth/index.ts';
import type { ResourceDef, ResourceRegistry } from '../resources/index.ts';
import { conversions, storageKeyOf } from '../resources/index.ts';
import type { KindHooks } from '../semantics/index.ts';
import type { MvccStore } from '../store/index.ts';
import type { WatchHub } from '../watch/index.ts';

/** Everything the verb handlers share: one per server. */
export interface ApiContext {
  store: MvccStore;
  registry: ResourceRegistry;
  hub: WatchHub;
  /** Extra behaviour per kind, keyed by table (`group/resource`). */
  hooks: Map<string, KindHooks>;
  /** Wall clock as an RFC 3339 timestamp with second precision, like the real server's `metav1.Time`. */
  now: () => string;
  /** Scheduled pods wait out their grace period after DELETE until deleted again with grace 0 (as a kubelet does). */
  podGracefulDeletion: boolean;
  /** How callers are authorized (RBAC or everything allowed), and the ServiceAccount token minter. */
  auth: { authorizer: Authorizer; tokens: ServiceAccountTokens };
  /** Default and cap for watch `timeoutSeconds`, as the real server's `--min-request-timeout` (randomised ×1–2). */
  watchTimeoutSeconds: number;
}

/** The resolved target of one resource request. */
export interface Target {
  def: ResourceDef;
  table: string;
  /** The apiVersion objects are presented in (the version in the URL). */
  apiVersion: string;
  namespace: string | undefined;
}

export function targetOf(def: ResourceDef, version: string, namespace: string | undefined): Target {
  return {
    def,
    table: storageKeyOf(def),
    apiVersion: def.group ? `${def.group}/${version}` : version,
    namespace: def.namespaced ? namespace : undefined,
  };
}

/** Seconds-precision RFC 3339 UTC timestamp, like the real server's `metav1.Time`. */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The current time as {@link rfc3339}, formatted once per second (every write asks for it). */
export function wallClockRfc3339(): () => string {
  let second = -1;
  let text = '';
  return () => {
    const now = Math.floor(Date.now() / 1000);
    if (now !== second) {
      second = now;
      text = rfc3339(new Date(now * 1000));
    }
    return text;
  };
}

const nameAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** `generateName` + 5 random characters from the alphabet the real server uses (no vowels, no ambiguous digits). */
export function generatedName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += nameAlphabet[Math.floor(Math.random() * nameAlphabet.length)];
  return prefix + suffix;
}

/** The object as a client of `apiVersion` sees it (events.k8s.io Events, custom resources in several versions). */
export function present(obj: KubeObject, apiVersion: string): KubeObject {
  if (obj.apiVersion === apiVersion) return obj;
  const convert = conversions.get(`${obj.apiVersion ?? ''}|${obj.kind ?? ''}|${apiVersion}`);
  return convert ? convert(obj) : { ...obj, apiVersion };
}
