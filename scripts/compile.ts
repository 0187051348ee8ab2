import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const project = fileURLToPath(new URL('../tsconfig.build.json', import.meta.url));

/**
 * Compiles `src/` (and the OpenStack simulator) without tests into `outDir` with tsc (`tsconfig.build.json`: `.ts`
 * imports become `.js`): `outDir/src/`, the compiled runtime the benchmarks load in-process. `typeCheck: false` only emits (tsc's `--noCheck`), for
 * tests that have `npm run typecheck` beside them.
 */
export async function compileRaven(outDir: string, { typeCheck = true }: { typeCheck?: boolean } = {}): Promise<void> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const args = [tsc, '-p', project, '--outDir', outDir, ...(typeCheck ? [] : ['--noCheck'])];
  const code = await new Promise<number | null>((resolve, reject) => {
    spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] })
      .on('error', reject)
      .on('exit', resolve);
  });
  if (code !== 0) throw new Error(`tsc -p tsconfig.build.json exited with ${code}`);
}
