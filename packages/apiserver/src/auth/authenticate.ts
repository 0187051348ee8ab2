import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

/** Who a request is from (authentication's answer). */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
}

/** The admin token's user: `system:masters` is allowed everything, as on a real cluster. */
export const adminUser: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

/**
 * kube-apiserver's `--token-auth-file`: CSV lines `token,user,uid[,"group1,group2"]`; blank lines and lines starting
 * with `#` are skipped. Throws on a line without token, user and uid, or a token given twice.
 */
export function parseTokenFile(text: string): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>();
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const fields = csvFields(line);
    const [token, username, uid, groups] = fields;
    if (!token || !username || uid === undefined)
      throw new Error(`token file line ${i + 1}: expected token,user,uid[,"groups"]`);
    if (users.has(token)) throw new Error(`token file line ${i + 1}: duplicate token`);
    const list = (groups ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter(Boolean);
    users.set(token, { username, uid, groups: [...list, 'system:authenticated'] });
  }
  return users;
}

/** One CSV line's fields (a quoted field may hold commas). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) {
      fields.push(current.trim());
      current = '';
    } else current += c;
  }
  fields.push(current.trim());
  return fields;
}

/** A ServiceAccount a token was minted for: still valid while the ServiceAccount exists with this uid. */
export interface ServiceAccountClaim {
  namespace: string;
  name: string;
  uid: string;
}

const b64 = (v: object): string => Buffer.from(JSON.stringify(v)).toString('base64url');

/**
 * ServiceAccount tokens: JWTs (HS256, under a key derived from the admin token, so tokens outlive a restart that keeps
 * the token) carrying the claims kube-apiserver's tokens carry (`sub`, `kubernetes.io`, `exp`, `aud`).
 */
export class ServiceAccountTokens {
  readonly #key: Buffer;
  readonly #issuer = 'https://kubernetes.default.svc.cluster.local';

  constructor(secret: string) {
    this.#key = createHash('sha256').update(`raven serviceaccount tokens\u0000${secret}`).digest();
  }

  get issuer(): string {
    return this.#issuer;
  }

  mint(sa: ServiceAccountClaim, options: { audiences: string[]; expirationSeconds: number; now: number }): string {
    const iat = Math.floor(options.now / 1000);
    const payload = {
      aud: options.audiences,
      exp: iat + options.expirationSeconds,
      iat,
      nbf: iat,
      iss: this.#issuer,
      jti: randomUUID(),
      sub: `system:serviceaccount:${sa.namespace}:${sa.name}`,
      'kubernetes.io': { namespace: sa.namespace, serviceaccount: { name: sa.name, uid: sa.uid } },
    };
    const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}`;
    return `${unsigned}.${createHmac('sha256', this.#key).update(unsigned).digest('base64url')}`;
  }

  /** The ServiceAccount of a well-signed, unexpired token; undefined for anything else. */
  verify(token: string, now: number): ServiceAccountClaim | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const expected = createHmac('sha256', this.#key).update(`${parts[0]}.${parts[1]}`).digest();
    const given = Buffer.from(parts[2]!, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as {
        exp?: number;
        'kubernetes.io'?: { namespace?: string; serviceaccount?: { name?: string; uid?: string } };
      };
      const k = claims['kubernetes.io'];
      if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) return undefined;
      if (!k?.namespace || !k.serviceaccount?.name || !k.serviceaccount.uid) return undefined;
      return { namespace: k.namespace, name: k.serviceaccount.name, uid: k.serviceaccount.uid };
    } catch {
      return undefined;
    }
  }
}

/** The user of a ServiceAccount, with the groups the real server gives it. */
export function serviceAccountUser(sa: ServiceAccountClaim): UserInfo {
  return {
    username: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    uid: sa.uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'],
  };
}

/** Compares bearer tokens without leaking their length or content through timing. */
export function sameToken(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}
