/**
 * One string field of the configuration on stdin, read leniently (undefined when stdin is not JSON or the field is
 * not a non-empty string). Before the configuration is validated, the entry needs `daemonSocket` and an error needs
 * `cniVersion`; this module imports nothing, so the forwarding path stays light.
 */
export function stdinField(stdin: string, key: 'cniVersion' | 'daemonSocket'): string | undefined {
  try {
    const value = (JSON.parse(stdin) as Record<string, unknown> | null)?.[key];
    return typeof value === 'string' && value !== '' ? value : undefined;
  } catch {
    return undefined;
  }
}
