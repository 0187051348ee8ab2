#!/usr/bin/env bash
# npm run test:dataplane — Raven, raven-cni and the real Neutron dataplane, with real packets (test/dataplane). Root
# only. Installs what is missing, starts the rig
# (scripts/dataplane/rig.sh) unless one already runs, runs the tests one file at a time (one CPU-bound Neutron), then
# stops exactly what it started and checks that the root namespace holds nothing the rig or the tests made: no
# qrouter namespace, brq/tap/vxlan device, neutron chain or ipset, and no pod namespace (`raven-pod-*`).
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(id -u) -eq 0 ]] || { echo "test:dataplane: needs root (network namespaces, the Neutron agents)" >&2; exit 1; }
rig=scripts/dataplane/rig.sh
state=${RAVEN_DATAPLANE_STATE:-$PWD/.raven/dataplane}

started=0
finish() {
  local rc=$?
  if [[ $started == 1 ]]; then
    bash "$rig" stop || rc=1
    bash "$rig" leftovers || rc=1
  fi
  local pods
  pods=$(ip netns list | awk '$1 ~ /^raven-pod-/ { print $1 }')
  if [[ -n $pods ]]; then
    echo "test:dataplane: pod namespaces left behind: $pods" >&2
    rc=1
  fi
  exit $rc
}
trap finish EXIT

if bash "$rig" status 2>/dev/null | grep -q 'Linux_bridge_agent=alive' &&
  bash "$rig" status 2>/dev/null | grep -q 'L3_agent=alive'; then
  echo "test:dataplane: using the rig already running ($state)"
else
  bash "$rig" install
  started=1
  bash "$rig" start
fi

RAVEN_DATAPLANE_ENV="$state/env" node --import tsx --import ./test/support/exit-watch.ts --test --test-timeout=900000 --test-concurrency=1 $(find test/dataplane -name '*.test.ts' | sort)
