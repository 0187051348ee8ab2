import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { groupSetNamespace, groupSetWanted, SecurityGroupRecord, type RecordedGroup } from './record.ts';

const group = (id: string, neutronId: string, rules: string[] = []): RecordedGroup => ({
  id,
  neutronId,
  name: `raven/c/sg/${id}`,
  rules: new Map(rules.map((r, i) => [r, `${neutronId}-rule-${i}`])),
});
const neutronIds = (record: SecurityGroupRecord): string[] =>
  record
    .all()
    .map((g) => g.neutronId)
    .sort();

/** The record against lists that raced with Raven's own writes (issue 26, row 7: a group healed twice). */
describe('SecurityGroupRecord.replace', () => {
  it('keeps a group made while the list ran, and does not bring back one deleted while it ran', () => {
    const record = new SecurityGroupRecord();
    record.replace([group('a', 'n-a'), group('b', 'n-b')], record.mark());
    const mark = record.mark();
    // While the list runs: `c` is made (its reconcile found it missing), `b` is deleted.
    record.put(group('c', 'n-c'));
    record.remove('b');
    const changed = record.replace([group('a', 'n-a'), group('b', 'n-b')], mark);
    assert.deepEqual(neutronIds(record), ['n-a', 'n-c']);
    assert.deepEqual(changed, []);
  });

  it('says which groups Neutron holds otherwise: gone, rules changed; of two copies of one id it keeps its own', () => {
    const record = new SecurityGroupRecord();
    record.replace([group('a', 'n-a', ['r1', 'r2']), group('b', 'n-b'), group('c', 'n-c')], record.mark());
    const changed = record.replace(
      [group('a', 'n-a', ['r1']), group('c', 'n-c2'), group('c', 'n-c'), group('d', 'n-d')],
      record.mark(),
    );
    assert.deepEqual(changed.sort(), ['a', 'b', 'd']);
    assert.deepEqual([...record.get('a')!.rules.keys()], ['r1']);
    assert.equal(record.get('b'), undefined);
    assert.equal(record.get('c')?.neutronId, 'n-c');
    assert.equal(record.idOf('n-c2'), undefined);
  });
});

describe('groupSetWanted and groupSetNamespace: what the warm pools ask of a set of groups', () => {
  const record = new SecurityGroupRecord();
  record.replace([group('web', 'n-web'), group('gone', 'n-gone'), group('open', 'n-open')], record.mark());
  const desired = new Map([
    ['web', { key: 'pods|ns=shop|app=web' }],
    ['open', { key: 'open|' }],
  ]);
  const model = { groups: () => desired };

  it('a set is wanted while each of its own groups is, and any other is configured', () => {
    const wanted = groupSetWanted(model, record, ['n-configured']);
    assert.ok(wanted(['n-open', 'n-web']));
    assert.ok(wanted(['n-configured', 'n-web']));
    assert.ok(!wanted(['n-gone', 'n-web']), 'one of its own no longer desired');
    assert.ok(!wanted(['n-stranger']), 'neither Raven’s nor configured');
  });

  it('the namespace whose pod-set group a set holds', () => {
    const namespaceOf = groupSetNamespace(model, record);
    assert.equal(namespaceOf(['n-open', 'n-web']), 'shop');
    assert.equal(namespaceOf(['n-open', 'n-configured']), undefined);
  });
});
