import { mkdir, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '../core/index.ts';
import { CniError, CniErrorCode } from './spec/index.ts';

/**
 * This node's record of which sandbox holds which port (docs/pools.md, "Signed VIFs"): a file per port, created
 * exclusively by ADD and removed by DEL, so that whatever any leader signed or any annotation says, a port is never
 * plugged into two sandboxes on this node. A file per container maps DEL (which reads no API) back to its port.
 *
 * The files live on a tmpfs (`/run`), so a reboot, which ends every sandbox, clears them; a holder whose network
 * namespace is gone (a runtime that never called DEL) no longer counts.
 */
export interface PortHolder {
  containerId: string;
  podUid: string;
  netns: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/** Both names come from outside (a port id from an annotation, a container id from the runtime): file names only. */
function paths(dir: string, portId: string | undefined, containerId: string) {
  if (portId !== undefined && !UUID.test(portId))
    throw new CniError(
      CniErrorCode.PORT_VERIFICATION_FAILED,
      `port id ${JSON.stringify(portId.slice(0, 64))} is not a UUID`,
    );
  if (!CONTAINER_ID.test(containerId))
    throw new CniError(
      CniErrorCode.INVALID_ENVIRONMENT,
      `CNI_CONTAINERID ${JSON.stringify(containerId.slice(0, 64))} is not a container id`,
    );
  return {
    port: portId === undefined ? '' : join(dir, 'ports', portId.toLowerCase()),
    container: join(dir, 'containers', containerId),
  };
}

async function holderOf(file: string): Promise<PortHolder | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as PortHolder;
  } catch {
    return undefined; // gone meanwhile, or torn by a crash mid-write: not a holder
  }
}

const alive = async (netns: string) =>
  netns === '' ||
  (await stat(netns).then(
    () => true,
    () => false,
  ));

/**
 * Records `holder` as the port's sandbox. The same container again (a repeated ADD) is fine; another live one is
 * "try again later": the runtime retries, and the pod starts once the other sandbox is gone.
 */
export async function holdPort(dir: string, portId: string, holder: PortHolder): Promise<void> {
  const p = paths(dir, portId, holder.containerId);
  await Promise.all([
    mkdir(join(dir, 'ports'), { recursive: true }),
    mkdir(join(dir, 'containers'), { recursive: true }),
  ]);
  for (let attempt = 0; ; attempt++) {
    try {
      const file = await open(p.port, 'wx', 0o600);
      try {
        await file.writeFile(JSON.stringify(holder));
      } finally {
        await file.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const other = await holderOf(p.port);
      if (other?.containerId === holder.containerId) break;
      if (attempt === 0 && (!other || !(await alive(other.netns)))) {
        await rm(p.port, { force: true }); // a sandbox that ended without DEL
        continue;
      }
      throw new CniError(
        CniErrorCode.TRY_AGAIN_LATER,
        `port ${portId} is plugged on this node for container ${other?.containerId ?? '?'} (pod uid ${other?.podUid ?? '?'}): ` +
          'it is given to this pod only once that sandbox is gone',
      );
    }
  }
  await writeFile(p.container, portId, { mode: 0o600 });
}

/** DEL (or a failed ADD): the container's port is free on this node again. Never fails on what is already gone. */
export async function releasePorts(dir: string, containerId: string): Promise<void> {
  let p;
  try {
    p = paths(dir, undefined, containerId);
  } catch {
    return; // no file was ever made under such a name
  }
  const portId = (await readFile(p.container, 'utf8').catch(() => '')).trim();
  if (portId && UUID.test(portId)) {
    const file = join(dir, 'ports', portId.toLowerCase());
    if ((await holderOf(file))?.containerId === containerId) await rm(file, { force: true });
  }
  await rm(p.container, { force: true }).catch((err: unknown) => {
    throw new CniError(CniErrorCode.IO_FAILURE, `removing ${p.container}: ${errorMessage(err)}`);
  });
}
