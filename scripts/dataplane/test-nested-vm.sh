#!/usr/bin/env bash
# npm run test:nested-vm — nested pods in a real VM on the OVN rig (test/dataplane/nested-vm.test.ts), and Raven
# SIGKILLed during bursts of nested pods on the rig's real Neutron (test/dataplane/nested-kill.test.ts). Root only.
# Builds the VM image when missing (scripts/dataplane/vm.sh build), starts the OVN rig unless it runs (with Octavia
# and its OVN provider, for the Service case), runs the test, stops the rig if it started it and checks what is left.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(id -u) -eq 0 ]] || { echo "test:nested-vm: needs root (a tap device, network namespaces, the rig)" >&2; exit 1; }
rig=scripts/dataplane/rig.sh
state=${RAVEN_DATAPLANE_OVN_STATE:-$PWD/.raven/dataplane-ovn}

bash scripts/dataplane/vm.sh build

started=0
stop_started() {
  ((started)) || return 0
  started=0
  local rc=0
  bash "$rig" stop --backend ovn || rc=1
  bash "$rig" leftovers --backend ovn || rc=1
  return "$rc"
}
trap 'stop_started || true' EXIT

if bash "$rig" status --backend ovn 2>/dev/null | grep -q 'OVN_Controller_agent=alive'; then
  echo "test:nested-vm: using the OVN rig already running ($state)"
else
  started=1
  bash "$rig" start --backend ovn
fi

rc=0
t0=$(date +%s)
RAVEN_NESTED_VM=1 RAVEN_DATAPLANE_ENV="$state/env" timeout 1200 \
  node --import tsx --import ./test/support/exit-watch.ts --test --test-timeout=900000 --test-concurrency=1 \
  test/dataplane/nested-vm.test.ts test/dataplane/nested-kill.test.ts || rc=1
echo "test:nested-vm: test took $(($(date +%s) - t0)) s"
stop_started || rc=1
trap - EXIT
exit "$rc"
