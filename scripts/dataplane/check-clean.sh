#!/usr/bin/env bash
# Exits non-zero (and lists them) when the root namespace holds Neutron-made objects (qrouter namespaces, brq/tap/
# vxlan devices, neutron iptables chains and their jumps, NIPv ipsets, neutron ebtables chains) that were not there
# when `rig.sh start` took its snapshot, or when a root-namespace sysctl the rig must not change differs. Tests call
# it after `rig.sh stop`. Same state dir as rig.sh: ${RAVEN_DATAPLANE_STATE:-$PWD/.raven/dataplane}.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/rig.sh" leftovers "$@"
