import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { mergeApplied, pruneApplied } from './merge.ts';
import { builtinType } from './schema.ts';

const pod = builtinType('', 'Pod');
const service = builtinType('', 'Service');

describe('mergeApplied', () => {
  it('merges granular objects key by key; the configuration wins', () => {
    assert.deepEqual(
      mergeApplied({ data: { a: '1', b: '2' }, metadata: { labels: { x: '1' } } }, { data: { b: '3', c: '4' } }, pod),
      {
        data: { a: '1', b: '3', c: '4' },
        metadata: { labels: { x: '1' } },
      },
    );
  });

  it('removes leaves given as null, but leaves a non-empty object alone', () => {
    assert.deepEqual(
      mergeApplied({ data: { a: '1', b: '2' }, spec: { x: 1 } }, { data: { a: null }, spec: null }, pod),
      { data: { b: '2' }, spec: { x: 1 } },
    );
  });

  it('merges associative lists by key and replaces atomic lists and maps', () => {
    const live = {
      spec: {
        selector: { app: 'a', tier: 'b' },
        ports: [
          { port: 80, protocol: 'TCP', targetPort: 8080, name: 'http' },
          { port: 443, protocol: 'TCP', targetPort: 8443 },
        ],
        externalIPs: ['1.1.1.1', '2.2.2.2'],
      },
    };
    assert.deepEqual(
      mergeApplied(
        live,
        { spec: { selector: { app: 'c' }, ports: [{ port: 80, targetPort: 9090 }], externalIPs: ['3.3.3.3'] } },
        service,
      ),
      {
        spec: {
          selector: { app: 'c' },
          ports: [
            { port: 80, protocol: 'TCP', targetPort: 9090, name: 'http' },
            { port: 443, protocol: 'TCP', targetPort: 8443 },
          ],
          externalIPs: ['3.3.3.3'],
        },
      },
    );
  });

  it('orders list items like structured-merge-diff: live-only items stay, shared ones follow the configuration', () => {
    const names = (list: unknown): unknown => (list as Array<{ name: string }>).map((c) => c.name);
    const live = { spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } };
    const merged = mergeApplied(
      structuredClone(live),
      { spec: { containers: [{ name: 'c' }, { name: 'a' }, { name: 'd' }] } },
      pod,
    ) as { spec: { containers: unknown } };
    assert.deepEqual(names(merged.spec.containers), ['b', 'c', 'a', 'd']);
    const appended = mergeApplied(structuredClone(live), { spec: { containers: [{ name: 'd' }] } }, pod) as {
      spec: { containers: unknown };
    };
    assert.deepEqual(names(appended.spec.containers), ['a', 'b', 'c', 'd']);
  });

  it('merges set lists as sets', () => {
    assert.deepEqual(
      mergeApplied({ metadata: { finalizers: ['a', 'b'] } }, { metadata: { finalizers: ['c', 'a'] } }, pod),
      { metadata: { finalizers: ['c', 'a', 'b'] } },
    );
  });
});

describe('pruneApplied', () => {
  it('removes what the applier applied last time, unless someone owns it now', () => {
    const obj = { data: { a: '1', b: '2', c: '3' } };
    const last = { 'f:data': { 'f:a': {}, 'f:b': {}, 'f:c': {} } };
    pruneApplied(obj, last, [{ 'f:data': { 'f:a': {} } }, { 'f:data': { 'f:b': {} } }], pod);
    assert.deepEqual(obj, { data: { a: '1', b: '2' } });
  });

  it('removes list items, and a named field nobody owns anything in as a whole', () => {
    const obj = {
      metadata: { name: 'x', finalizers: ['mine', 'theirs'], labels: { l: '1' } },
      spec: {
        containers: [
          { name: 'a', image: 'x' },
          { name: 'b', image: 'y' },
        ],
      },
    };
    const last = {
      'f:metadata': { 'f:finalizers': { 'v:"mine"': {} }, 'f:labels': { 'f:l': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"b"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
    };
    const owned = [
      {
        'f:metadata': { 'f:finalizers': { 'v:"theirs"': {} } },
        'f:spec': { 'f:containers': { 'k:{"name":"a"}': { '.': {}, 'f:name': {} } } },
      },
    ];
    pruneApplied(obj, last, owned, pod);
    // labels: the applier's only label went, and nobody owns any label, so the field goes
    // (EnsureNamedFieldsAreMembers).
    assert.deepEqual(obj, {
      metadata: { name: 'x', finalizers: ['theirs'] },
      spec: { containers: [{ name: 'a', image: 'x' }] },
    });
  });
});
