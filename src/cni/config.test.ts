import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from '../../test/support/node-test.ts';
import { parseRavenCniConf, ravenEntryOfConflist } from './config.ts';

describe('raven-cni configuration', () => {
  it('the shipped conflist example is a valid list whose raven-cni entry parses, defaults filled', () => {
    const text = readFileSync(new URL('../../deploy/cni/10-raven.conflist', import.meta.url), 'utf8');
    const conf = ravenEntryOfConflist(text, '10-raven.conflist');
    assert.equal(conf.nodeName, 'compute-1');
    assert.equal(conf.daemonSocket, '/run/raven/cni.sock');
    assert.throws(
      () => ravenEntryOfConflist('{"cniVersion":"1.0.0","name":"x","plugins":[{"type":"bridge"}]}', 'f'),
      /f has no plugin of type raven-cni/,
    );
    const minimal = parseRavenCniConf(
      JSON.stringify({ cniVersion: '0.4.0', name: 'n', type: 'raven-cni', kubeconfig: 'k', cloudsYaml: 'c' }),
    );
    assert.equal(minimal.vifTimeoutSeconds, 60);
    assert.equal(minimal.mode, 'host');
    assert.deepEqual(minimal.ovs, {
      bridge: 'br-int',
      database: 'unix:/var/run/openvswitch/db.sock',
      interfacePrefix: 'tap',
      timeoutSeconds: 10,
    });
  });

  it('names the key that is wrong, and refuses another plugin’s type', () => {
    const base = { cniVersion: '1.0.0', name: 'n', type: 'raven-cni', kubeconfig: 'k', cloudsYaml: 'c' };
    assert.throws(() => parseRavenCniConf(JSON.stringify({ ...base, vifTimeoutSeconds: -1 })), /vifTimeoutSeconds/);
    assert.throws(() => parseRavenCniConf(JSON.stringify({ ...base, type: 'bridge' })), /network configuration: type/);
    assert.throws(() => parseRavenCniConf(JSON.stringify({ ...base, cloudsYaml: undefined })), /cloudsYaml/);
    assert.throws(() => parseRavenCniConf(JSON.stringify({ ...base, ovs: { bridge: 'br int;x' } })), /ovs\.bridge/);
    assert.throws(() => parseRavenCniConf(JSON.stringify({ ...base, mode: 'vm' })), /network configuration: mode/);
    assert.throws(() => parseRavenCniConf(JSON.stringify({ ...base, serverId: '../x' })), /serverId/);
    const partial = parseRavenCniConf(JSON.stringify({ ...base, ovs: { interfacePrefix: 'rvo' } }));
    assert.deepEqual([partial.ovs.bridge, partial.ovs.interfacePrefix], ['br-int', 'rvo']);
  });
});
