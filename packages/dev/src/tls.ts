import { isIP } from 'node:net';
import { generate } from 'selfsigned';

export interface TlsMaterial {
  cert: string;
  key: string;
}

/**
 * A self-signed serving certificate for the embedded API server (EC P-256, one year). kubectl (client-go) never
 * sends a bearer token over plain HTTP, so the server serves HTTPS by default and puts this certificate in the
 * kubeconfig as the CA. Valid for localhost, 127.0.0.1, ::1 and the bind host.
 */
export async function selfSignedCertificate(host: string): Promise<TlsMaterial> {
  const names = new Set(['localhost', '127.0.0.1', '::1', host]);
  const altNames = [...names].map((name) =>
    isIP(name) ? { type: 7 as const, ip: name } : { type: 2 as const, value: name },
  );
  const now = new Date();
  const pems = await generate([{ name: 'commonName', value: 'raven-apiserver' }], {
    keyType: 'ec',
    curve: 'P-256',
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + 365 * 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}
