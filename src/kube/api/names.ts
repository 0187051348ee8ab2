/**
 * Name and key rules, with the error strings of k8s.io/apimachinery/pkg/util/validation (Kubernetes ~1.30 wording).
 * Each function returns the list of problems; an empty list means valid. Lengths are UTF-8 bytes, as Go's `len`.
 */

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';

const encoder = new TextEncoder();

/**
 * Go's `len(s)`: UTF-8 bytes, not UTF-16 units (they differ only for non-ASCII text), for limits upstream counts in
 * bytes.
 */
export function byteLength(value: string): number {
  // eslint-disable-next-line no-control-regex -- the ASCII range starts at NUL on purpose
  return /^[\x00-\x7f]*$/.test(value) ? value.length : encoder.encode(value).length;
}

const anchored = (fmt: string): RegExp => new RegExp(`^${fmt}$`);
const DNS1123_LABEL_RE = anchored(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN_RE = anchored(DNS1123_SUBDOMAIN_FMT);
const DNS1035_LABEL_RE = anchored(DNS1035_LABEL_FMT);
const QUALIFIED_NAME_RE = anchored(QUALIFIED_NAME_FMT);
const LABEL_VALUE_RE = anchored(LABEL_VALUE_FMT);
const CONFIG_MAP_KEY_RE = anchored(CONFIG_MAP_KEY_FMT);

const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Longest DNS-1123 label / DNS-1035 label / label value / qualified-name name part. */
export const DNS1123_LABEL_MAX_LENGTH = 63;
/** Longest DNS-1123 subdomain (most object names) and ConfigMap/Secret key. */
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

/** `must be no more than N characters` (validation.MaxLenError). */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** `must be between LO and HI, inclusive` (validation.InclusiveRangeError). */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/**
 * validation.RegexError: the message, examples and the regex. Go joins examples with `"', " + " or "`, which is why
 * upstream messages carry a double space (`'my-name',  or '123-abc'`); kept verbatim because clients show it.
 */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  const shown = examples.map((e) => `'${e}', `).join(' or ');
  return `${msg} (e.g. ${shown}regex used for validation is '${fmt}')`;
}

/**
 * A DNS-1123 label (namespace names, container names, port names): ≤ 63 lower-case alphanumerics or '-'.
 * @example validateDns1123Label('my-name') // []
 */
export function validateDns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL_FMT,
        'my-name',
        '123-abc',
      ),
    );
  }
  return errs;
}

/**
 * A DNS-1123 subdomain (most object names): ≤ 253 characters, dot-separated DNS-1123 labels.
 * @example validateDns1123Subdomain('example.com') // []
 */
export function validateDns1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

/**
 * A DNS-1035 label (Service names, CRD plural/singular/version names): like a DNS-1123 label but starts with a letter.
 * @example validateDns1035Label('1abc').length // 1
 */
export function validateDns1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1035_LABEL_RE.test(value)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

/**
 * A qualified name (label and annotation keys, finalizers): `[prefix/]name`, the prefix a DNS-1123 subdomain and the
 * name ≤ 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
 * @example validateQualifiedName('example.com/MyName') // []
 */
export function validateQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...validateDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      'a qualified name ' +
        regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc') +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > DNS1123_LABEL_MAX_LENGTH) errs.push(`name part ${maxLenError(DNS1123_LABEL_MAX_LENGTH)}`);
  if (!QUALIFIED_NAME_RE.test(name)) {
    errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

/**
 * A label value: empty, or ≤ 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
 * @example validateLabelValue('') // []
 */
export function validateLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/**
 * A ConfigMap or Secret data key: ≤ 253 of `[-._a-zA-Z0-9]`, and not `.`, `..` or `..`-prefixed (they would escape
 * the volume directory the key becomes a file in).
 */
export function validateConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!CONFIG_MAP_KEY_RE.test(value)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        CONFIG_MAP_KEY_FMT,
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  }
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** An IANA service (port) name: ≤ 15 of `[-a-z0-9]`, at least one letter, no leading/trailing or doubled '-'. */
export function validatePortName(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(value)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(value)) errs.push('must contain at least one letter (a-z)');
  if (value.includes('--')) errs.push('must not contain consecutive hyphens');
  if (value.startsWith('-') || value.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

/** A port number 1..65535. */
export function validatePortNumber(value: number): string[] {
  return Number.isInteger(value) && value >= 1 && value <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}
