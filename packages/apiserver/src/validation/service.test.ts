import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { deepFreeze } from '../../../../src/core/index.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { validateService } from './service.ts';

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_WHOLE_MSG =
  "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";

function svc(spec: Record<string, unknown>): KubeObject {
  return deepFreeze({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec });
}

const port = (p: Record<string, unknown>): Record<string, unknown> => ({
  protocol: 'TCP',
  port: 80,
  targetPort: 8080,
  ...p,
});

describe('validateService (create)', () => {
  it('accepts common services', () => {
    assert.deepEqual(validateService(svc({ type: 'ClusterIP', selector: { app: 'web' }, ports: [port({})] })), []);
    assert.deepEqual(
      validateService(
        svc({ ports: [port({ name: 'http' }), port({ name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' })] }),
      ),
      [],
    );
    assert.deepEqual(validateService(svc({ clusterIP: 'None', selector: { app: 'db' } })), []);
    assert.deepEqual(validateService(svc({ type: 'ExternalName', externalName: 'db.example.com.' })), []);
    assert.deepEqual(
      validateService(
        svc({
          type: 'NodePort',
          ports: [port({ nodePort: 30080 })],
          clusterIP: '10.96.0.10',
          clusterIPs: ['10.96.0.10'],
        }),
      ),
      [],
    );
    assert.deepEqual(validateService(svc({ type: 'LoadBalancer', ports: [port({})], clusterIP: 'fd00::a' })), []);
    // Same port number on two protocols is fine.
    assert.deepEqual(
      validateService(svc({ ports: [port({ name: 'a', port: 53 }), port({ name: 'b', port: 53, protocol: 'UDP' })] })),
      [],
    );
  });

  it('requires ports unless headless or ExternalName', () => {
    assert.deepEqual(validateService(svc({ selector: { app: 'web' } })), [
      { reason: 'FieldValueRequired', field: 'spec.ports', message: 'Required value' },
    ]);
  });

  it('checks each port', () => {
    const causes = validateService(
      svc({
        ports: [
          { port: 0, protocol: 'ICMP', targetPort: 0 },
          port({ name: 'Http', targetPort: '8080' }),
          port({ name: 'a', port: 81, appProtocol: 'a/b/c' }),
          port({ name: 'a', port: 82 }),
        ],
      }),
    );
    assert.deepEqual(
      causes.map((c) => [c.field, c.message]),
      [
        ['spec.ports[0].name', 'Required value'],
        ['spec.ports[0].port', 'Invalid value: 0: must be between 1 and 65535, inclusive'],
        ['spec.ports[0].protocol', 'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'],
        ['spec.ports[0].targetPort', 'Invalid value: 0: must be between 1 and 65535, inclusive'],
        ['spec.ports[1].name', `Invalid value: "Http": ${LABEL_MSG}`],
        ['spec.ports[1].targetPort', 'Invalid value: "8080": must contain at least one letter (a-z)'],
        ['spec.ports[2].appProtocol', `Invalid value: "a/b/c": ${QUALIFIED_WHOLE_MSG}`],
        ['spec.ports[3].name', 'Duplicate value: "a"'],
      ],
    );
  });

  it('reports a duplicate (protocol, port) pair as upstream prints it', () => {
    assert.deepEqual(validateService(svc({ ports: [port({ name: 'a' }), port({ name: 'b', targetPort: 9090 })] })), [
      {
        reason: 'FieldValueDuplicate',
        field: 'spec.ports[1]',
        message:
          'Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
      },
    ]);
  });

  it('checks the type and sessionAffinity', () => {
    assert.deepEqual(validateService(svc({ type: 'Magic', ports: [port({})], sessionAffinity: 'Sticky' })), [
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.sessionAffinity',
        message: 'Unsupported value: "Sticky": supported values: "ClientIP", "None"',
      },
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.type',
        message:
          'Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
      },
    ]);
  });

  it('checks node ports', () => {
    assert.deepEqual(validateService(svc({ type: 'ClusterIP', ports: [port({ nodePort: 30080 })] })), [
      {
        reason: 'FieldValueForbidden',
        field: 'spec.ports[0].nodePort',
        message: "Forbidden: may not be used when `type` is 'ClusterIP'",
      },
    ]);
    assert.deepEqual(
      validateService(
        svc({
          type: 'NodePort',
          ports: [port({ name: 'a', nodePort: 30080 }), port({ name: 'b', port: 81, nodePort: 30080 })],
        }),
      ),
      [{ reason: 'FieldValueDuplicate', field: 'spec.ports[1].nodePort', message: 'Duplicate value: 30080' }],
    );
    assert.deepEqual(validateService(svc({ type: 'LoadBalancer', ports: [port({ port: 10250 })] })), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.ports[0]',
        message: 'Invalid value: 10250: may not expose port 10250 externally since it is used by kubelet',
      },
    ]);
  });

  it('checks cluster IPs', () => {
    assert.deepEqual(validateService(svc({ type: 'NodePort', clusterIP: 'None', ports: [port({})] })), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.clusterIPs[0]',
        message: `Invalid value: "None": may not be set to 'None' for NodePort services`,
      },
    ]);
    assert.deepEqual(validateService(svc({ type: 'LoadBalancer', clusterIPs: ['None'], ports: [port({})] })), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.clusterIPs[0]',
        message: `Invalid value: "None": may not be set to 'None' for LoadBalancer services`,
      },
    ]);
    assert.deepEqual(validateService(svc({ clusterIP: '10.0.0.300', ports: [port({})] })), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.clusterIPs[0]',
        message: 'Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      },
    ]);
    assert.deepEqual(validateService(svc({ clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.2'], ports: [port({})] })), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.clusterIPs',
        message: 'Invalid value: []string{"10.0.0.2"}: first value must match `clusterIP`',
      },
    ]);
  });

  it('checks ExternalName services', () => {
    assert.deepEqual(validateService(svc({ type: 'ExternalName' })), [
      { reason: 'FieldValueRequired', field: 'spec.externalName', message: 'Required value' },
    ]);
    assert.deepEqual(
      validateService(
        svc({
          type: 'ExternalName',
          externalName: 'db',
          clusterIP: '10.0.0.1',
          ipFamilies: ['IPv4'],
          ipFamilyPolicy: 'SingleStack',
        }),
      ),
      [
        {
          reason: 'FieldValueForbidden',
          field: 'spec.clusterIPs',
          message: 'Forbidden: may not be set for ExternalName services',
        },
        {
          reason: 'FieldValueForbidden',
          field: 'spec.ipFamilies',
          message: 'Forbidden: may not be set for ExternalName services',
        },
        {
          reason: 'FieldValueForbidden',
          field: 'spec.ipFamilyPolicy',
          message: 'Forbidden: may not be set for ExternalName services',
        },
      ],
    );
    assert.equal(
      validateService(svc({ type: 'ExternalName', externalName: 'Bad_Name' }))[0]?.field,
      'spec.externalName',
    );
  });

  it('checks the selector as labels', () => {
    assert.deepEqual(
      validateService(svc({ ports: [port({})], selector: { app: '-x' } })).map((c) => c.field),
      ['spec.selector'],
    );
  });
});

describe('validateService (update)', () => {
  const stored = svc({ type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [port({})] });

  it('keeps the primary cluster IP fixed', () => {
    assert.deepEqual(validateService(stored, stored), []);
    assert.deepEqual(
      validateService(svc({ clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.11'], ports: [port({})] }), stored),
      [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.clusterIPs[0]',
          message: 'Invalid value: "10.96.0.11": may not change once set',
        },
      ],
    );
    assert.deepEqual(validateService(svc({ clusterIP: 'None', clusterIPs: ['None'], ports: [port({})] }), stored), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.clusterIPs[0]',
        message: 'Invalid value: "None": may not change once set',
      },
    ]);
  });

  it('reports a change made only to clusterIP as a change, not a mismatch', () => {
    assert.deepEqual(
      validateService(svc({ clusterIP: '10.96.0.12', clusterIPs: ['10.96.0.10'], ports: [port({})] }), stored),
      [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.clusterIPs[0]',
          message: 'Invalid value: "10.96.0.12": may not change once set',
        },
      ],
    );
  });

  it('accepts an update that leaves the cluster IP out (the server keeps it)', () => {
    assert.deepEqual(validateService(svc({ ports: [port({})] }), stored), []);
  });

  it('lets a service become or stop being ExternalName', () => {
    assert.deepEqual(validateService(svc({ type: 'ExternalName', externalName: 'db.example.com' }), stored), []);
    const external = svc({ type: 'ExternalName', externalName: 'db.example.com' });
    assert.deepEqual(validateService(svc({ clusterIP: '10.96.0.20', ports: [port({})] }), external), []);
  });

  it('IP families: known policy and families, each once, one cluster IP per family, each of its family', () => {
    const fields = (spec: Record<string, unknown>) =>
      validateService(svc({ ports: [{ port: 80 }], ...spec })).map((c) => `${c.field}: ${c.message}`);
    assert.deepEqual(fields({ ipFamilyPolicy: 'DualStack', ipFamilies: ['IPv4', 'IPv4'] }), [
      'spec.ipFamilyPolicy: Unsupported value: "DualStack": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"',
      'spec.ipFamilies[1]: Duplicate value: "IPv4"',
    ]);
    assert.deepEqual(fields({ clusterIPs: ['10.0.0.1', '10.0.0.2'], ipFamilyPolicy: 'RequireDualStack' }), [
      'spec.clusterIPs: Invalid value: []string{"10.0.0.1", "10.0.0.2"}: may specify no more than one IP for each IP family',
    ]);
    assert.deepEqual(fields({ clusterIPs: ['10.0.0.1'], ipFamilies: ['IPv6'] }), [
      'spec.clusterIPs[0]: Invalid value: "10.0.0.1": expected an IPv6 value as indicated by `ipFamilies[0]`',
    ]);
    assert.deepEqual(
      fields({ clusterIPs: ['10.0.0.1', 'fd00::1'], ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'PreferDualStack' }),
      [],
    );
  });
});
