import assert from 'node:assert/strict';
import { globMatch } from '../../core/index.ts';
import type { Service } from '../../kube/api/index.ts';
import { OctaviaVersions, providerTraits } from '../../openstack/index.ts';
import { describe, it } from '../../../test/support/node-test.ts';
import { seeded } from '../../../test/support/seeded.ts';
import { ANNOTATIONS, LIMITS, serviceOptions, UNSUPPORTED_ANNOTATIONS } from './options.ts';

const zed = new OctaviaVersions([{ id: 'v2.26', major: 2, minor: 26, status: 'CURRENT' }]);
const policy = {
  floatingNetworks: ['ext-2'],
  defaultFloatingNetworkId: 'ext-1',
  healthMonitor: false,
  provider: providerTraits(undefined),
};
const keys = [...Object.values(ANNOTATIONS), ...Object.keys(UNSUPPORTED_ANNOTATIONS)];
/** Subnet names a floating-subnet glob is matched against: the longest Neutron allows, and ones that nearly match. */
const names = ['a'.repeat(255), `${'ab'.repeat(127)}c`, 'public-v4', '', '*'.repeat(255)];

/**
 * Every annotation parser fed what a hostile namespace user might write: long values, many commas, stars and
 * question marks, numbers at and past their limits. The per-input bound is on work, not time: the glob's steps are
 * counted, and anything else that went super-linear would run past the test's own timeout.
 */
describe(
  'service options fuzz (fixed seed): every value bounded before it is matched or reported',
  { timeout: 60_000 },
  () => {
    it('2,000 hostile Services: capped fields, short messages, glob work within (p+1)(t+2) per subnet name', () => {
      const random = seeded(0x26);
      const int = (max: number) => Math.floor(random() * (max + 1));
      const alphabet = 'a*?*,.-/0123456789:TtrueFALSE v ';
      const value = (): string => {
        const long = random() < 0.1;
        const length = long ? 256 + int(20_000) : int(80);
        const run = alphabet[int(alphabet.length - 1)]!;
        // Long runs of one character are what a backtracking matcher chokes on; mixed text covers the parsers.
        if (random() < 0.3) return run.repeat(length);
        return Array.from({ length }, () => alphabet[int(alphabet.length - 1)]).join('');
      };
      for (let n = 0; n < 2000; n++) {
        const annotations: Record<string, string> = {};
        for (const key of keys) if (random() < 0.4) annotations[key] = value();
        const many = random() < 0.05;
        const ranges = Array.from({ length: many ? 257 + int(2000) : int(4) }, () => (many ? '10.0.0.0/8' : value()));
        const svc: Service = {
          metadata: { name: 'web', namespace: 'shop', uid: 'u1', annotations },
          spec: {
            type: 'LoadBalancer',
            clusterIP: '10.96.0.10',
            loadBalancerSourceRanges: ranges,
            ports: [{ port: 80 }],
          },
        };
        const { options, problems } = serviceOptions(svc, zed, policy);
        const seen = `input ${n}`;
        for (const p of problems)
          assert.ok(p.message.length <= 512, `${seen}: a ${p.message.length}-character message`);
        assert.ok(options.sourceRanges.length <= LIMITS.sourceRanges, seen);
        const subnet = options.floatingSubnet;
        assert.ok((subnet?.name?.length ?? 0) <= LIMITS.name, `${seen}: a ${subnet?.name?.length}-character glob`);
        assert.ok((subnet?.tags?.length ?? 0) <= LIMITS.tags, `${seen}: ${subnet?.tags?.length} tags`);
        if (subnet?.name === undefined) continue;
        for (const name of names) {
          const counter = { steps: 0 };
          globMatch(subnet.name, name, counter);
          assert.ok(counter.steps <= (subnet.name.length + 1) * (name.length + 2), `${seen}: ${counter.steps} steps`);
        }
      }
    });
  },
);
