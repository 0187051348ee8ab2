import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { ApiError } from './errors.ts';
import { inputFormat, negotiateOutput } from './negotiate.ts';

const builtin = { protobuf: true, table: true };
const custom = { protobuf: false, table: true };

function status(fn: () => unknown): { code: number; reason: string; message: string } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return { code: err.status.code, reason: err.status.reason ?? '', message: err.status.message ?? '' };
  }
  assert.fail('no error');
}

describe('content negotiation (as kube-apiserver negotiates)', () => {
  it('answers what kubectl and client-go ask for', () => {
    const table =
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    assert.deepEqual(negotiateOutput(table, builtin), { format: 'json', table: true });
    assert.deepEqual(negotiateOutput('application/vnd.kubernetes.protobuf,application/json', builtin), {
      format: 'protobuf',
      table: false,
    });
    assert.deepEqual(negotiateOutput(null, builtin), { format: 'json', table: false });
    assert.deepEqual(negotiateOutput('*/*', builtin), { format: 'json', table: false });
    assert.deepEqual(negotiateOutput('application/yaml', builtin), { format: 'yaml', table: false });
  });

  it('has no protobuf Table and no protobuf custom resources: the next clause answers, else 406', () => {
    assert.deepEqual(
      negotiateOutput('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json', builtin),
      { format: 'json', table: false },
    );
    assert.deepEqual(negotiateOutput('application/vnd.kubernetes.protobuf,application/json', custom), {
      format: 'json',
      table: false,
    });
    assert.deepEqual(
      status(() => negotiateOutput('application/vnd.kubernetes.protobuf', custom)),
      {
        code: 406,
        reason: 'NotAcceptable',
        message:
          'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
      },
    );
    assert.equal(status(() => negotiateOutput('text/html', builtin)).code, 406);
  });

  it('orders clauses by q, and watches need a stream form', () => {
    assert.equal(
      negotiateOutput('application/json;q=0.5,application/vnd.kubernetes.protobuf', builtin).format,
      'protobuf',
    );
    assert.equal(
      negotiateOutput('application/vnd.kubernetes.protobuf;stream=watch', { ...builtin, stream: true }).format,
      'protobuf',
    );
    assert.equal(
      status(() => negotiateOutput('application/yaml;stream=watch', { ...builtin, stream: true })).code,
      406,
    );
  });

  it('takes protobuf bodies only for kinds that have them (415 otherwise, naming the accepted types)', () => {
    assert.equal(inputFormat('application/vnd.kubernetes.protobuf', true), 'protobuf');
    assert.equal(inputFormat(null, true), 'json');
    assert.equal(inputFormat('application/yaml', false), 'yaml');
    assert.deepEqual(
      status(() => inputFormat('application/vnd.kubernetes.protobuf', false)),
      {
        code: 415,
        reason: 'UnsupportedMediaType',
        message:
          'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
      },
    );
  });
});
