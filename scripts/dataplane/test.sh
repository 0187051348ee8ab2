#!/usr/bin/env bash
# npm run test:dataplane — Raven, raven-cni and a real Neutron dataplane, with real packets (test/dataplane). Root
# only. For each backend in turn (RAVEN_DATAPLANE_BACKENDS, default "linuxbridge ovn"): installs what is missing,
# starts the rig (scripts/dataplane/rig.sh --backend …) unless one already runs, runs the tests one file at a time
# (one CPU-bound Neutron) — on a rig with Octavia (ovn) also the OVN provider's contract test against it — then stops
# exactly what it started and checks that the root namespace holds nothing the rig or the tests made: for linuxbridge
# no qrouter namespace, brq/tap/vxlan device, neutron chain or ipset, and no pod namespace (`raven-pod-*`); for OVN no
# rvo- namespace or device and no rig daemon.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(id -u) -eq 0 ]] || { echo "test:dataplane: needs root (network namespaces, the Neutron agents)" >&2; exit 1; }
rig=scripts/dataplane/rig.sh

# stop_started: stops the rig this script started, if any, and checks what it left (also on an interrupted run).
started=""
stop_started() {
  [[ -n $started ]] || return 0
  local backend=$started rc=0
  started=""
  bash "$rig" stop --backend "$backend" || rc=1
  bash "$rig" leftovers --backend "$backend" || rc=1
  return "$rc"
}
trap 'stop_started || true' EXIT

# is_ready BACKEND PATTERN...: the backend's rig runs, and its status shows every pattern.
is_ready() {
  local backend=$1 status p
  shift
  status=$(bash "$rig" status --backend "$backend" 2>/dev/null) || return 1
  for p in "$@"; do grep -q -- "$p" <<<"$status" || return 1; done
}

# run_backend BACKEND STATE NETNS-PREFIX READY-PATTERN...: one backend's whole run; a rig it started is stopped.
run_backend() {
  local backend=$1 state=$2 netns_prefix=$3 rc=0 t0
  shift 3
  t0=$(date +%s)
  echo "test:dataplane: backend $backend"
  if is_ready "$backend" "$@"; then
    echo "test:dataplane: using the $backend rig already running ($state)"
  elif bash "$rig" install --backend "$backend"; then
    started=$backend
    bash "$rig" start --backend "$backend" || rc=1
  else
    rc=1
  fi
  if ((rc == 0)); then
    RAVEN_DATAPLANE_ENV="$state/env" node --import tsx --import ./test/support/exit-watch.ts --test \
      --test-timeout=900000 --test-concurrency=1 $(find test/dataplane -name '*.test.ts' | sort) || rc=1
    # A rig with Octavia (ovn): its provider's contract, which the simulator's `ovn` provider is held to.
    if ((rc == 0)) && grep -q '^RAVEN_DATAPLANE_OCTAVIA_URL=' "$state/env"; then
      RAVEN_OPENSTACK_TARGET=real RAVEN_OVN_OCTAVIA_CLOUDS="$state/clouds.yaml" node --import tsx \
        --import ./test/support/exit-watch.ts --test --test-timeout=600000 \
        test/contract/openstack/octavia-ovn-provider.test.ts || rc=1
    fi
  fi
  stop_started || rc=1
  local pods
  pods=$(ip netns list | awk -v p="$netns_prefix" 'index($1, p) == 1 { print $1 }')
  if [[ -n $pods ]]; then
    echo "test:dataplane: $backend: pod namespaces left behind: $pods" >&2
    rc=1
  fi
  echo "test:dataplane: backend $backend: $( ((rc == 0)) && echo passed || echo FAILED) in $(($(date +%s) - t0)) s"
  return "$rc"
}

rc=0
for backend in ${RAVEN_DATAPLANE_BACKENDS:-linuxbridge ovn}; do
  case $backend in
    linuxbridge)
      run_backend linuxbridge "${RAVEN_DATAPLANE_STATE:-$PWD/.raven/dataplane}" raven-pod- \
        'Linux_bridge_agent=alive' 'L3_agent=alive' || rc=1
      ;;
    ovn)
      run_backend ovn "${RAVEN_DATAPLANE_OVN_STATE:-$PWD/.raven/dataplane-ovn}" rvo-pod- 'OVN_Controller_agent=alive' ||
        rc=1
      ;;
    *)
      echo "test:dataplane: unknown backend '$backend' (linuxbridge or ovn)" >&2
      rc=1
      ;;
  esac
done
exit $rc
