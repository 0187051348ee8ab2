import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import {
  byteLength,
  regexError,
  validateConfigMapKey,
  validateDns1035Label,
  validateDns1123Label,
  validateDns1123Subdomain,
  validateLabelValue,
  validatePortName,
  validatePortNumber,
  validateQualifiedName,
} from './names.ts';

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('regexError', () => {
  it('formats examples with the upstream double space', () => {
    assert.equal(regexError('m', 'x'), "m (regex used for validation is 'x')");
    assert.equal(regexError('m', 'x', 'a'), "m (e.g. 'a', regex used for validation is 'x')");
    assert.equal(regexError('m', 'x', 'a', 'b'), "m (e.g. 'a',  or 'b', regex used for validation is 'x')");
  });
});

describe('validateDns1123Label', () => {
  it('accepts labels up to 63 characters', () => {
    for (const ok of ['a', '0', 'my-name', '123-abc', 'a'.repeat(63)])
      assert.deepEqual(validateDns1123Label(ok), [], ok);
  });
  it('rejects bad characters, edges and lengths with upstream messages', () => {
    for (const bad of ['', 'A', 'my_name', '-a', 'a-', 'a.b', 'ü'])
      assert.deepEqual(validateDns1123Label(bad), [LABEL_MSG], bad);
    assert.deepEqual(validateDns1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
    assert.deepEqual(validateDns1123Label('-'.repeat(64)), ['must be no more than 63 characters', LABEL_MSG]);
  });
});

describe('validateDns1123Subdomain', () => {
  it('accepts dotted labels up to 253 characters', () => {
    for (const ok of [
      'example.com',
      'a',
      'a-b.c-d.e',
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
    ]) {
      assert.deepEqual(validateDns1123Subdomain(ok), [], ok);
    }
  });
  it('rejects bad subdomains', () => {
    for (const bad of ['', 'Example.com', 'a..b', '.a', 'a.', 'a_b', 'a.-b'])
      assert.deepEqual(validateDns1123Subdomain(bad), [SUBDOMAIN_MSG], bad);
    assert.deepEqual(validateDns1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters']);
  });
});

describe('validateDns1035Label', () => {
  it('requires a leading letter', () => {
    assert.deepEqual(validateDns1035Label('my-svc'), []);
    assert.deepEqual(validateDns1035Label('1abc'), [DNS1035_MSG]);
    assert.deepEqual(validateDns1035Label('a'.repeat(64)), ['must be no more than 63 characters']);
  });
});

describe('validateQualifiedName', () => {
  it('accepts names with and without a DNS prefix', () => {
    for (const ok of [
      'a',
      'MyName',
      'my.name',
      '123-abc',
      'a_b',
      'example.com/MyName',
      'kubernetes.io/service-name',
      'a/b',
    ]) {
      assert.deepEqual(validateQualifiedName(ok), [], ok);
    }
  });
  it('reports the name part', () => {
    assert.deepEqual(validateQualifiedName(''), ['name part must be non-empty', NAME_PART_MSG]);
    assert.deepEqual(validateQualifiedName('-a'), [NAME_PART_MSG]);
    assert.deepEqual(validateQualifiedName('a'.repeat(64)), ['name part must be no more than 63 characters']);
    assert.deepEqual(validateQualifiedName('example.com/'), ['name part must be non-empty', NAME_PART_MSG]);
  });
  it('reports the prefix part', () => {
    assert.deepEqual(validateQualifiedName('/a'), ['prefix part must be non-empty']);
    assert.deepEqual(validateQualifiedName('Example.com/a'), [`prefix part ${SUBDOMAIN_MSG}`]);
  });
  it('rejects more than one slash with the whole-name message', () => {
    assert.deepEqual(validateQualifiedName('a/b/c'), [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ]);
  });
});

describe('validateLabelValue', () => {
  it('accepts empty and well-formed values', () => {
    for (const ok of ['', 'a', 'MyValue', 'my_value', '12345', 'a.b-c_d', 'x'.repeat(63)])
      assert.deepEqual(validateLabelValue(ok), [], ok);
  });
  it('rejects bad values', () => {
    for (const bad of ['-a', 'a-', 'a b', 'a/b', '_'])
      assert.deepEqual(validateLabelValue(bad), [LABEL_VALUE_MSG], bad);
    assert.deepEqual(validateLabelValue('x'.repeat(64)), ['must be no more than 63 characters']);
  });
  it('counts bytes like Go', () => {
    assert.equal(byteLength('é'.repeat(40)), 80);
    assert.deepEqual(validateLabelValue('é'.repeat(40)), ['must be no more than 63 characters', LABEL_VALUE_MSG]);
  });
});

describe('validateConfigMapKey', () => {
  const msg =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
  it('accepts file-name-like keys', () => {
    for (const ok of ['a', '.env', 'KEY_NAME', 'key-name', 'tls.crt', '.dockerconfigjson'])
      assert.deepEqual(validateConfigMapKey(ok), [], ok);
  });
  it('rejects bad characters and directory escapes', () => {
    assert.deepEqual(validateConfigMapKey('a/b'), [msg]);
    assert.deepEqual(validateConfigMapKey(''), [msg]);
    assert.deepEqual(validateConfigMapKey('.'), ["must not be '.'"]);
    assert.deepEqual(validateConfigMapKey('..'), ["must not be '..'"]);
    assert.deepEqual(validateConfigMapKey('..a'), ["must not start with '..'"]);
    assert.deepEqual(validateConfigMapKey('k'.repeat(254)), ['must be no more than 253 characters']);
  });
});

describe('validatePortName and validatePortNumber', () => {
  it('checks IANA service names', () => {
    assert.deepEqual(validatePortName('http'), []);
    assert.deepEqual(validatePortName('http-alt2'), []);
    assert.deepEqual(validatePortName('8080'), ['must contain at least one letter (a-z)']);
    assert.deepEqual(validatePortName('Http'), [
      'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    ]);
    assert.deepEqual(validatePortName('a--b'), ['must not contain consecutive hyphens']);
    assert.deepEqual(validatePortName('-a'), ['must not begin or end with a hyphen']);
    assert.deepEqual(validatePortName('abcdefghijklmnop'), ['must be no more than 15 characters']);
  });
  it('checks port numbers', () => {
    assert.deepEqual(validatePortNumber(1), []);
    assert.deepEqual(validatePortNumber(65535), []);
    for (const bad of [0, 65536, -1, 1.5, NaN])
      assert.deepEqual(validatePortNumber(bad), ['must be between 1 and 65535, inclusive'], String(bad));
  });
});
