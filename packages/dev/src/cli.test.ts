import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import type { Command } from 'commander';
import { buildDevCli as buildCli } from './cli.ts';

/** Every command under `program`, by its full name (`sim openstack`). */
function commands(program: Command, prefix = ''): Map<string, Command> {
  const all = new Map<string, Command>();
  for (const c of program.commands) {
    const name = `${prefix}${c.name()}`;
    all.set(name, c);
    for (const [sub, command] of commands(c, `${name} `)) all.set(sub, command);
  }
  return all;
}

const all = commands(buildCli());
const help = (name: string): string => all.get(name)!.helpInformation();
const longs = (name: string): string[] => all.get(name)!.options.map((o) => o.long!);

/** Flags only the running controller reads. */
const controllerFlags = [
  '--resync-period',
  '--workers-namespaces',
  '--workers-pods',
  '--workers-services',
  '--leader-elect',
  '--no-leader-elect',
  '--leader-elect-namespace',
  '--leader-elect-name',
  '--leader-elect-identity',
  '--ops-host',
  '--ops-port',
  '--log-level',
];

describe('raven --help', () => {
  it('every command and every option says what it is', () => {
    assert.deepEqual(
      [...all.keys()].sort(),
      ['apiserver', 'dev', 'gc', 'node', 'plan', 'run', 'sim', 'sim openstack'].sort(),
    );
    for (const [name, command] of all) {
      assert.ok(command.description().length >= 10, `raven ${name} has no description`);
      for (const option of command.options)
        assert.ok(option.description.length >= 10, `raven ${name} ${option.flags}: "${option.description}"`);
    }
  });

  it('--subnet-strategy names both strategies and the default', () => {
    for (const name of ['run', 'dev', 'plan']) {
      const text = help(name).replace(/\s+/g, ' ');
      assert.match(
        text,
        /--subnet-strategy <strategy> How pods get their subnet: namespace \(a network and subnet per namespace\) or shared \(every pod on one subnet\) \(default: namespace\)/,
        name,
      );
    }
  });

  it('plan and gc do not offer flags they do not read; run and dev offer every one', () => {
    for (const name of ['run', 'dev']) for (const flag of controllerFlags) assert.ok(longs(name).includes(flag), flag);
    for (const flag of controllerFlags) {
      assert.ok(!longs('plan').includes(flag), `plan ${flag}`);
      assert.ok(!longs('gc').includes(flag), `gc ${flag}`);
    }
    for (const flag of [
      '--emulate-kube-proxy',
      '--security-groups',
      '--floating-ip-network-id',
      '--external-network-id',
    ])
      assert.ok(!longs('gc').includes(flag), `gc ${flag}`);
    // What they do read stays.
    for (const name of ['plan', 'gc'])
      for (const flag of ['--config', '--cluster-id', '--kubeconfig', '--os-cloud', '--router-id', '--subnet-strategy'])
        assert.ok(longs(name).includes(flag), `${name} ${flag}`);
    assert.ok(longs('plan').includes('--emulate-kube-proxy'));
    assert.ok(longs('gc').includes('--teardown') && longs('gc').includes('--yes'));
  });

  it("defaults are shown, raven dev's own where it has them", () => {
    const flat = (name: string) => help(name).replace(/\s+/g, ' ');
    assert.match(flat('run'), /--cluster-id <id> Required\. Names this cluster .* \[clusterId, \$RAVEN_CLUSTER_ID\]/);
    assert.match(flat('dev'), /--cluster-id <id> Names this cluster .* \(default: dev\) \[clusterId/);
    assert.match(flat('run'), /--leader-elect Only the holder .* \(default: on\)/);
    assert.match(flat('dev'), /--leader-elect Only the holder .* \(default: off\)/);
    assert.match(flat('run'), /--ops-port <port> .* \(default: 9090\)/);
    assert.match(flat('dev'), /--ops-port <port> .* \(default: 0\)/);
    assert.match(flat('dev'), /--service-subnet-cidr <cidr> .* \(default: 10\.96\.0\.0\/12\)/);
    assert.match(flat('dev'), /--namespace-cidr <cidr> .* \(default: 10\.244\.0\.0\/16\)/);
    assert.match(flat('dev'), /--cleanup with a real cloud .* \(default: on\) --no-cleanup with a real cloud: leave/);
    assert.match(flat('dev'), /--api-port <port> port of the embedded API server \(0 picks a free one\)/);
  });
});
