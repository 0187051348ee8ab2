/**
 * @raven/apiserver: the embedded Kubernetes-compatible API server, as a `fetch(Request) → Response` app (@raven/dev
 * binds it). Part of the test wing, not the product.
 * Imports only core and kube/api, so everything above it talks to it over a real connection.
 */
export {
  createApiServer,
  defaultApiServerOptions,
  type ApiServer,
  type ApiServerOptions,
  type ApiServerState,
} from './app.ts';
export { defaultNamespaces } from './bootstrap.ts';
export { parseTokenFile, type UserInfo } from './auth/index.ts';
export { PROTOBUF, encodeObject, decodeObject, encodeWatchFrame, decodeWatchFrames } from './protobuf/index.ts';
