import type { KubeObject } from '../../../../src/kube/api/index.ts';
import type { PrinterColumn, ResourceDef } from '../resources/index.ts';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** How long ago, the way `kubectl get` prints ages (apimachinery's `duration.HumanDuration`). */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) return h % 24 === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  const y = Math.floor(h / 24 / 365);
  if (y < 8) return `${y}y${Math.floor(h / 24) % 365}d`;
  return `${y}y`;
}

/** Evaluates the simple JSONPaths printer columns use: `.a.b`, `.a[0].b`, `.a[*].b`. */
export function evaluateJsonPath(obj: unknown, path: string): unknown {
  let values: unknown[] = [obj];
  for (const token of path
    .replace(/^\{?\.?/, '')
    .replace(/\}$/, '')
    .match(/[^.[\]]+|\[[^\]]*\]/g) ?? []) {
    const next: unknown[] = [];
    for (const v of values) {
      if (v === null || typeof v !== 'object') continue;
      if (token === '[*]') next.push(...(Array.isArray(v) ? (v as unknown[]) : (Object.values(v) as unknown[])));
      else if (token.startsWith('[')) next.push((v as unknown[])[Number(token.slice(1, -1))]);
      else next.push((v as Record<string, unknown>)[token]);
    }
    values = next.filter((x) => x !== undefined);
  }
  if (values.length === 0) return undefined;
  return values.length === 1
    ? values[0]
    : values.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v as string))).join(',');
}

function cellOf(column: PrinterColumn, obj: KubeObject, now: number): unknown {
  const value = typeof column.jsonPath === 'function' ? column.jsonPath(obj) : evaluateJsonPath(obj, column.jsonPath);
  if (value === undefined || value === null || value === '') return column.type === 'date' ? '<unknown>' : '<none>';
  if (column.type === 'date' && typeof value === 'string') return humanDuration(now - Date.parse(value));
  return value;
}

function rowObject(obj: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/** A `meta.k8s.io/v1 Table` of objects with the kind's printer columns (Name first). */
export function toTable(
  def: ResourceDef,
  objects: readonly KubeObject[],
  listMeta: object,
  include: IncludeObject,
  withColumns = true,
): object {
  const columns = def.printerColumns ?? [];
  const now = Date.now();
  const table: Record<string, unknown> = {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    rows: objects.map((obj) => {
      const row: Record<string, unknown> = {
        cells: [obj.metadata.name ?? '', ...columns.map((c) => cellOf(c, obj, now))],
      };
      const object = rowObject(obj, include);
      if (object !== undefined) row.object = object;
      return row;
    }),
  };
  if (withColumns) {
    table.columnDefinitions = [
      {
        name: 'Name',
        type: 'string',
        format: 'name',
        description: 'Name must be unique within a namespace.',
        priority: 0,
      },
      ...columns.map((c) => ({
        name: c.name,
        type: c.type === 'date' ? 'string' : c.type,
        format: '',
        description: c.description ?? '',
        priority: c.priority ?? 0,
      })),
    ];
  }
  return table;
}
