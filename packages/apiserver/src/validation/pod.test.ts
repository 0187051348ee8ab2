import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { deepFreeze } from '../../../../src/core/index.ts';
import { validatePod } from './pod.ts';
import { POD_UPDATE_FORBIDDEN_MESSAGE } from './pod-update.ts';

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

function pod(spec: Record<string, unknown>): KubeObject {
  return deepFreeze({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default' }, spec });
}

const good = {
  restartPolicy: 'Always',
  terminationGracePeriodSeconds: 30,
  nodeName: 'node-1',
  containers: [
    {
      name: 'web',
      image: 'nginx:1.25',
      ports: [
        { name: 'http', containerPort: 80, protocol: 'TCP' },
        { containerPort: 53, protocol: 'UDP' },
      ],
    },
    { name: 'sidecar', image: 'busybox' },
  ],
  initContainers: [{ name: 'init', image: 'busybox' }],
  tolerations: [{ key: 'a', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }],
};

describe('validatePod (create)', () => {
  it('accepts a well-formed pod', () => {
    assert.deepEqual(validatePod(pod(good)), []);
  });

  it('requires containers', () => {
    assert.deepEqual(validatePod(pod({})), [
      { reason: 'FieldValueRequired', field: 'spec.containers', message: 'Required value' },
    ]);
    assert.deepEqual(validatePod(pod({ containers: [] })), [
      { reason: 'FieldValueRequired', field: 'spec.containers', message: 'Required value' },
    ]);
  });

  it('checks container names and images', () => {
    const causes = validatePod(
      pod({
        containers: [
          { image: 'a' },
          { name: 'Web', image: 'a' },
          { name: 'x', image: '' },
          { name: 'x', image: ' nginx' },
        ],
        initContainers: [{ name: 'x', image: 'b' }],
      }),
    );
    assert.deepEqual(causes, [
      { reason: 'FieldValueRequired', field: 'spec.containers[0].name', message: 'Required value' },
      { reason: 'FieldValueInvalid', field: 'spec.containers[1].name', message: `Invalid value: "Web": ${LABEL_MSG}` },
      { reason: 'FieldValueRequired', field: 'spec.containers[2].image', message: 'Required value' },
      { reason: 'FieldValueDuplicate', field: 'spec.containers[3].name', message: 'Duplicate value: "x"' },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.containers[3].image',
        message: 'Invalid value: " nginx": must not have leading or trailing whitespace',
      },
      { reason: 'FieldValueDuplicate', field: 'spec.initContainers[0].name', message: 'Duplicate value: "x"' },
    ]);
  });

  it('checks container ports', () => {
    const causes = validatePod(
      pod({
        containers: [
          {
            name: 'c',
            image: 'i',
            ports: [
              { containerPort: 0 },
              { containerPort: 70000, protocol: 'ICMP' },
              { name: 'http', containerPort: 80, hostPort: 99999 },
              { name: 'http', containerPort: 81, protocol: '' },
              { name: 'Http', containerPort: 82 },
            ],
          },
        ],
      }),
    );
    assert.deepEqual(causes, [
      { reason: 'FieldValueRequired', field: 'spec.containers[0].ports[0].containerPort', message: 'Required value' },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.containers[0].ports[1].containerPort',
        message: 'Invalid value: 70000: must be between 1 and 65535, inclusive',
      },
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.containers[0].ports[1].protocol',
        message: 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.containers[0].ports[2].hostPort',
        message: 'Invalid value: 99999: must be between 1 and 65535, inclusive',
      },
      { reason: 'FieldValueDuplicate', field: 'spec.containers[0].ports[3].name', message: 'Duplicate value: "http"' },
      { reason: 'FieldValueRequired', field: 'spec.containers[0].ports[3].protocol', message: 'Required value' },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.containers[0].ports[4].name',
        message: 'Invalid value: "Http": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      },
    ]);
  });

  it('checks restartPolicy and activeDeadlineSeconds', () => {
    const c = [{ name: 'c', image: 'i' }];
    assert.deepEqual(validatePod(pod({ containers: c, restartPolicy: 'Sometimes' })), [
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.restartPolicy',
        message: 'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      },
    ]);
    assert.deepEqual(validatePod(pod({ containers: c, restartPolicy: '' })), [
      { reason: 'FieldValueRequired', field: 'spec.restartPolicy', message: 'Required value' },
    ]);
    for (const ok of ['Always', 'OnFailure', 'Never'])
      assert.deepEqual(validatePod(pod({ containers: c, restartPolicy: ok })), []);
    assert.deepEqual(validatePod(pod({ containers: c, activeDeadlineSeconds: 0 })), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.activeDeadlineSeconds',
        message: 'Invalid value: 0: must be between 1 and 2147483647, inclusive',
      },
    ]);
  });

  it('survives malformed JSON', () => {
    assert.deepEqual(validatePod(pod({ containers: 'nope' })), [
      { reason: 'FieldValueRequired', field: 'spec.containers', message: 'Required value' },
    ]);
    assert.deepEqual(
      validatePod(pod({ containers: [null] })).map((c) => c.field),
      ['spec.containers[0].name', 'spec.containers[0].image'],
    );
  });
});

describe('validatePod (update)', () => {
  const old = pod(good);
  const update = (change: (spec: typeof good) => void): KubeObject => {
    const spec = structuredClone(good);
    change(spec);
    return pod(spec);
  };

  it('allows image changes and a no-op update', () => {
    assert.deepEqual(validatePod(pod(good), old), []);
    const next = update((s) => {
      s.containers[0]!.image = 'nginx:1.26';
      s.initContainers[0]!.image = 'alpine';
    });
    assert.deepEqual(validatePod(next, old), []);
  });

  it('treats absent and empty values alike', () => {
    const next = update((s) => {
      (s as Record<string, unknown>).hostNetwork = false;
      (s as Record<string, unknown>).volumes = [];
    });
    assert.deepEqual(validatePod(next, old), []);
  });

  it('forbids other spec changes with the upstream message and a summary', () => {
    const next = update((s) => {
      s.nodeName = 'node-2';
      s.containers[0]!.ports![0]!.containerPort = 8080;
    });
    assert.deepEqual(validatePod(next, old), [
      {
        reason: 'FieldValueForbidden',
        field: 'spec',
        message: `Forbidden: ${POD_UPDATE_FORBIDDEN_MESSAGE}\n  spec.nodeName: "node-1" -> "node-2"\n  spec.containers[0].ports[0].containerPort: 80 -> 8080`,
      },
    ]);
    assert.ok(
      POD_UPDATE_FORBIDDEN_MESSAGE.startsWith(
        'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) or `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
      ),
    );
  });

  it('forbids adding or removing containers', () => {
    const next = update((s) => s.containers.pop());
    assert.deepEqual(validatePod(next, old), [
      {
        reason: 'FieldValueForbidden',
        field: 'spec.containers',
        message: 'Forbidden: pod updates may not add or remove containers',
      },
    ]);
  });

  it('lets tolerations only be added to (tolerationSeconds may change)', () => {
    const added = update((s) =>
      s.tolerations.push({ key: 'b', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 0 }),
    );
    assert.deepEqual(validatePod(added, old), []);
    const seconds = update((s) => {
      s.tolerations[0]!.tolerationSeconds = 60;
    });
    assert.deepEqual(validatePod(seconds, old), []);
    const changed = update((s) => {
      s.tolerations[0]!.effect = 'NoSchedule';
    });
    assert.deepEqual(validatePod(changed, old), [
      {
        reason: 'FieldValueForbidden',
        field: 'spec.tolerations',
        message: 'Forbidden: existing toleration can not be modified except its tolerationSeconds',
      },
    ]);
  });

  it('lets activeDeadlineSeconds be set or lowered, never raised or unset', () => {
    const withDeadline = pod({ ...good, activeDeadlineSeconds: 100 });
    assert.deepEqual(validatePod(pod({ ...good, activeDeadlineSeconds: 100 }), old), []);
    assert.deepEqual(validatePod(pod({ ...good, activeDeadlineSeconds: 50 }), withDeadline), []);
    assert.deepEqual(validatePod(pod({ ...good, activeDeadlineSeconds: 200 }), withDeadline), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.activeDeadlineSeconds',
        message: 'Invalid value: 200: must be less than or equal to previous value',
      },
    ]);
    assert.deepEqual(validatePod(pod(good), withDeadline), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.activeDeadlineSeconds',
        message: 'Invalid value: null: must not update from a positive integer to nil value',
      },
    ]);
  });

  it('lets a negative terminationGracePeriodSeconds become 1 and nothing else', () => {
    const negative = pod({ ...good, terminationGracePeriodSeconds: -1 });
    assert.deepEqual(validatePod(pod({ ...good, terminationGracePeriodSeconds: 1 }), negative), []);
    const causes = validatePod(pod({ ...good, terminationGracePeriodSeconds: 10 }), old);
    assert.equal(causes.length, 1);
    assert.equal(causes[0]?.field, 'spec');
    assert.ok(causes[0]?.message.endsWith('\n  spec.terminationGracePeriodSeconds: 30 -> 10'));
  });

  it('still applies the create rules to the new spec', () => {
    const next = update((s) => {
      s.containers[0]!.image = '';
    });
    assert.deepEqual(validatePod(next, old), [
      { reason: 'FieldValueRequired', field: 'spec.containers[0].image', message: 'Required value' },
    ]);
  });
});
