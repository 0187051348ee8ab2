#!/usr/bin/env bash
# npm run test:openstack — the OpenStack contract suite and Raven's end-to-end subset against REAL Keystone, Neutron
# and Octavia (Debian packages, on 127.0.0.1): installs what is missing, starts both auth modes with
# real-openstack.sh, runs every test/contract/openstack test, the end-to-end tests in test/real (the daemon, `raven
# plan` and `raven gc` against the real Neutron) and the ServiceReconciler's real-Octavia lifecycle
# (src/reconcilers/service/real.test.ts) once with Keystone password auth and once with noauth, and stops exactly
# what it started. If the services already run in mode "both" (a developer's `npm run openstack:start`), it uses
# them and leaves them running. Every one of these tests is skipped unless RAVEN_OPENSTACK_TARGET=real.
set -euo pipefail
cd "$(dirname "$0")/../.."
script=scripts/openstack/real-openstack.sh
state="${RAVEN_OPENSTACK_STATE:-$PWD/.raven/openstack}"

started=0
status=$(bash "$script" status || true)
if grep -q 'auth mode: both' <<<"$status" && ! grep -q DEAD <<<"$status"; then
  echo "test:openstack: using the services already running ($state)"
else
  bash "$script" install
  started=1
  trap 'bash "$script" stop' EXIT
  bash "$script" start --auth both
fi

tests="$(find test/contract/openstack -name '*.test.ts' | sort) $(find test/real -name '*.test.ts' | sort) src/reconcilers/service/real.test.ts"
rc=0
for auth in keystone noauth; do
  echo "test:openstack: contract suite and end-to-end subset against real OpenStack, auth $auth"
  # One file at a time: the tests share one small Neutron, which is CPU-bound (docs/openstack.md, "Neutron").
  RAVEN_OPENSTACK_TARGET=real RAVEN_OPENSTACK_AUTH=$auth RAVEN_OPENSTACK_CLOUDS="$state/clouds.yaml" \
    node --import tsx --import ./test/support/exit-watch.ts --test --test-timeout=900000 --test-concurrency=1 $tests || rc=$?
done
[[ $started == 1 ]] || echo "test:openstack: the services keep running (npm run openstack:stop)"
exit $rc
