#!/usr/bin/env bash
# Installs the Debian packages real-openstack.sh needs, only those missing.
# Sourced by real-openstack.sh (function os_install) or run directly.
set -euo pipefail

OS_PACKAGES=(
  neutron-server keystone octavia-api octavia-worker
  mariadb-server rabbitmq-server
  uwsgi-core uwsgi-plugin-python3
  python3-pymysql python3-keystonemiddleware
  openssl curl procps iproute2 util-linux
)

os_missing_packages() {
  local p st
  for p in "${OS_PACKAGES[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [[ "$st" == "installed" ]] || printf '%s\n' "$p"
  done
}

os_install() {
  export PATH=/usr/sbin:/usr/bin:/sbin:/bin
  local missing t0 created_policy=0
  mapfile -t missing < <(os_missing_packages)
  if ((${#missing[@]} == 0)); then
    echo "install: all ${#OS_PACKAGES[@]} packages already installed"
    return 0
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "install: must run as root to install: ${missing[*]}" >&2
    return 1
  fi
  t0=$(date +%s.%N)
  echo "install: missing: ${missing[*]}"
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\n# temporary, made by raven scripts/openstack/install.sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    created_policy=1
  fi
  # no EXIT trap here: real-openstack.sh sources this file and owns the EXIT trap of `start`
  local rc=0
  DEBIAN_FRONTEND=noninteractive apt-get update -q || rc=$?
  if ((rc == 0)); then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" || rc=$?
  fi
  if ((created_policy)); then
    rm -f /usr/sbin/policy-rc.d
  fi
  if ((rc != 0)); then
    echo "install: apt-get failed (exit $rc)" >&2
    return "$rc"
  fi
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "install: done in %.1f s\n", b - a }'
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  os_install "$@"
fi
