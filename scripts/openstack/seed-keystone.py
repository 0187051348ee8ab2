#!/usr/bin/python3
"""Seeds Keystone for real-openstack.sh (idempotent): roles, projects, users, catalog.

Usage: seed-keystone.py KEYSTONE_URL SECRET_FILE NEUTRON_URL OCTAVIA_URL OUT_FILE
Talks to the Keystone v3 REST API only (stdlib urllib, Debian's python3). Writes `key=value` lines with the
ids the caller needs (project ids) to OUT_FILE. Never prints the secret.
"""
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

KS, SECRET_FILE, NEUTRON_URL, OCTAVIA_URL, OUT = sys.argv[1:6]
with open(SECRET_FILE, encoding='ascii') as f:
    SECRET = f.read().strip()
REGION = 'RegionOne'
TOKEN = None


def call(method, path, body=None, ok=(200, 201, 204)):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(KS + path, data=data, method=method)
    req.add_header('Content-Type', 'application/json')
    if TOKEN:
        req.add_header('X-Auth-Token', TOKEN)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw = resp.read()
            return resp.status, (json.loads(raw) if raw else None), resp.headers
    except urllib.error.HTTPError as err:
        raw = err.read()
        if err.code in ok:
            return err.code, None, err.headers
        sys.exit(f'seed-keystone: {method} {path} -> {err.code} {raw[:300]!r}')


def find_or_create(collection, key, name, body, query=None):
    q = query or f'name={urllib.parse.quote(name)}'
    _, found, _ = call('GET', f'/v3/{collection}?{q}')
    if found[collection]:
        return found[collection][0]['id']
    _, made, _ = call('POST', f'/v3/{collection}', {key: body})
    return made[key]['id']


def main():
    global TOKEN
    _, _, headers = call('POST', '/v3/auth/tokens', {'auth': {
        'identity': {'methods': ['password'], 'password': {'user': {
            'name': 'admin', 'domain': {'name': 'Default'}, 'password': SECRET}}},
        'scope': {'project': {'name': 'admin', 'domain': {'name': 'Default'}}}}})
    TOKEN = headers['X-Subject-Token']

    roles = {}
    for r in ('admin', 'member', 'reader', 'service', 'load-balancer_member', 'load-balancer_admin'):
        roles[r] = find_or_create('roles', 'role', r, {'name': r})
    projects = {}
    for p, desc in (('admin', 'admin'), ('service', 'service users'), ('demo', 'demo project (member user)')):
        projects[p] = find_or_create('projects', 'project', p,
                                     {'name': p, 'domain_id': 'default', 'description': desc},
                                     query=f'name={p}&domain_id=default')
    users = {}
    for u, proj, user_roles in (('neutron', 'service', ('admin', 'service')),
                                ('octavia', 'service', ('admin', 'service')),
                                ('demo', 'demo', ('member', 'load-balancer_member'))):
        users[u] = find_or_create('users', 'user', u, {
            'name': u, 'domain_id': 'default', 'password': SECRET, 'default_project_id': projects[proj]},
            query=f'name={u}&domain_id=default')
        for r in user_roles:
            call('PUT', f'/v3/projects/{projects[proj]}/users/{users[u]}/roles/{roles[r]}')
    # admin also gets load-balancer_admin (Octavia's admin rules accept role:admin anyway).
    _, admins, _ = call('GET', '/v3/users?name=admin&domain_id=default')
    call('PUT', f"/v3/projects/{projects['admin']}/users/{admins['users'][0]['id']}/roles/{roles['load-balancer_admin']}")

    for stype, sname, url in (('network', 'neutron', NEUTRON_URL), ('load-balancer', 'octavia', OCTAVIA_URL)):
        if not url:
            continue
        sid = find_or_create('services', 'service', sname, {'type': stype, 'name': sname, 'enabled': True},
                             query=f'type={stype}')
        _, eps, _ = call('GET', f'/v3/endpoints?service_id={sid}')
        have = {e['interface']: e for e in eps['endpoints']}
        for iface in ('public', 'internal', 'admin'):
            if iface in have:
                if have[iface]['url'] != url:
                    call('PATCH', f"/v3/endpoints/{have[iface]['id']}", {'endpoint': {'url': url}})
                continue
            call('POST', '/v3/endpoints', {'endpoint': {
                'service_id': sid, 'interface': iface, 'url': url, 'region_id': REGION, 'enabled': True}})

    with open(OUT, 'w', encoding='ascii') as f:
        for p, pid in projects.items():
            f.write(f'project_{p}={pid}\n')
        for u, uid in users.items():
            f.write(f'user_{u}={uid}\n')


if __name__ == '__main__':
    main()
