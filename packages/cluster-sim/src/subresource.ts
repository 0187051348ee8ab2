/**
 * POST and PUT to a subresource (`pods/<name>/binding`, `namespaces/<name>/finalize`): the two writes the simulator
 * needs that {@link KubeClient} has no method for yet (it creates only on collections and PUTs only `/status`).
 *
 * A stopgap: it sends through kube/client's own Transport (same credentials, TLS, rate limit and retry rules), built
 * from the connection the caller's KubeClient was built from. Once KubeClient can write subresources, this file goes
 * and the simulator calls the client.
 */
import { TokenBucket, ravenUserAgent, type Clock, type Logger } from '../../../src/core/index.ts';
import { resourcePath, type ClusterConnection, type ResourceRef } from '../../../src/kube/client/index.ts';
// Not from the folder's index (which does not export it): the stopgap described above.
import { Transport } from '../../../src/kube/client/transport.ts';

/** What the simulator sends to subresources. */
export interface SubresourceWriter {
  /** `POST <object>/<subresource>` (a Binding to `pods/<name>/binding`). */
  create(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    subresource: string,
    body: object,
    signal?: AbortSignal,
  ): Promise<unknown>;
  /** `PUT <object>/<subresource>` (a Namespace to `namespaces/<name>/finalize`). */
  replace(
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    subresource: string,
    body: object,
    signal?: AbortSignal,
  ): Promise<unknown>;
  close(): Promise<void>;
}

export interface SubresourceWriterOptions {
  connection: ClusterConnection;
  qps?: number;
  burst?: number;
  clock?: Clock;
  logger?: Logger;
}

/** A {@link SubresourceWriter} over its own Transport on `connection`. */
export function subresourceWriter(options: SubresourceWriterOptions): SubresourceWriter {
  const transport = new Transport({
    connection: options.connection,
    bucket: new TokenBucket({
      qps: options.qps ?? 50,
      burst: options.burst ?? 100,
      ...(options.clock ? { clock: options.clock } : {}),
    }),
    userAgent: `${ravenUserAgent} (cluster-sim)`,
    clock: options.clock,
    logger: options.logger,
  });
  const send = (
    method: string,
    ref: ResourceRef,
    name: string,
    namespace: string | undefined,
    subresource: string,
    body: object,
    signal?: AbortSignal,
  ): Promise<unknown> =>
    transport.json({
      method,
      path: resourcePath(ref, { namespace, name, subresource }),
      body: JSON.stringify(body),
      contentType: 'application/json',
      signal,
    });
  return {
    create: (...args) => send('POST', ...args),
    replace: (...args) => send('PUT', ...args),
    close: () => transport.close(),
  };
}
