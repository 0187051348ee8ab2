import { randomBytes } from 'node:crypto';
import { errorMessage, silentLogger, type Logger } from '../../../src/core/index.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import { PortAllocator, ServiceIpFamilies } from './allocators/index.ts';
import { wallClockRfc3339, type ApiContext } from './api/context.ts';
import { watchNamespaceTermination } from './api/delete.ts';
import { watchQuotaUsage } from './api/quota.ts';
import { handleResource } from './api/dispatch.ts';
import { apiGroupList, apiGroupOf, apiResourceList, apiVersions, serverVersion } from './api/discovery.ts';
import { FaultInjector } from './faults.ts';
import { createAccess, type UserInfo } from './auth/index.ts';
import { parseBody } from './http/body.ts';
import { ApiError, apiErrors } from './http/errors.ts';
import { errorFormat, negotiateOutput } from './http/negotiate.ts';
import { respond, respondStatus } from './http/respond.ts';
import { parseRequestInfo } from './http/request-info.ts';
import { bootstrap, ensureDefaultServiceAccount } from './bootstrap.ts';
import { ResourceRegistry, storageKeyOf } from './resources/index.ts';
import {
  crdHooks,
  deploymentHooks,
  namespaceHooks,
  podHooks,
  secretHooks,
  serviceHooks,
  type KindHooks,
} from './semantics/index.ts';
import { MvccStore, storedAs } from './store/index.ts';
import { WatchHub } from './watch/index.ts';

export interface ApiServerOptions {
  /** Bearer token clients must send; generated when absent. Its user is in `system:masters` (allowed everything). */
  token?: string;
  /** More bearer tokens and their users (kube-apiserver's `--token-auth-file`, parsed by `parseTokenFile`). */
  tokenUsers?: ReadonlyMap<string, UserInfo>;
  /** `AlwaysAllow` (the default: every authenticated request may do anything) or `RBAC`. */
  authorizationMode?: 'AlwaysAllow' | 'RBAC';
  /** Range(s) cluster IPs are allocated from (`--service-cluster-ip-range`): one, or `<v4>,<v6>` (either order) for dual-stack. */
  serviceCidr: string;
  /** Range node ports are allocated from (`--service-node-port-range`), `A-B`. */
  nodePortRange: string;
  /** Events kept for watches and paged lists; older → 410 Expired. */
  historyLimit: number;
  bookmarkIntervalMs: number;
  /** Unread bytes a watch may queue before it is closed as too slow. */
  maxWatchQueueBytes: number;
  /** Watches without `timeoutSeconds` end after this × (1–2), like `--min-request-timeout`. */
  watchTimeoutSeconds: number;
  /**
   * Scheduled pods get a deletionTimestamp and wait out their grace period until something playing the kubelet
   * deletes them with `gracePeriodSeconds=0` (off: every pod without finalizers goes at once).
   */
  podGracefulDeletion: boolean;
  /** Serves the test-only fault API under `/_raven/faults/`. Never on by default. */
  enableFaultApi: boolean;
  /** The address clients reach the server at (for `/api`'s serverAddressByClientCIDRs). */
  serverAddress?: string;
  logger?: Logger;
}

export const defaultApiServerOptions: ApiServerOptions = {
  serviceCidr: '10.96.0.0/12',
  nodePortRange: '30000-32767',
  historyLimit: 10_000,
  bookmarkIntervalMs: 60_000,
  maxWatchQueueBytes: 16 * 1024 * 1024,
  watchTimeoutSeconds: 1800,
  podGracefulDeletion: false,
  enableFaultApi: false,
};

/** A snapshot of the whole cluster state (`--data-dir`). */
export interface ApiServerState {
  resourceVersion: number;
  tables: Record<string, KubeObject[]>;
}

/**
 * The embedded Kubernetes-compatible API server as a `fetch(Request) → Response` function: tests call it
 * in-process, `daemon/` binds it to a port.
 *
 * @example
 * const server = createApiServer({ ...defaultApiServerOptions, token: 't' });
 * const headers = { authorization: 'Bearer t' };
 * const res = await server.fetch(new Request('http://x/api/v1/namespaces', { headers }));
 */
export interface ApiServer {
  fetch(request: Request): Promise<Response>;
  readonly token: string;
  readonly store: MvccStore;
  readonly hub: WatchHub;
  readonly registry: ResourceRegistry;
  /** The current state, for a snapshot. */
  dump(): ApiServerState;
  /** Stops timers and ends open watches. */
  close(): void;
}

export function createApiServer(options: ApiServerOptions, state?: ApiServerState): ApiServer {
  const logger = options.logger ?? silentLogger;
  const token = options.token ?? randomBytes(24).toString('base64url');
  // The allocators validate their ranges: made first, so bad options throw before any timer starts.
  const ips = new ServiceIpFamilies(options.serviceCidr);
  const nodePorts = new PortAllocator(options.nodePortRange);
  const store = new MvccStore({ historyLimit: options.historyLimit });
  const registry = new ResourceRegistry();
  const hub = new WatchHub(store, {
    bookmarkIntervalMs: options.bookmarkIntervalMs,
    maxQueuedBytes: options.maxWatchQueueBytes,
  });
  const hooks = new Map<string, KindHooks>();
  const access = createAccess({
    token,
    ...(options.tokenUsers ? { tokenUsers: options.tokenUsers } : {}),
    mode: options.authorizationMode ?? 'AlwaysAllow',
    store,
  });
  const ctx: ApiContext = {
    auth: access,
    store,
    registry,
    hub,
    hooks,
    now: wallClockRfc3339(),
    watchTimeoutSeconds: options.watchTimeoutSeconds,
    podGracefulDeletion: options.podGracefulDeletion,
  };
  hooks.set('/pods', podHooks);
  hooks.set('/services', serviceHooks(ips, nodePorts));
  hooks.set('/secrets', secretHooks);
  hooks.set('apps/deployments', deploymentHooks);
  hooks.set('/namespaces', {
    ...namespaceHooks,
    committed: (ns, old) => {
      if (!old) ensureDefaultServiceAccount(ctx, ns.metadata.name ?? '');
    },
  });
  hooks.set(
    'apiextensions.k8s.io/customresourcedefinitions',
    crdHooks(
      registry,
      (def) => {
        const table = storageKeyOf(def);
        for (const obj of store.list(table)) store.remove(table, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
        // Watchers get the DELETED events above, then their stream ends, as when the real server stops serving a CRD.
        hub.endTable(table);
      },
      ctx.now,
    ),
  );
  const stopTermination = watchNamespaceTermination(ctx);
  const stopQuotas = watchQuotaUsage(ctx);
  if (state) {
    store.load(state);
    restoreDerivedState(ctx, ips, nodePorts, logger);
  }
  bootstrap(ctx, ips);
  const faults = options.enableFaultApi ? new FaultInjector(store, hub) : undefined;
  const serverAddress = options.serverAddress ?? '127.0.0.1:6443';

  /** Whether a path is a custom resource's (whose errors, like its objects, have no protobuf form). */
  function servesCustom(path: string): boolean {
    const info = parseRequestInfo('GET', path, new URLSearchParams());
    return info !== undefined && registry.lookup(info.group, info.version, info.resource)?.custom === true;
  }

  async function route(request: Request, url: URL): Promise<Response> {
    const path = url.pathname;
    if (path === '/healthz' || path === '/livez' || path === '/readyz')
      return new Response('ok', { headers: { 'content-type': 'text/plain' } });
    const user = access.authenticate(request.headers.get('authorization'));
    if (!user) throw apiErrors.unauthorized();
    if (faults) {
      if (path.startsWith('/_raven/faults/')) {
        access.checkMaster(user, request.method, path, 'the fault API');
        return faults.handle(
          request.method,
          path,
          parseBody(await request.text(), request.headers.get('content-type')),
        );
      }
      const injected = await faults.intercept(request.method, path);
      if (injected) return injected;
    }
    const info = parseRequestInfo(request.method, path, url.searchParams);
    access.check(user, request.method, path, info);
    if (info) return handleResource(ctx, request, url, info, user);
    if (request.method !== 'GET' && request.method !== 'HEAD') throw apiErrors.methodNotAllowed();
    const trimmed = path.replace(/\/+$/, '');
    // /version is always JSON on the real server; discovery documents are built-in kinds with a protobuf form.
    if (trimmed === '/version') return respond(200, serverVersion);
    if (trimmed === '/openapi/v2')
      return new Response(new Uint8Array(0), { status: 200, headers: { 'content-type': 'application/octet-stream' } });
    const { format } = negotiateOutput(request.headers.get('accept'), { protobuf: true, table: false });
    if (trimmed === '/api') return respond(200, apiVersions(serverAddress), format);
    if (trimmed === '/apis') return respond(200, apiGroupList(registry), format);
    const parts = trimmed.split('/').slice(1);
    const discovered =
      parts[0] === 'api' && parts.length === 2
        ? apiResourceList(registry, '', parts[1]!)
        : parts[0] === 'apis' && parts.length === 2
          ? apiGroupOf(registry, parts[1]!)
          : parts[0] === 'apis' && parts.length === 3
            ? apiResourceList(registry, parts[1]!, parts[2]!)
            : undefined;
    if (discovered) return respond(200, discovered, format);
    throw apiErrors.pathNotFound();
  }

  return {
    token,
    store,
    hub,
    registry,
    async fetch(request: Request): Promise<Response> {
      const url = new URL(request.url);
      try {
        return await route(request, url);
      } catch (err) {
        if (err instanceof ApiError)
          return respondStatus(err.status, errorFormat(request.headers.get('accept'), !servesCustom(url.pathname)));
        logger.error({ err: errorMessage(err), method: request.method, path: url.pathname }, 'request failed');
        return respondStatus(apiErrors.internal(errorMessage(err)).status);
      }
    },
    dump: () => store.dump(),
    close() {
      stopTermination();
      stopQuotas();
      hub.close();
    },
  };
}

/** After loading a snapshot: serve its CRDs again and mark its cluster IPs and node ports as taken. */
function restoreDerivedState(ctx: ApiContext, ips: ServiceIpFamilies, nodePorts: PortAllocator, logger: Logger): void {
  const crds = ctx.hooks.get('apiextensions.k8s.io/customresourcedefinitions');
  for (const crd of ctx.store.list('apiextensions.k8s.io/customresourcedefinitions')) crds?.committed?.(crd, undefined);
  for (const svc of ctx.store.list('/services')) {
    const spec = storedAs('/services', svc).spec;
    try {
      for (const ip of spec?.clusterIPs ?? (spec?.clusterIP ? [spec.clusterIP] : [])) {
        const range = ip !== 'None' ? ips.forIp(ip) : undefined;
        if (!range) {
          if (ip !== 'None') throw new Error(`no service range of the family of ${ip}`);
        } else if (!range.has(ip)) range.allocate(ip);
      }
      for (const port of spec?.ports ?? [])
        if (port.nodePort && !nodePorts.has(port.nodePort)) nodePorts.allocate(port.nodePort);
    } catch (err) {
      // A snapshot taken with another service range: keep the Service as it is, its addresses just are not reserved.
      logger.warn(
        { service: `${svc.metadata.namespace ?? ''}/${svc.metadata.name ?? ''}`, err: errorMessage(err) },
        'snapshot service address outside the configured ranges',
      );
    }
  }
}
