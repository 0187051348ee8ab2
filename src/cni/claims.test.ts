import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { holdPort, releasePorts } from './claims.ts';
import { CniError } from './spec/index.ts';

const PORT = '0b5e7a9c-1111-4222-8333-944455566677';

describe("the node's port holders", () => {
  let dir: string;
  let netns: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'raven-claims-'));
    netns = join(dir, 'netns-a'); // stands for a live sandbox's network namespace
    await writeFile(netns, '');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a port held by one live sandbox is refused to another (try again later) until DEL frees it', async () => {
    await holdPort(dir, PORT, { containerId: 'c-a', podUid: 'uid-a', netns });
    await holdPort(dir, PORT, { containerId: 'c-a', podUid: 'uid-a', netns }); // ADD repeated: fine
    await assert.rejects(
      holdPort(dir, PORT, { containerId: 'c-b', podUid: 'uid-b', netns }),
      (err: unknown) =>
        err instanceof CniError && err.cniCode === 11 && /for container c-a \(pod uid uid-a\)/.test(err.message),
    );
    await releasePorts(dir, 'c-b'); // another container's DEL frees nothing
    await assert.rejects(holdPort(dir, PORT, { containerId: 'c-b', podUid: 'uid-b', netns }));
    await releasePorts(dir, 'c-a');
    await releasePorts(dir, 'c-a'); // twice: nothing left to do
    await holdPort(dir, PORT, { containerId: 'c-b', podUid: 'uid-b', netns });
    await releasePorts(dir, 'c-b');
    assert.deepEqual(await readdir(join(dir, 'ports')), []);
    assert.deepEqual(await readdir(join(dir, 'containers')), []);
  });

  it('a holder whose network namespace is gone (no DEL came) no longer counts', async () => {
    await holdPort(dir, PORT, { containerId: 'c-gone', podUid: 'uid-gone', netns: join(dir, 'no-such-netns') });
    await holdPort(dir, PORT, { containerId: 'c-new', podUid: 'uid-new', netns });
    await releasePorts(dir, 'c-new');
    await releasePorts(dir, 'c-gone');
  });

  it('names from an annotation or the runtime never leave the directory', async () => {
    await assert.rejects(holdPort(dir, '../../etc/passwd', { containerId: 'c', podUid: 'u', netns }), /is not a UUID/);
    await assert.rejects(holdPort(dir, PORT, { containerId: '../x', podUid: 'u', netns }), /not a container id/);
    await releasePorts(dir, '../x'); // DEL of such a name: nothing to do, no error
  });
});
