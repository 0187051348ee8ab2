import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { PortsApi } from './ports.ts';
import { listQuery, nextMarker, seg, untilAborted, walkPages, type Page } from './query.ts';
import { NeutronTransport } from './resource.ts';
import type { OpenStackSession } from '../session.ts';

describe('listQuery', () => {
  it('passes scalar filters, repeats array filters and drops undefined ones', () => {
    assert.deepEqual(
      listQuery({ name: 'a', device_id: ['x', 'y'], admin_state_up: true, mtu: 1450, status: undefined }),
      {
        name: 'a',
        device_id: ['x', 'y'],
        admin_state_up: 'true',
        mtu: 1450,
      },
    );
  });

  it('comma-joins the tag filters', () => {
    assert.deepEqual(
      listQuery({ tags: ['a', 'b=c'], 'tags-any': 'x', 'not-tags': ['n'], 'not-tags-any': ['p', 'q'] }),
      {
        tags: 'a,b=c',
        'tags-any': 'x',
        'not-tags': 'n',
        'not-tags-any': 'p,q',
      },
    );
  });

  it('adds fields, sort keys with a direction each, and limit', () => {
    assert.deepEqual(listQuery({}, { fields: ['id', 'name'], sortKey: ['name', 'id'], sortDir: 'desc', limit: 5 }), {
      fields: ['id', 'name'],
      sort_key: ['name', 'id'],
      sort_dir: ['desc', 'asc'],
      limit: 5,
    });
    assert.deepEqual(listQuery(undefined, { sortKey: 'name' }), { sort_key: ['name'], sort_dir: ['asc'] });
    assert.deepEqual(listQuery(undefined, { fields: [] }), {});
  });

  it('rejects what Neutron would misread', () => {
    assert.throws(() => listQuery({}, { limit: 0 }), RangeError);
    assert.throws(() => listQuery({}, { limit: 1.5 }), RangeError);
    assert.throws(() => listQuery({}, { sortDir: 'asc' }), TypeError);
    assert.throws(() => listQuery({}, { sortKey: 'a', sortDir: ['asc', 'desc'] }), TypeError);
    assert.throws(() => listQuery({ fixed_ips: { ip_address: '10.0.0.1' } }), TypeError);
  });

  it('spells port fixed_ips filters as key=value pairs', () => {
    class Probe extends PortsApi {
      encode(f: Parameters<PortsApi['list']>[0]): object | undefined {
        return this.encodeFilters(f);
      }
    }
    const probe = new Probe(new NeutronTransport({} as OpenStackSession), undefined as never, () =>
      Promise.resolve(false),
    );
    assert.deepEqual(listQuery(probe.encode({ fixed_ips: { ip_address: '10.0.0.5' }, name: 'p' })), {
      fixed_ips: ['ip_address=10.0.0.5'],
      name: 'p',
    });
    assert.deepEqual(
      listQuery(
        probe.encode({ fixed_ips: [{ subnet_id: 's', ip_address: '10.0.0.5' }, { ip_address_substr: '10.0' }] }),
      ),
      {
        fixed_ips: ['subnet_id=s', 'ip_address=10.0.0.5', 'ip_address_substr=10.0'],
      },
    );
  });
});

describe('nextMarker', () => {
  const href = 'http://127.0.0.1:19696/v2.0/ports?limit=2&sort_key=name&fields=id&marker=';
  it('reads the marker of the next link', () => {
    const body = {
      ports: [],
      ports_links: [
        { rel: 'next', href: `${href}bbb` },
        { rel: 'previous', href: `${href}aaa&page_reverse=True` },
      ],
    };
    assert.equal(nextMarker(body, 'ports'), 'bbb');
  });

  it('is undefined without links, without a next link, or for another collection', () => {
    assert.equal(nextMarker({ ports: [] }, 'ports'), undefined);
    assert.equal(nextMarker({ ports_links: [{ rel: 'previous', href: `${href}a` }] }, 'ports'), undefined);
    assert.equal(nextMarker({ ports_links: [{ rel: 'next', href: `${href}a` }] }, 'networks'), undefined);
    assert.equal(nextMarker({ ports_links: [{ rel: 'next', href: 'http://x/v2.0/ports' }] }, 'ports'), undefined);
    assert.equal(nextMarker(undefined, 'ports'), undefined);
  });

  it('decodes an escaped marker', () => {
    assert.equal(
      nextMarker(
        { security_groups_links: [{ rel: 'next', href: 'http://x/v2.0/security-groups?marker=a%2Fb' }] },
        'security_groups',
      ),
      'a/b',
    );
  });
});

describe('walkPages', () => {
  /** A fake server: `ids` sorted, pages of `limit`, a next marker whenever a page is full (as Neutron does). */
  function pager(ids: string[], limit: number, seen: (string | undefined)[]) {
    return (marker: string | undefined): Promise<Page<string>> => {
      seen.push(marker);
      const start = marker === undefined ? 0 : ids.indexOf(marker) + 1;
      const items = ids.slice(start, start + limit);
      return Promise.resolve({ items, next: items.length === limit ? items[items.length - 1] : undefined });
    };
  }
  const collect = async <T>(gen: AsyncGenerator<T[]>): Promise<T[][]> => {
    const out: T[][] = [];
    for await (const page of gen) out.push(page);
    return out;
  };

  it('walks every item exactly once, stopping at a short page', async () => {
    const seen: (string | undefined)[] = [];
    const pages = await collect(walkPages(pager(['a', 'b', 'c', 'd', 'e'], 2, seen)));
    assert.deepEqual(pages, [['a', 'b'], ['c', 'd'], ['e']]);
    assert.deepEqual(seen, [undefined, 'b', 'd']);
  });

  it('stops at the empty page after an exactly-full last page, without yielding it', async () => {
    const seen: (string | undefined)[] = [];
    assert.deepEqual(await collect(walkPages(pager(['a', 'b', 'c', 'd'], 2, seen))), [
      ['a', 'b'],
      ['c', 'd'],
    ]);
    assert.deepEqual(seen, [undefined, 'b', 'd']);
    assert.deepEqual(await collect(walkPages(pager([], 2, []))), []);
  });

  it('throws instead of looping when the server repeats a marker', async () => {
    const stuck = (): Promise<Page<string>> => Promise.resolve({ items: ['a'], next: 'a' });
    await assert.rejects(collect(walkPages(stuck)), /repeats marker a/);
  });

  it('fetches lazily: breaking out stops the requests', async () => {
    const seen: (string | undefined)[] = [];
    for await (const page of walkPages(pager(['a', 'b', 'c', 'd', 'e'], 2, seen))) {
      assert.deepEqual(page, ['a', 'b']);
      break;
    }
    assert.deepEqual(seen, [undefined]);
  });
});

describe('untilAborted', () => {
  it('rejects on abort without settling the shared promise', async () => {
    let resolve = (_: string): void => {};
    const shared = new Promise<string>((r) => (resolve = r));
    const ac = new AbortController();
    const waiting = untilAborted(shared, ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(waiting, /stop/);
    resolve('done');
    assert.equal(await untilAborted(shared, new AbortController().signal), 'done');
    assert.equal(await untilAborted(shared, undefined), 'done');
  });
});

describe('seg', () => {
  it('keeps tags readable but cannot leave the path segment', () => {
    assert.equal(seg('k8s-ns=default'), 'k8s-ns=default');
    assert.equal(seg('a:b@c,d'), 'a:b@c,d');
    assert.equal(seg('a/b?c#d%e f+g'), 'a%2Fb%3Fc%23d%25e%20f%2Bg');
  });
});
