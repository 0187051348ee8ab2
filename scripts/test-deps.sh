#!/bin/sh
# What `npm test` needs besides npm packages: kubectl 1.20 (extracted into .tools/, never installed system-wide)
# and Debian's python3-kubernetes (installed with apt when running as root; otherwise say how).
set -eu
cd "$(dirname "$0")/.."
sh scripts/fetch-kubectl.sh
if ! /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-kubernetes >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-kubernetes >/dev/null; }
  else
    echo "note: python3-kubernetes is missing; run 'sudo apt-get install python3-kubernetes' (the Python client test is skipped until then, and fails under CI)" >&2
  fi
fi
