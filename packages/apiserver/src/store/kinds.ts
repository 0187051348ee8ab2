import type { Event, KubeObject, Namespace, Node, Pod, Service } from '../../../../src/kube/api/index.ts';

/** The kinds of the built-in tables whose objects the server reads field by field. */
export interface TableKinds {
  '/pods': Pod;
  '/services': Service;
  '/namespaces': Namespace;
  '/nodes': Node;
  '/events': Event;
}

/**
 * An object of table `table`, typed as that table's kind: the store's typed decoding layer. It holds by construction:
 * every object is validated against its kind's schema before it is stored, and a table holds one kind.
 */
export function storedAs<K extends keyof TableKinds>(table: K, obj: KubeObject): TableKinds[K] {
  return obj as TableKinds[K];
}
