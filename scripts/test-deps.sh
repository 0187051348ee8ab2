#!/bin/sh
# What `npm test` needs besides npm packages: kubectl 1.20 (extracted into .tools/, never installed system-wide),
# Debian's python3-kubernetes, and Debian's `openstack` CLI with its Octavia plugin (the real clients the tests drive
# against the embedded API server and the OpenStack simulator), and, as root, iproute2 (raven-cni's plugging tests
# make a network namespace), and Debian's chromium (the topology page's browser test drives it headless through
# playwright-core, which downloads no browser); installed with apt when running as root, otherwise say how.
set -eu
cd "$(dirname "$0")/.."
sh scripts/fetch-kubectl.sh
missing=""
/usr/bin/python3 -c 'import kubernetes' 2>/dev/null || missing="$missing python3-kubernetes"
/usr/bin/python3 -c 'import openstackclient, octaviaclient' 2>/dev/null || missing="$missing python3-openstackclient python3-octaviaclient"
if [ "$(id -u)" -eq 0 ] && ! command -v ip >/dev/null 2>&1; then missing="$missing iproute2"; fi
[ -x /usr/bin/chromium ] || missing="$missing chromium"
if [ -n "$missing" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null; }
  else
    echo "note:$missing missing; run 'sudo apt-get install$missing' (the tests driving them are skipped until then, and fail under CI)" >&2
  fi
fi
