import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from '../../../test/support/node-test.ts';
import { configFileText, loadRavenConfig } from './index.ts';

describe('configFileText', () => {
  it('writes a file that loads back to the same settings (dual-stack ranges, a single range, header comments)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raven-save-'));
    try {
      for (const env of [
        { RAVEN_CLUSTER_ID: 'dev', FLANNEL_NET: '10.244.0.0/16', RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12' },
        {
          RAVEN_CLUSTER_ID: 'dev',
          RAVEN_NAMESPACE_CIDRS: '10.244.0.0/16,fd00:10:244::/56',
          RAVEN_SERVICE_SUBNET_CIDRS: '10.96.0.0/12,fd00:10:96::/112',
          RAVEN_LEADER_ELECT: 'false',
        },
      ]) {
        const config = loadRavenConfig({ env, hostname: 'h' });
        const file = join(dir, 'config.yaml');
        const text = configFileText(config, ['written by a test']);
        assert.match(text, /^# written by a test\n/);
        await writeFile(file, text);
        assert.deepEqual(loadRavenConfig({ file, env: {}, hostname: 'h' }), config);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
