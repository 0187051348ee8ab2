#!/usr/bin/env bash
# Installs the Debian packages real-openstack.sh needs, only those missing.
# Sourced by real-openstack.sh (function os_install) or run directly.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=../lib/services.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../lib/services.sh"

OS_PACKAGES=(
  neutron-server keystone octavia-api octavia-worker
  mariadb-server rabbitmq-server
  uwsgi-core uwsgi-plugin-python3
  python3-pymysql python3-keystonemiddleware
  openssl curl procps iproute2 util-linux
)

os_missing_packages() { pkg_missing "${OS_PACKAGES[@]}"; }

os_install() {
  export PATH=/usr/sbin:/usr/bin:/sbin:/bin
  pkg_install install "${OS_PACKAGES[@]}"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  RIG=real-openstack
  os_install "$@"
fi
