/**
 * A real Open vSwitch for raven-cni's OVS tests: ovsdb-server and ovs-vswitchd (userspace datapath, `netdev`: this
 * kernel may have no openvswitch module) with a database, sockets and logs in a directory of the test's own, and one
 * bridge. It runs in the root network namespace because raven-cni makes the pod's host end there; the userspace
 * datapath allows one switch per namespace (its `ovs-netdev` device), so a test skips while another one runs.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { waitFor } from './wait.ts';

const sh = promisify(execFile);

/** Why an OVS test cannot run here, or false when it can. */
export function ovsSkipReason(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, an OVS bridge)';
  if (!existsSync('/usr/sbin/ovs-vswitchd') || !existsSync('/usr/bin/ovs-vsctl'))
    return 'needs Open vSwitch (apt-get install openvswitch-switch ethtool)';
  if (!existsSync('/usr/sbin/ethtool')) return 'needs ethtool (apt-get install ethtool)';
  if (existsSync('/sys/class/net/ovs-netdev'))
    return 'another userspace Open vSwitch runs in this network namespace (ovs-netdev exists); one at a time';
  return false;
}

export interface TestOvs {
  /** `unix:<socket>`, for `ovs-vsctl --db` and raven-cni's `ovs.database`. */
  database: string;
  bridge: string;
  vsctl(...args: string[]): Promise<string>;
  close(): Promise<void>;
}

/** Starts the switch and adds `bridge` (datapath `netdev`); close() stops it with `exit --cleanup` and removes all. */
export async function startTestOvs(bridge: string): Promise<TestOvs> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-ovs-'));
  const env = { ...process.env, OVS_RUNDIR: dir, OVS_DBDIR: dir, OVS_LOGDIR: dir, OVS_SYSCONFDIR: dir };
  const database = `unix:${join(dir, 'db.sock')}`;
  const children: ChildProcess[] = [];
  const vsctl = async (...args: string[]) =>
    (await sh('ovs-vsctl', [`--db=${database}`, '--timeout=10', ...args], { env, timeout: 15_000 })).stdout;
  const close = async () => {
    // "exit --cleanup" removes the datapath's devices (ovs-netdev, the bridge); a plain SIGTERM leaves them behind.
    await sh('ovs-appctl', ['-t', join(dir, 'ovs-vswitchd.ctl'), 'exit', '--cleanup'], { env, timeout: 15_000 }).catch(
      () => undefined,
    );
    // ovs-appctl returns before ovs-vswitchd has finished: wait for each daemon to exit, TERM (then KILL) the rest.
    for (const child of children.reverse()) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const gone = () => child.exitCode !== null || child.signalCode !== null;
      if (!gone()) await Promise.race([exited, sleep(10_000)]);
      if (!gone()) child.kill('SIGTERM');
      if (!gone()) await Promise.race([exited, sleep(5000)]);
      if (!gone()) child.kill('SIGKILL');
    }
    await sh('ip', ['link', 'del', bridge]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  const daemon = (command: string, args: string[]) => {
    const child = spawn(command, args, { env, stdio: 'ignore' });
    children.push(child);
  };
  try {
    await sh('ovsdb-tool', ['create', join(dir, 'conf.db'), '/usr/share/openvswitch/vswitch.ovsschema'], { env });
    daemon('ovsdb-server', [
      join(dir, 'conf.db'),
      `--remote=punix:${join(dir, 'db.sock')}`,
      `--unixctl=${join(dir, 'ovsdb-server.ctl')}`,
      `--log-file=${join(dir, 'ovsdb-server.log')}`,
    ]);
    await waitFor('ovsdb-server listening', () => existsSync(join(dir, 'db.sock')), { timeoutMs: 20_000 });
    await vsctl('--no-wait', 'init');
    daemon('ovs-vswitchd', [
      database,
      `--unixctl=${join(dir, 'ovs-vswitchd.ctl')}`,
      `--log-file=${join(dir, 'ovs-vswitchd.log')}`,
    ]);
    await vsctl('add-br', bridge, '--', 'set', 'Bridge', bridge, 'datapath_type=netdev');
    return { database, bridge, vsctl, close };
  } catch (err) {
    await close();
    throw err;
  }
}
