import { z } from 'zod';

/**
 * The CNI wire format (spec 1.0.0, with 0.4.0's differences where a result is read or written): what a runtime hands
 * a plugin and what the plugin prints. Shared by the plugin (`src/cni/`) and by anything that plays the runtime.
 */

/** The versions `raven-cni` speaks. 0.4.0 is 1.0.0 with `version` on each IP; older ones lack CHECK. */
export const SUPPORTED_VERSIONS = ['0.4.0', '1.0.0'] as const;
export type CniVersion = (typeof SUPPORTED_VERSIONS)[number];

export const CNI_COMMANDS = ['ADD', 'DEL', 'CHECK', 'VERSION'] as const;
export type CniCommand = (typeof CNI_COMMANDS)[number];

/** The spec's well-known error codes (1–99 reserved) and `raven-cni`'s own (100 and above). */
export const CniErrorCode = {
  INCOMPATIBLE_VERSION: 1,
  UNSUPPORTED_FIELD: 2,
  UNKNOWN_CONTAINER: 3,
  INVALID_ENVIRONMENT: 4,
  IO_FAILURE: 5,
  DECODING_FAILURE: 6,
  INVALID_CONFIG: 7,
  TRY_AGAIN_LATER: 11,
  /** The VIF annotation does not match what Neutron says: a forged or stale annotation, or a port of another pod. */
  PORT_VERIFICATION_FAILED: 100,
  /** The port's `binding:vif_type` is one `raven-cni` cannot plug. */
  UNSUPPORTED_VIF_TYPE: 101,
  /** Kubernetes or Neutron could not be read. */
  UPSTREAM_UNAVAILABLE: 102,
  /** CHECK found the container's networking differs from what ADD made. */
  CHECK_FAILED: 103,
} as const;
export type CniErrorCodeValue = (typeof CniErrorCode)[keyof typeof CniErrorCode];

const mac = z.string().regex(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i, 'a MAC address');

export const cniInterfaceSchema = z.object({
  name: z.string().min(1),
  mac: mac.optional(),
  sandbox: z.string().optional(),
});

export const cniIpSchema = z.object({
  /** CIDR form: the address and the prefix of its subnet. */
  address: z.string().regex(/\/\d{1,3}$/, 'an address in CIDR form'),
  gateway: z.string().optional(),
  interface: z.number().int().nonnegative().optional(),
  /** 0.4.0 only. */
  version: z.enum(['4', '6']).optional(),
});

export const cniRouteSchema = z.object({ dst: z.string().min(1), gw: z.string().optional() });

export const cniDnsSchema = z.object({
  nameservers: z.array(z.string()).optional(),
  domain: z.string().optional(),
  search: z.array(z.string()).optional(),
  options: z.array(z.string()).optional(),
});

/** An ADD result: also the `prevResult` a runtime passes to CHECK and DEL, and along a chain. */
export const cniResultSchema = z.object({
  cniVersion: z.string(),
  interfaces: z.array(cniInterfaceSchema).optional(),
  ips: z.array(cniIpSchema).optional(),
  routes: z.array(cniRouteSchema).optional(),
  dns: cniDnsSchema.optional(),
});
export type CniResult = z.infer<typeof cniResultSchema>;
export type CniInterface = z.infer<typeof cniInterfaceSchema>;
export type CniIp = z.infer<typeof cniIpSchema>;
export type CniRoute = z.infer<typeof cniRouteSchema>;

export const cniErrorSchema = z.object({
  cniVersion: z.string(),
  code: z.number().int().positive(),
  msg: z.string().min(1),
  details: z.string().optional(),
});
export type CniErrorBody = z.infer<typeof cniErrorSchema>;

export const cniVersionResultSchema = z.object({
  cniVersion: z.string(),
  supportedVersions: z.array(z.string()).min(1),
});
export type CniVersionResult = z.infer<typeof cniVersionResultSchema>;

/** The keys every network configuration has; a plugin's own keys come beside them. */
export const netConfBaseSchema = z.object({
  cniVersion: z.string().min(1),
  name: z.string().min(1),
  type: z.string().min(1),
  prevResult: z.unknown().optional(),
  runtimeConfig: z.record(z.string(), z.unknown()).optional(),
  args: z.record(z.string(), z.unknown()).optional(),
});
export type NetConfBase = z.infer<typeof netConfBaseSchema>;

/** A network configuration list (`.conflist`): the plugins a runtime runs in order for ADD, in reverse for DEL. */
export const netConfListSchema = z.object({
  cniVersion: z.string().min(1),
  name: z.string().min(1),
  disableCheck: z.boolean().optional(),
  plugins: z.array(z.looseObject({ type: z.string().min(1) })).min(1),
});
export type NetConfList = z.infer<typeof netConfListSchema>;
