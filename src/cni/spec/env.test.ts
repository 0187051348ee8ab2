import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { parseCniArgs, readCniEnvironment } from './env.ts';
import { CniError } from './errors.ts';

describe('the CNI environment', () => {
  it('parses CNI_ARGS pairs, values with "=" included', () => {
    assert.deepEqual(parseCniArgs('IgnoreUnknown=1;K8S_POD_NAME=web;X=a=b;'), {
      IgnoreUnknown: '1',
      K8S_POD_NAME: 'web',
      X: 'a=b',
    });
    assert.throws(() => parseCniArgs('K8S_POD_NAME'), /"K8S_POD_NAME" is not KEY=VALUE/);
  });

  it('requires what each command needs: DEL works without a network namespace', () => {
    const del = readCniEnvironment({ CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'c', CNI_IFNAME: 'eth0' });
    assert.equal(del.netns, '');
    assert.throws(
      () => readCniEnvironment({ CNI_COMMAND: 'ADD', CNI_CONTAINERID: 'c' }),
      (err: unknown) => err instanceof CniError && err.cniCode === 4 && /CNI_NETNS, CNI_IFNAME/.test(err.message),
    );
    assert.throws(() => readCniEnvironment({}), /CNI_COMMAND is not set/);
    assert.equal(readCniEnvironment({ CNI_COMMAND: 'VERSION' }).command, 'VERSION');
  });
});
