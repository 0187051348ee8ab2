import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import { buildCli } from './cli.ts';

// The product's command line alone, as the image has it (packages/dev/src/cli.test.ts tests it with the development
// tools' commands added).
describe("the product's raven command line", () => {
  it('shows run, node, plan and gc; dev, sim and apiserver are hidden and say where they are', async () => {
    const program = buildCli();
    const shown = program
      .createHelp()
      .visibleCommands(program)
      .map((c) => c.name())
      .filter((name) => name !== 'help');
    assert.deepEqual(shown.sort(), ['gc', 'node', 'plan', 'run']);
    assert.doesNotMatch(program.helpInformation(), /\b(dev|sim|apiserver)\b/);
    for (const name of ['dev', 'sim', 'apiserver']) {
      await assert.rejects(buildCli().exitOverride().parseAsync(['node', 'raven', name, 'openstack', '--port', '0']), {
        code: 'DEV_TOOLS_ABSENT',
        message: `raven ${name} is part of the development tools: run it from a source checkout (npm ci && npm run build)`,
      });
    }
  });
});
