/**
 * ResourceQuota (core/v1): every `spec.hard` value a non-negative quantity, as upstream's ValidateResourceQuota.
 */
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { invalid, type FieldCause } from './field.ts';

const SUFFIXES: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity (`2`, `1k`, `500m`, `1Gi`) as a number; undefined when it is not one. */
export function parseQuantity(text: string): number | undefined {
  const m = /^([+-]?\d+(?:\.\d+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/.exec(text.trim());
  return m ? Number(m[1]) * SUFFIXES[m[2] ?? '']! : undefined;
}

/** Every `spec.hard` value is a quantity, and not negative. */
export function validateResourceQuota(obj: KubeObject): FieldCause[] {
  const hard = (obj as { spec?: { hard?: Record<string, unknown> } }).spec?.hard ?? {};
  return Object.entries(hard).flatMap(([name, value]) => {
    const n = typeof value === 'string' ? parseQuantity(value) : undefined;
    return n !== undefined && n >= 0 ? [] : [invalid(`spec.hard[${name}]`, value, 'must be a non-negative quantity')];
  });
}
