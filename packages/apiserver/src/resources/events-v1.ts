import type { KubeObject } from '../../../../src/kube/api/index.ts';

/**
 * core/v1 Event ⇄ events.k8s.io/v1 Event. The real server keeps one Event store and serves it in both versions, so
 * an event written through either API is listed and watched through both; the fields map as in
 * pkg/apis/events/v1/conversion.go. Events are stored in the core/v1 form.
 */
const renamed: Array<[core: string, eventsV1: string]> = [
  ['involvedObject', 'regarding'],
  ['message', 'note'],
  ['reportingComponent', 'reportingController'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
];

function rename(obj: KubeObject, apiVersion: string, pairs: Array<[from: string, to: string]>): KubeObject {
  const out: KubeObject = { apiVersion, kind: 'Event', metadata: obj.metadata };
  const names = new Map(pairs);
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'apiVersion' || key === 'kind' || key === 'metadata' || value === undefined) continue;
    out[names.get(key) ?? key] = value;
  }
  return out;
}

/** A stored (core/v1) Event as events.k8s.io/v1 shows it. */
export function eventsV1FromCore(obj: KubeObject): KubeObject {
  return rename(obj, 'events.k8s.io/v1', renamed);
}

/** An events.k8s.io/v1 Event in the stored core/v1 form. */
export function coreFromEventsV1(obj: KubeObject): KubeObject {
  return rename(
    obj,
    'v1',
    renamed.map(([core, eventsV1]) => [eventsV1, core]),
  );
}

/** Field labels of events.k8s.io/v1 and where they live in the stored form. */
export const eventsV1FieldPaths: Record<string, string> = {
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  reportingController: 'reportingComponent',
};

/**
 * Conversions between served versions of one stored kind, by `<stored apiVersion>|<kind>|<served apiVersion>`.
 * Versions with no entry differ only in `apiVersion` (custom resources, conversion strategy None).
 */
export const conversions: ReadonlyMap<string, (obj: KubeObject) => KubeObject> = new Map([
  ['v1|Event|events.k8s.io/v1', eventsV1FromCore],
]);
