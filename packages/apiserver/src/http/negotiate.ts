import { apiErrors } from './errors.ts';

/** The body formats the server speaks. */
export type Format = 'json' | 'yaml' | 'protobuf';

const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';
const mediaTypes: Record<Format, string> = {
  json: 'application/json',
  yaml: 'application/yaml',
  protobuf: PROTOBUF_TYPE,
};
/** In the real server's order: `*\/*` and `application/*` mean the first one, JSON. */
const order: Format[] = ['json', 'yaml', 'protobuf'];

/** What an endpoint can answer with. */
export interface Endpoint {
  /** The kind has a protobuf form (built-in kinds; not custom resources). */
  protobuf: boolean;
  /** `as=Table;g=meta.k8s.io;v=v1` is served (resource GETs and lists). */
  table: boolean;
  /** A watch: the format must have a stream form (JSON lines or protobuf frames; YAML has none). */
  stream?: boolean;
}

export interface Negotiated {
  format: Format;
  /** The client asked for a `meta.k8s.io` Table. */
  table: boolean;
}

interface Clause {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

/** An Accept header's clauses, best first: by q, then the more specific first (goautoneg's order). */
function parseAccept(header: string): Clause[] {
  const clauses: Clause[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...rest] = part.split(';').map((s) => s.trim());
    if (!range) continue;
    const [type = '', subtype = ''] = range.toLowerCase().split('/');
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p.slice(eq + 1).trim();
      if (key === 'q') q = Number(value);
      else params[key] = value;
    }
    clauses.push({ type, subtype: subtype || '*', params, q: Number.isFinite(q) ? q : 0 });
  }
  const specificity = (c: Clause) => (c.type === '*' ? 0 : c.subtype === '*' ? 1 : 2);
  return clauses
    .map((c, i) => ({ c, i }))
    .sort((a, b) => b.c.q - a.c.q || specificity(b.c) - specificity(a.c) || a.i - b.i)
    .map(({ c }) => c);
}

/** Whether a clause's parameters can be honoured in `format` (acceptMediaTypeOptions + AllowsMediaTypeTransform). */
function allows(clause: Clause, format: Format, endpoint: Endpoint): { ok: boolean; table: boolean } {
  const { as, g, v, stream } = clause.params;
  if (stream && (stream !== 'watch' || format === 'yaml')) return { ok: false, table: false };
  if (as === undefined && g === undefined && v === undefined)
    return { ok: format !== 'protobuf' || endpoint.protobuf, table: false };
  // A conversion: only to a Table of meta.k8s.io, in JSON or YAML (the real server has no protobuf Table).
  const table =
    as === 'Table' && g === 'meta.k8s.io' && (v === 'v1' || v === 'v1beta1') && endpoint.table && format !== 'protobuf';
  return { ok: table, table };
}

/**
 * The response format for an Accept header, as kube-apiserver negotiates it: the first clause (best first) that a
 * served format matches and whose parameters the endpoint honours; no Accept means JSON. 406 when nothing fits.
 */
export function negotiateOutput(accept: string | null, endpoint: Endpoint): Negotiated {
  if (!accept || accept.trim() === '') return { format: 'json', table: false };
  for (const clause of parseAccept(accept)) {
    for (const format of order) {
      const [type, subtype] = mediaTypes[format].split('/');
      const matches =
        (clause.type === type && (clause.subtype === subtype || clause.subtype === '*')) || clause.type === '*';
      if (!matches) continue;
      const { ok, table } = allows(clause, format, endpoint);
      if (ok) return { format, table };
    }
  }
  throw apiErrors.notAcceptable(
    endpoint.stream
      ? ['application/json;stream=watch', `${PROTOBUF_TYPE};stream=watch`]
      : order.map((f) => mediaTypes[f]),
  );
}

/**
 * Negotiation for a Status answer (an error): the client's format where it fits the endpoint (custom resources have
 * no protobuf), else JSON.
 */
export function errorFormat(accept: string | null, protobuf = true): Format {
  try {
    return negotiateOutput(accept, { protobuf, table: false }).format;
  } catch {
    return 'json';
  }
}

/** Media type of a Content-Type/Accept entry, without parameters, lower-cased. */
export function mediaType(header: string | null): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** JSON and YAML bodies as the server has always taken them (a missing type is JSON). */
const textTypes = new Set(['', 'application/json', 'application/yaml', 'text/yaml', '*/*']);

/**
 * The format of a request body from its Content-Type (NegotiateInputSerializer): JSON, YAML, or protobuf for kinds
 * that have it; 415 `UnsupportedMediaType` naming the accepted types otherwise.
 */
export function inputFormat(contentType: string | null, protobuf: boolean): Format {
  const type = mediaType(contentType);
  if (type === PROTOBUF_TYPE && protobuf) return 'protobuf';
  if (textTypes.has(type)) return type === 'application/yaml' || type === 'text/yaml' ? 'yaml' : 'json';
  throw apiErrors.unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${order
      .filter((f) => f !== 'protobuf' || protobuf)
      .map((f) => mediaTypes[f])
      .join(', ')}`,
  );
}

/** The Content-Type of a response in `format`. */
export function contentTypeOf(format: Format): string {
  return mediaTypes[format];
}
