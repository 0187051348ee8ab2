/**
 * How to reach and authenticate to one API server: what a kubeconfig context or the in-cluster service account
 * resolves to, and all the REST client needs. Credentials that change (rotated service-account tokens, exec plugins
 * with an expiry, token files) are asked for per request through `credentials()`, never copied.
 */
export interface ClusterConnection {
  /** `https://host:port` (a path prefix is allowed, as in kubeconfig). */
  server: string;
  /** PEM bundle of CAs to trust; absent = the system's. */
  ca?: string;
  insecureSkipTlsVerify?: boolean;
  /** SNI / certificate name to check instead of the server's host. */
  tlsServerName?: string;
  /** `http(s)://` proxy to reach the server through (kubeconfig `proxy-url`). */
  proxyUrl?: string;
  /** Per-request credentials: a bearer token, basic auth, or a client certificate (or none). */
  credentials?: (signal?: AbortSignal) => Promise<Credentials>;
  /** Where this came from, for error messages (`kubeconfig /root/.kube/config, context "dev"`, `in-cluster`). */
  source: string;
  /** The namespace the context names (kubectl's default namespace), if any. */
  namespace?: string;
}

export type Credentials =
  | { kind: 'none' }
  | { kind: 'bearer'; token: string }
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'client-certificate'; cert: string; key: string };
