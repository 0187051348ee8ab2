/**
 * The protobuf message tables (packages/apiserver/src/protobuf/schema/) against the API's published descriptors, as real
 * kubectl builds carry them: the tables are exactly what scripts/proto-schema.ts makes from kubectl 1.33, and every
 * field kubectl 1.20 knew that is still there has the same number and cardinality (field numbers are the wire
 * contract; proto field names are not, and some changed). A build that is
 * absent is skipped, and the test says so.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { FieldDescriptorProto_Label } from '@bufbuild/protobuf/wkt';
import { describe, it } from '../support/node-test.ts';
import { allMessages, messageSchema, messageTokens } from '@raven/apiserver/protobuf/index.ts';
import { packages, readDescriptors, tables } from '../../scripts/proto-schema.ts';
import { kubectlPath } from '../support/server.ts';

const kubectl133 = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';

describe('protobuf message tables against the descriptors in kubectl builds', () => {
  it('are what kubectl 1.33 describes (regenerate with scripts/proto-schema.ts)', (t) => {
    if (!existsSync(kubectl133)) return t.skip(`${kubectl133} is absent`);
    const generated = tables(readDescriptors(kubectl133));
    let count = 0;
    for (const [pkg, messages] of generated) {
      for (const [name, tokens] of messages) {
        assert.deepEqual(messageTokens(`${pkg}.${name}`), tokens, `${pkg}.${name}`);
        count++;
      }
    }
    assert.equal(count, allMessages().length, 'the tables hold messages kubectl 1.33 does not describe');
  });

  it('keep the field numbers kubectl 1.20 knew', (t) => {
    if (!existsSync(kubectlPath)) return t.skip(`${kubectlPath} is absent (npm run kubectl:fetch)`);
    const files = readDescriptors(kubectlPath);
    let checked = 0;
    for (const [protoPkg, short] of Object.entries(packages)) {
      for (const msg of files.get(protoPkg)?.messageType ?? []) {
        const schema = messageSchema(`${short}.${msg.name}`);
        if (!schema) continue;
        for (const field of msg.field) {
          const ours = schema.byNumber.get(field.number);
          // A field removed since (ObjectMeta.clusterName) is fine while its number is not reused.
          if (!ours) continue;
          assert.equal(
            ours.repeated || ours.map !== undefined,
            field.label === FieldDescriptorProto_Label.REPEATED,
            `${short}.${msg.name}.${field.name}`,
          );
          checked++;
        }
      }
    }
    assert.ok(checked > 800, `${checked} fields checked`);
  });
});
