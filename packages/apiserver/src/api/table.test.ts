import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { builtinResources } from '../resources/index.ts';
import { evaluateJsonPath, humanDuration, toTable } from './table.ts';

describe('Table responses', () => {
  it('prints ages like kubectl', () => {
    const cases: Array<[number, string]> = [
      [5, '5s'],
      [119, '119s'],
      [150, '2m30s'],
      [600, '10m'],
      [3 * 3600, '3h'],
      [3 * 3600 + 60 * 5, '3h5m'],
      [30 * 3600, '30h'],
      [50 * 3600, '2d2h'],
      [400 * 86400, '400d'],
      [3 * 365 * 86400, '3y0d'],
    ];
    for (const [seconds, text] of cases) assert.equal(humanDuration(seconds * 1000), text, `${seconds}s`);
  });

  it('evaluates the JSONPaths printer columns use', () => {
    const obj = { spec: { containers: [{ name: 'a' }, { name: 'b' }] }, status: { phase: 'Running' } };
    assert.equal(evaluateJsonPath(obj, '.status.phase'), 'Running');
    assert.equal(evaluateJsonPath(obj, '.spec.containers[1].name'), 'b');
    assert.equal(evaluateJsonPath(obj, '.spec.containers[*].name'), 'a,b');
    assert.equal(evaluateJsonPath(obj, '.spec.missing'), undefined);
  });

  it('builds rows with the kind columns and partial metadata', () => {
    const podDef = builtinResources.find((d) => d.resource === 'pods')!;
    const pod = {
      metadata: { name: 'web', namespace: 'ns', creationTimestamp: new Date().toISOString() },
      spec: { containers: [{ name: 'c' }], nodeName: 'n1' },
      status: { phase: 'Running', podIP: '10.0.0.5', containerStatuses: [{ ready: true, restartCount: 2 }] },
    };
    const table = toTable(podDef, [pod], { resourceVersion: '7' }, 'Metadata') as {
      columnDefinitions: Array<{ name: string }>;
      rows: Array<{ cells: unknown[]; object: { kind: string } }>;
    };
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node', 'Nominated Node', 'Readiness Gates'],
    );
    assert.deepEqual(table.rows[0]!.cells.slice(0, 4), ['web', '1/1', 'Running', 2]);
    assert.deepEqual(table.rows[0]!.cells.slice(5), ['10.0.0.5', 'n1', '<none>', '<none>']);
    assert.equal(table.rows[0]!.object.kind, 'PartialObjectMetadata');
  });

  it("counts a pod's readiness gates whose condition is True", () => {
    const podDef = builtinResources.find((d) => d.resource === 'pods')!;
    const pod = {
      metadata: { name: 'web' },
      spec: {
        containers: [{ name: 'c' }],
        readinessGates: [{ conditionType: 'a' }, { conditionType: 'b' }, { conditionType: 'c' }],
      },
      status: {
        nominatedNodeName: 'n2',
        conditions: [
          { type: 'a', status: 'True' },
          { type: 'b', status: 'False' },
        ],
      },
    };
    const table = toTable(podDef, [pod], {}, 'None') as { rows: Array<{ cells: unknown[] }> };
    assert.deepEqual(table.rows[0]!.cells.slice(7), ['n2', '1/3']);
  });

  it("shows a CRD's creation time as a timestamp, like the real default table convertor", () => {
    const crdDef = builtinResources.find((d) => d.resource === 'customresourcedefinitions')!;
    const table = toTable(
      crdDef,
      [{ metadata: { name: 'widgets.example.com', creationTimestamp: '2024-05-06T07:08:09Z' } }],
      {},
      'None',
    ) as { rows: Array<{ cells: unknown[] }> };
    assert.deepEqual(table.rows[0]!.cells, ['widgets.example.com', '2024-05-06T07:08:09Z']);
  });
});
