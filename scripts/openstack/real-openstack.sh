#!/usr/bin/env bash
# Real Keystone, Neutron and Octavia (Debian 12 packages, OpenStack Zed) on 127.0.0.1, for the contract suite and
# `raven dev` against a real OpenStack. Facts behind every setting: docs/openstack.md.
#
#   real-openstack.sh install                         install the missing Debian packages (root)
#   real-openstack.sh start [--auth both|keystone|noauth]   start everything (default: both)
#   real-openstack.sh stop [--purge]                  stop exactly what start started (--purge: delete the state dir)
#   real-openstack.sh status                          what runs, on which port
#
# State (config, databases, logs, PID files, secret, clouds.yaml, env): ${RAVEN_OPENSTACK_STATE:-$PWD/.raven/openstack}
set -euo pipefail

# Debian's python3 and tools only: a pyenv shim or a virtualenv must not shadow /usr/bin/python3.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV PYENV_VERSION PYTHONSTARTUP || true
export LC_ALL=C.UTF-8 LANG=C.UTF-8

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RIG=real-openstack
# shellcheck source-path=SCRIPTDIR source=install.sh
source "$SCRIPT_DIR/install.sh"   # also sources ../lib/services.sh: process control, MariaDB, RabbitMQ

STATE=${RAVEN_OPENSTACK_STATE:-$PWD/.raven/openstack}
[[ $STATE == /* ]] || STATE=$PWD/$STATE
RUN=$STATE/run
LOG=$STATE/log
ETC=$STATE/etc
HOST=127.0.0.1

KEYSTONE_PORT=15000
NEUTRON_PORT=19696          # Keystone-auth Neutron (or the only Neutron in --auth noauth)
NEUTRON_NOAUTH_PORT=19697   # noauth Neutron next to the Keystone one (--auth both)
OCTAVIA_PORT=19876
OCTAVIA_NOAUTH_PORT=19877
MYSQL_PORT=13306
RABBIT_PORT=15673
RABBIT_DIST_PORT=35673
EPMD_PORT=14369
RABBIT_NODENAME=oslab@localhost
# Neutron in noauth mode puts requests without X-Project-Id in this project; Octavia noauth LBs use the same one so
# that LBs and their VIP ports share the project Neutron uses by default.
NOAUTH_PROJECT_ID=fake_project_id
# ML2 mechanism driver: `raven_dev` (pylib/raven_ml2_dev) = Neutron's `test` driver (docs/openstack.md, "Real services on loopback": a port with
# binding:host_id=host-ovs-filter-active binds as ovs and is ACTIVE at once) without its in-process asserts, which
# make binding by update fail and turn updates/deletes of bound ports into 500s across processes and restarts. It
# also declares the trunk driver the `trunk` service plugin needs to load (docs/openstack.md, "Trunks").
ML2_MECH_DRIVER=${RAVEN_OS_ML2_DRIVER:-raven_dev}
# The trunk plugin will not start without a trunk driver: only with raven_dev (or another driver that has one).
TRUNK_SERVICE_PLUGIN=$([[ ,$ML2_MECH_DRIVER, == *,@(raven_dev|openvswitch|linuxbridge|ovn),* ]] && echo ,trunk || true)
# ML2 extension drivers. Debian's (and upstream's) default is port_security only; add
# tag_ports_during_bulk_creation to get the `tag-ports-during-bulk-creation` extension (tags in a port POST are then
# applied; without it they are accepted and silently dropped).
ML2_EXTENSION_DRIVERS=${RAVEN_OS_ML2_EXTENSION_DRIVERS:-port_security}

# Every service this script can start; stop order is reversed infra last (see do_stop).
ALL_SERVICES=(epmd mariadb rabbitmq keystone neutron neutron-noauth octavia-worker octavia-api octavia-api-noauth)
# uwsgi: the master stops its workers (--die-on-term, mercy 8 s); a TERM to the workers themselves only makes them
# reload, which can hang.
STOP_LEADER_ONLY=(keystone octavia-api octavia-api-noauth)

# ---------------------------------------------------------------------------------------------------------------
# config files (all in $ETC; nothing is read from /etc/neutron, /etc/keystone, /etc/octavia)
# ---------------------------------------------------------------------------------------------------------------
db_url() { echo "mysql+pymysql://os:${SECRET}@$HOST:$MYSQL_PORT/$1?charset=utf8mb4"; }

write_keystone_conf() {
  mkdir -p "$ETC/keystone" "$STATE/keystone/fernet-keys" "$STATE/keystone/credential-keys" "$STATE/keystone/receipt-keys"
  echo '{}' >"$ETC/keystone/policy.yaml"
  cat >"$ETC/keystone/keystone.conf" <<EOF
[DEFAULT]
use_stderr = true
log_file =
debug = false
[database]
connection = $(db_url keystone)
[token]
provider = fernet
expiration = 86400
[fernet_tokens]
key_repository = $STATE/keystone/fernet-keys
[fernet_receipts]
key_repository = $STATE/keystone/receipt-keys
[credential]
key_repository = $STATE/keystone/credential-keys
[identity]
password_hash_rounds = 4
[oslo_policy]
policy_file = $ETC/keystone/policy.yaml
policy_dirs = $ETC/keystone/policy.d
EOF
  mkdir -p "$ETC/keystone/policy.d"
}

keystone_authtoken() { # SERVICE_USER
  cat <<EOF
[keystone_authtoken]
www_authenticate_uri = http://$HOST:$KEYSTONE_PORT
auth_url = http://$HOST:$KEYSTONE_PORT
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = $1
password = $SECRET
service_token_roles_required = true
region_name = RegionOne
EOF
}

write_neutron_conf() {
  mkdir -p "$ETC/neutron/policy.d" "$STATE/neutron/state" "$STATE/lock/neutron"
  echo '{}' >"$ETC/neutron/policy.yaml"
  cat >"$ETC/neutron/api-paste.ini" <<'EOF'
[composite:neutron]
use = egg:Paste#urlmap
/: neutronversions_composite
/v2.0: neutronapi_v2_0

[composite:neutronapi_v2_0]
use = call:neutron.auth:pipeline_factory
noauth = http_proxy_to_wsgi request_id fake_project_id catch_errors extensions neutronapiapp_v2_0
keystone = http_proxy_to_wsgi request_id catch_errors authtoken keystonecontext extensions neutronapiapp_v2_0

[composite:neutronversions_composite]
use = call:neutron.auth:pipeline_factory
noauth = http_proxy_to_wsgi neutronversions
keystone = http_proxy_to_wsgi neutronversions

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory

[filter:catch_errors]
paste.filter_factory = oslo_middleware:CatchErrors.factory

[filter:fake_project_id]
paste.filter_factory = neutron.auth:NoauthFakeProjectId.factory

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory

[filter:keystonecontext]
paste.filter_factory = neutron.auth:NeutronKeystoneContext.factory

[filter:authtoken]
paste.filter_factory = keystonemiddleware.auth_token:filter_factory

[filter:extensions]
paste.filter_factory = neutron.api.extensions:plugin_aware_extension_middleware_factory

[app:neutronversions]
paste.app_factory = neutron.pecan_wsgi.app:versions_factory

[app:neutronapiapp_v2_0]
paste.app_factory = neutron.api.v2.router:APIRouter.factory
EOF
  local q
  {
    cat <<EOF
[DEFAULT]
use_stderr = true
debug = false
state_path = $STATE/neutron/state
api_paste_config = $ETC/neutron/api-paste.ini
core_plugin = ml2
service_plugins = router$TRUNK_SERVICE_PLUGIN
transport_url = fake:/
api_workers = 0
rpc_workers = 0
rpc_state_report_workers = 0
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
dhcp_agent_notification = false
allow_overlapping_ips = true
[database]
connection = $(db_url neutron)
[oslo_concurrency]
lock_path = $STATE/lock/neutron
[oslo_policy]
policy_file = $ETC/neutron/policy.yaml
policy_dirs = $ETC/neutron/policy.d
[agent]
root_helper =
[quotas]
EOF
    for q in network subnet port router floatingip security_group security_group_rule subnetpool rbac_policy; do
      echo "quota_$q = -1"
    done
    cat <<EOF
[ml2]
type_drivers = flat,vlan,vxlan,local
tenant_network_types = vxlan
mechanism_drivers = $ML2_MECH_DRIVER
extension_drivers = $ML2_EXTENSION_DRIVERS
[ml2_type_flat]
flat_networks = *
[ml2_type_vlan]
network_vlan_ranges = public
[ml2_type_vxlan]
vni_ranges = 1:20000
[securitygroup]
enable_security_group = true
EOF
  } >"$ETC/neutron/neutron.conf"
  # per-server overlays: auth strategy, port (the API binds 127.0.0.1 only)
  {
    echo "[DEFAULT]"; echo "auth_strategy = keystone"; echo "bind_host = $HOST"; echo "bind_port = $NEUTRON_PORT"
    if [[ $WITH_KEYSTONE == 1 ]]; then keystone_authtoken neutron; fi
  } >"$ETC/neutron/server-keystone.conf"
  {
    echo "[DEFAULT]"; echo "auth_strategy = noauth"; echo "bind_host = $HOST"; echo "bind_port = $NOAUTH_NEUTRON_PORT"
  } >"$ETC/neutron/server-noauth.conf"
}

write_octavia_conf() {
  mkdir -p "$ETC/octavia/policy.d" "$STATE/lock/octavia" "$STATE/octavia/ca" "$STATE/octavia/certs"
  echo '{}' >"$ETC/octavia/policy.yaml"
  if [[ ! -s $STATE/octavia/ca/ca.pem ]]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=raven-octavia-dev-ca" \
      -keyout "$STATE/octavia/ca/ca.key" -out "$STATE/octavia/ca/ca.pem" >/dev/null 2>&1
    cat "$STATE/octavia/ca/ca.pem" "$STATE/octavia/ca/ca.key" >"$STATE/octavia/ca/client.pem"
    chmod 0600 "$STATE/octavia/ca/ca.key" "$STATE/octavia/ca/client.pem"
  fi
  cat >"$ETC/octavia/octavia.conf" <<EOF
[DEFAULT]
use_stderr = true
debug = false
transport_url = rabbit://guest:guest@$HOST:$RABBIT_PORT/
[database]
connection = $(db_url octavia)
[oslo_concurrency]
lock_path = $STATE/lock/octavia
[oslo_policy]
policy_file = $ETC/octavia/policy.yaml
policy_dirs = $ETC/octavia/policy.d
[oslo_messaging]
topic = octavia_prov
[api_settings]
auth_strategy = noauth
enabled_provider_drivers = amphora:'The Octavia Amphora driver.',noop_driver:'The No-Op driver.'
default_provider_driver = amphora
healthcheck_enabled = false
[controller_worker]
amphora_driver = amphora_noop_driver
compute_driver = compute_noop_driver
network_driver = network_noop_driver
volume_driver = volume_noop_driver
image_driver = image_noop_driver
loadbalancer_topology = SINGLE
amp_boot_network_list = 00000000-0000-0000-0000-00000000000a
amp_flavor_id = raven-noop-flavor
amp_image_tag = raven-noop-image
amp_secgroup_list = 00000000-0000-0000-0000-00000000000b
client_ca = $STATE/octavia/ca/ca.pem
workers = 1
[task_flow]
jobboard_enabled = False
[certificates]
cert_manager = local_cert_manager
cert_generator = local_cert_generator
ca_certificate = $STATE/octavia/ca/ca.pem
ca_private_key = $STATE/octavia/ca/ca.key
storage_path = $STATE/octavia/certs
[haproxy_amphora]
client_cert = $STATE/octavia/ca/client.pem
server_ca = $STATE/octavia/ca/ca.pem
[health_manager]
heartbeat_key = raven-dev-heartbeat
controller_ip_port_list = $HOST:15555
[networking]
allow_invisible_resource_usage = True
[house_keeping]
load_balancer_expiry_age = 60
EOF
  # API overlays: the API process creates real Neutron VIP ports (allowed-address-pairs driver); the worker keeps
  # the noop network driver (docs/openstack.md, "Known bugs and limits Raven works around").
  {
    cat <<EOF
[api_settings]
auth_strategy = keystone
[controller_worker]
network_driver = allowed_address_pairs_driver
[neutron]
endpoint = http://$HOST:$NEUTRON_PORT
region_name = RegionOne
[service_auth]
auth_url = http://$HOST:$KEYSTONE_PORT
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = octavia
password = $SECRET
EOF
    if [[ $WITH_KEYSTONE == 1 ]]; then keystone_authtoken octavia; fi
  } >"$ETC/octavia/api-keystone.conf"
  cat >"$ETC/octavia/api-noauth.conf" <<EOF
[api_settings]
auth_strategy = noauth
[controller_worker]
network_driver = allowed_address_pairs_driver
[neutron]
endpoint = http://$HOST:$NOAUTH_NEUTRON_PORT
[service_auth]
auth_type = none
EOF
}

# ---------------------------------------------------------------------------------------------------------------
# DB inits (run in parallel, each in a subshell writing its own log)
# ---------------------------------------------------------------------------------------------------------------
init_keystone_db() {
  local mark=$STATE/marks/keystone ver; ver=$(pkg_version keystone)
  local conf=(--config-file "$ETC/keystone/keystone.conf")
  if [[ "$(cat "$mark" 2>/dev/null)" != "$ver" ]]; then
    keystone-manage "${conf[@]}" db_sync
  fi
  if [[ ! -s $STATE/keystone/fernet-keys/0 ]]; then
    keystone-manage "${conf[@]}" fernet_setup --keystone-user root --keystone-group root
  fi
  if [[ ! -s $STATE/keystone/credential-keys/0 ]]; then
    keystone-manage "${conf[@]}" credential_setup --keystone-user root --keystone-group root
  fi
  if [[ "$(cat "$mark" 2>/dev/null)" != "$ver" ]]; then
    # bootstrap is idempotent; it also sets the admin password from the secret
    OS_BOOTSTRAP_PASSWORD="$SECRET" keystone-manage "${conf[@]}" bootstrap \
      --bootstrap-username admin --bootstrap-project-name admin --bootstrap-role-name admin \
      --bootstrap-service-name keystone --bootstrap-region-id RegionOne \
      --bootstrap-admin-url "http://$HOST:$KEYSTONE_PORT/v3" \
      --bootstrap-public-url "http://$HOST:$KEYSTONE_PORT/v3" \
      --bootstrap-internal-url "http://$HOST:$KEYSTONE_PORT/v3"
    echo "$ver" >"$mark"
  fi
}

init_neutron_db() {
  local mark=$STATE/marks/neutron ver; ver=$(pkg_version neutron-server)
  if [[ "$(cat "$mark" 2>/dev/null)" != "$ver" ]]; then
    neutron-db-manage --config-file "$ETC/neutron/neutron.conf" upgrade heads
    echo "$ver" >"$mark"
  fi
}

init_octavia_db() {
  local mark=$STATE/marks/octavia ver; ver=$(pkg_version octavia-api)
  if [[ "$(cat "$mark" 2>/dev/null)" != "$ver" ]]; then
    octavia-db-manage --config-file "$ETC/octavia/octavia.conf" upgrade head
    echo "$ver" >"$mark"
  fi
}

# bg_init NAME FUNC: runs FUNC in the background; its PID in BG_PIDS[NAME]
declare -A BG_PIDS=() BG_T0=()
bg_init() {
  local name=$1 fn=$2
  BG_T0[$name]=$(now)
  ( "$fn"; now >"$LOG/init-$name.done" ) >"$LOG/init-$name.log" 2>&1 &
  BG_PIDS[$name]=$!
}
wait_init() {
  local name=$1
  if ! wait "${BG_PIDS[$name]}"; then
    printf 'real-openstack: %s database init failed; last lines of %s:\n' "$name" "$LOG/init-$name.log" >&2
    tail -n 40 "$LOG/init-$name.log" | sed 's/^/  | /' >&2
    exit 1
  fi
  unset 'BG_PIDS[$name]'
  TIMINGS+=("$(printf '%-28s %6s s' "$name db init" "$(secs "${BG_T0[$name]}" "$(cat "$LOG/init-$name.done")")")")
}

# ---------------------------------------------------------------------------------------------------------------
# services
# ---------------------------------------------------------------------------------------------------------------
# --http-socket closes the connection after each response without saying so; a keep-alive client (keystonemiddleware,
# keystoneauth, undici) that reuses its pooled socket then sometimes gets "Remote end closed connection without
# response" (seen as Octavia 503 "The Keystone service is temporarily unavailable"). `Connection: close` tells it.
UWSGI_COMMON=(uwsgi-core --add-header "Connection: close" --plugin python3 --master --processes 1 --threads 4 --lazy-apps --die-on-term
  --need-app --buffer-size 65535 --enable-threads --thunder-lock --reload-mercy 8 --worker-reload-mercy 8)

start_keystone() {
  launch keystone env OS_KEYSTONE_CONFIG_FILES="$ETC/keystone/keystone.conf" \
    "${UWSGI_COMMON[@]}" --http-socket "$HOST:$KEYSTONE_PORT" --wsgi-file /usr/bin/keystone-wsgi-public \

}

start_neutron() { # SERVICE OVERLAY
  launch "$1" env PYTHONPATH="$SCRIPT_DIR/pylib" PYTHONDONTWRITEBYTECODE=1 neutron-server --config-file "$ETC/neutron/neutron.conf" \
    --config-file "$ETC/neutron/$2"
}

start_octavia_api() { # SERVICE OVERLAY PORT
  launch "$1" "${UWSGI_COMMON[@]}" --http-socket "$HOST:$3" --wsgi-file /usr/bin/octavia-wsgi \
    --pyargv "--config-file $ETC/octavia/octavia.conf --config-file $ETC/octavia/$2"
}

write_outputs() {
  local f=$STATE/clouds.yaml
  umask 077
  {
    echo "# written by scripts/openstack/real-openstack.sh start ($(date -u +%FT%TZ)); auth mode: $AUTH"
    echo "clouds:"
    if [[ $WITH_KEYSTONE == 1 ]]; then
      cat <<EOF
  raven-real:
    auth_type: password
    auth:
      auth_url: http://$HOST:$KEYSTONE_PORT/v3
      username: admin
      password: "$SECRET"
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
  raven-real-demo:
    auth_type: password
    auth:
      auth_url: http://$HOST:$KEYSTONE_PORT/v3
      username: demo
      password: "$SECRET"
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
EOF
    fi
    if [[ $WITH_NOAUTH == 1 ]]; then
      cat <<EOF
  raven-real-noauth:
    auth_type: none
    network_endpoint_override: http://$HOST:$NOAUTH_NEUTRON_PORT
    load_balancer_endpoint_override: http://$HOST:$NOAUTH_OCTAVIA_PORT
    # Octavia noauth needs a project: Raven sends it as X-Project-Id (or project_id in the body). Do NOT send
    # X-Project-Id to noauth Neutron: without it Neutron uses this same project; with it creates fail (400). Not
    # under project_id: the openstack CLI passes that to its none plugin, which fails.
    load_balancer_project_id: $NOAUTH_PROJECT_ID
    region_name: RegionOne
EOF
    fi
  } >"$f.tmp"
  chmod 0600 "$f.tmp"; mv "$f.tmp" "$f"
  umask 022
  {
    echo "# written by scripts/openstack/real-openstack.sh start; source it or read it as KEY=VALUE"
    echo "RAVEN_OS_AUTH=$AUTH"
    echo "RAVEN_OS_STATE=$STATE"
    echo "OS_CLIENT_CONFIG_FILE=$STATE/clouds.yaml"
    echo "RAVEN_OS_SECRET_FILE=$STATE/secret"
    if [[ $WITH_KEYSTONE == 1 ]]; then
      echo "RAVEN_OS_KEYSTONE_URL=http://$HOST:$KEYSTONE_PORT/v3"
      echo "RAVEN_OS_NEUTRON_URL=http://$HOST:$NEUTRON_PORT"
      echo "RAVEN_OS_OCTAVIA_URL=http://$HOST:$OCTAVIA_PORT"
      echo "RAVEN_OS_KEYSTONE_PORT=$KEYSTONE_PORT"
      echo "RAVEN_OS_NEUTRON_PORT=$NEUTRON_PORT"
      echo "RAVEN_OS_OCTAVIA_PORT=$OCTAVIA_PORT"
      echo "RAVEN_OS_DEMO_PROJECT_ID=$(sed -n 's/^project_demo=//p' "$STATE/keystone-ids")"
      echo "RAVEN_OS_ADMIN_PROJECT_ID=$(sed -n 's/^project_admin=//p' "$STATE/keystone-ids")"
    fi
    if [[ $WITH_NOAUTH == 1 ]]; then
      echo "RAVEN_OS_NOAUTH_NEUTRON_URL=http://$HOST:$NOAUTH_NEUTRON_PORT"
      echo "RAVEN_OS_NOAUTH_OCTAVIA_URL=http://$HOST:$NOAUTH_OCTAVIA_PORT"
      echo "RAVEN_OS_NOAUTH_NEUTRON_PORT=$NOAUTH_NEUTRON_PORT"
      echo "RAVEN_OS_NOAUTH_OCTAVIA_PORT=$NOAUTH_OCTAVIA_PORT"
      echo "RAVEN_OS_NOAUTH_PROJECT_ID=$NOAUTH_PROJECT_ID"
    fi
    echo "RAVEN_OS_MYSQL_PORT=$MYSQL_PORT"
    echo "RAVEN_OS_RABBIT_PORT=$RABBIT_PORT"
    echo "RAVEN_OS_EPMD_PORT=$EPMD_PORT"
    echo "RAVEN_OS_ML2_HOST_ACTIVE=host-ovs-filter-active"
  } >"$STATE/env"
}

set_mode() { # AUTH -> WITH_KEYSTONE, WITH_NOAUTH, ports
  case $1 in
    both) WITH_KEYSTONE=1 WITH_NOAUTH=1 NOAUTH_NEUTRON_PORT=$NEUTRON_NOAUTH_PORT NOAUTH_OCTAVIA_PORT=$OCTAVIA_NOAUTH_PORT ;;
    keystone) WITH_KEYSTONE=1 WITH_NOAUTH=0 NOAUTH_NEUTRON_PORT=$NEUTRON_NOAUTH_PORT NOAUTH_OCTAVIA_PORT=$OCTAVIA_NOAUTH_PORT ;;
    noauth) WITH_KEYSTONE=0 WITH_NOAUTH=1 NOAUTH_NEUTRON_PORT=$NEUTRON_PORT NOAUTH_OCTAVIA_PORT=$OCTAVIA_PORT ;;
    *) die "--auth must be both, keystone or noauth (got '$1')" ;;
  esac
  AUTH=$1
}

services_for_mode() {
  local s=(epmd mariadb rabbitmq)
  [[ $WITH_KEYSTONE == 1 ]] && s+=(keystone neutron octavia-api)
  [[ $WITH_NOAUTH == 1 ]] && s+=(neutron-noauth octavia-api-noauth)
  s+=(octavia-worker)
  echo "${s[@]}"
}

any_alive() { local s; for s in "${ALL_SERVICES[@]}"; do alive "$s" && return 0; done; return 1; }

on_start_exit() {
  local rc=$?
  if ((rc != 0)); then
    # kill the DB-init subshells still running, then everything this start launched
    local p; for p in "${BG_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; pkill -TERM -P "$p" 2>/dev/null || true; done
    if ((${#STARTED[@]})); then
      printf 'real-openstack: start failed; stopping what it started: %s\n' "${STARTED[*]}" >&2
      stop_services "${STARTED[@]}" >&2 || true
    fi
  fi
}

do_start() {
  AUTH=both
  while (($#)); do
    case $1 in
      --auth) AUTH=${2:-}; shift 2 ;;
      --auth=*) AUTH=${1#--auth=}; shift ;;
      *) die "start: unknown argument '$1'" ;;
    esac
  done
  set_mode "$AUTH"
  mkdir -p "$RUN" "$LOG" "$ETC" "$STATE/marks"
  if any_alive; then
    local want=() incomplete=0 s
    read -r -a want <<<"$(services_for_mode)"
    for s in "${want[@]}"; do alive "$s" || incomplete=1; done
    if ((incomplete == 0)) && [[ "$(cat "$STATE/mode" 2>/dev/null)" == "$AUTH" ]]; then
      say "already running (auth $AUTH); state: $STATE"
      return 0
    fi
    die "some services of an earlier start still run (see '$0 status'); run '$0 stop' first"
  fi
  # every port this start binds must be free
  local ports=("$EPMD_PORT" "$MYSQL_PORT" "$RABBIT_PORT" "$RABBIT_DIST_PORT")
  [[ $WITH_KEYSTONE == 1 ]] && ports+=("$KEYSTONE_PORT" "$NEUTRON_PORT" "$OCTAVIA_PORT")
  [[ $WITH_NOAUTH == 1 ]] && ports+=("$NOAUTH_NEUTRON_PORT" "$NOAUTH_OCTAVIA_PORT")
  ports_free "${ports[@]}" || exit 1
  local T0; T0=$(now)
  STARTED=()
  trap on_start_exit EXIT

  if [[ -n "$(os_missing_packages)" ]]; then
    local ti; ti=$(now); os_install; timing "install missing packages" "$ti"
  fi

  if [[ ! -s $STATE/secret ]]; then
    (umask 077; openssl rand -hex 24 >"$STATE/secret")
  fi
  chmod 0600 "$STATE/secret"
  SECRET=$(cat "$STATE/secret")
  echo "$AUTH" >"$STATE/mode"

  local t; t=$(now)
  # config files hold the secret: owner-only
  mkdir -p "$ETC"; chmod 0700 "$ETC"
  (umask 077; write_keystone_conf; write_neutron_conf; write_octavia_conf; write_rabbit_conf)
  timing "config files" "$t"

  t=$(now)
  start_epmd
  timing "epmd" "$t"

  start_mariadb os "$SECRET" keystone neutron octavia

  # RabbitMQ takes ~7 s: start it now, wait for it only before the Octavia worker.
  local t_rabbit; t_rabbit=$(now)
  start_rabbitmq

  local neutron_was_ready=0  # decided before the init runs: it writes the mark
  [[ "$(cat "$STATE/marks/neutron" 2>/dev/null)" == "$(pkg_version neutron-server)" ]] && neutron_was_ready=1
  [[ $WITH_KEYSTONE == 1 ]] && bg_init keystone init_keystone_db
  bg_init neutron init_neutron_db
  bg_init octavia init_octavia_db

  local t_ks t_seed
  if [[ $WITH_KEYSTONE == 1 ]]; then
    wait_init keystone
    t_ks=$(now)
    start_keystone
  fi

  # A fresh Neutron DB gets its VXLAN allocation rows from the first server that starts: the second one (--auth both)
  # waits for the first then. With a reused DB both start at once.
  wait_init neutron
  local t_neutron; t_neutron=$(now)
  local first_neutron=neutron-noauth
  if [[ $WITH_KEYSTONE == 1 ]]; then first_neutron=neutron; start_neutron neutron server-keystone.conf
  else start_neutron neutron-noauth server-noauth.conf; fi
  if [[ $WITH_KEYSTONE == 1 && $WITH_NOAUTH == 1 && $neutron_was_ready == 1 ]]; then
    start_neutron neutron-noauth server-noauth.conf
  fi

  wait_init octavia
  # the API processes need RabbitMQ only when they cast to the worker: start them now
  local t_oct; t_oct=$(now)
  [[ $WITH_KEYSTONE == 1 ]] && start_octavia_api octavia-api api-keystone.conf $OCTAVIA_PORT
  [[ $WITH_NOAUTH == 1 ]] && start_octavia_api octavia-api-noauth api-noauth.conf $NOAUTH_OCTAVIA_PORT

  if [[ $WITH_KEYSTONE == 1 ]]; then
    wait_http keystone "http://$HOST:$KEYSTONE_PORT/v3" 120
    timing "keystone ready" "$t_ks"
    t_seed=$(now)
    /usr/bin/python3 "$SCRIPT_DIR/seed-keystone.py" "http://$HOST:$KEYSTONE_PORT" "$STATE/secret" \
      "http://$HOST:$NEUTRON_PORT" "http://$HOST:$OCTAVIA_PORT" "$STATE/keystone-ids" >"$LOG/seed-keystone.log" 2>&1 ||
      { tail -n 20 "$LOG/seed-keystone.log" >&2; die "seeding Keystone failed"; }
    timing "keystone seed" "$t_seed"
  fi

  wait_tcp rabbitmq $RABBIT_PORT 120
  timing "rabbitmq ready" "$t_rabbit"
  local t_worker; t_worker=$(now)
  launch octavia-worker octavia-worker --config-file "$ETC/octavia/octavia.conf"

  if [[ $WITH_KEYSTONE == 1 ]]; then
    wait_http neutron "http://$HOST:$NEUTRON_PORT/" 180
  else
    wait_http neutron-noauth "http://$HOST:$NOAUTH_NEUTRON_PORT/" 180
  fi
  timing "$first_neutron ready" "$t_neutron"
  if [[ $WITH_KEYSTONE == 1 && $WITH_NOAUTH == 1 ]]; then
    t=$(now)
    alive neutron-noauth || start_neutron neutron-noauth server-noauth.conf
    wait_http neutron-noauth "http://$HOST:$NOAUTH_NEUTRON_PORT/" 180
    timing "neutron-noauth ready" "$t"
  fi

  [[ $WITH_KEYSTONE == 1 ]] && wait_http octavia-api "http://$HOST:$OCTAVIA_PORT/" 120
  [[ $WITH_NOAUTH == 1 ]] && wait_http octavia-api-noauth "http://$HOST:$NOAUTH_OCTAVIA_PORT/" 120
  timing "octavia api(s) ready" "$t_oct"
  # the worker has no port: it is ready once it has consumed from its queue; give it a moment and check it lives
  local tw; tw=$(date +%s)
  until grep -q "Starting V2 consumer" "$LOG/octavia-worker.log" 2>/dev/null; do
    alive octavia-worker || fail_service octavia-worker "exited while starting"
    (($(date +%s) - tw < 60)) || fail_service octavia-worker "did not start its consumers within 60s"
    sleep 0.25
  done
  timing "octavia-worker consuming" "$t_worker"

  write_outputs
  trap - EXIT
  timing "TOTAL start" "$T0"
  say "OpenStack (Zed, Debian packages) running on $HOST, auth mode: $AUTH"
  do_status_lines
  say "timings:"; printf '  %s\n' "${TIMINGS[@]}"
  say "clouds.yaml: $STATE/clouds.yaml   env: $STATE/env   secret (all passwords): $STATE/secret   logs: $LOG/"
}

do_status_lines() {
  local s port rss pslist
  pslist=$(ps -eo pgid=,rss= 2>/dev/null || true)
  for s in "${ALL_SERVICES[@]}"; do
    [[ -f $RUN/$s.pid ]] || continue
    case $s in
      epmd) port=$EPMD_PORT ;; mariadb) port=$MYSQL_PORT ;; rabbitmq) port=$RABBIT_PORT ;;
      keystone) port=$KEYSTONE_PORT ;; neutron) port=$NEUTRON_PORT ;; octavia-api) port=$OCTAVIA_PORT ;;
      neutron-noauth) port=$( [[ "$(cat "$STATE/mode" 2>/dev/null)" == noauth ]] && echo $NEUTRON_PORT || echo $NEUTRON_NOAUTH_PORT) ;;
      octavia-api-noauth) port=$( [[ "$(cat "$STATE/mode" 2>/dev/null)" == noauth ]] && echo $OCTAVIA_PORT || echo $OCTAVIA_NOAUTH_PORT) ;;
      octavia-worker) port=- ;;
    esac
    if alive "$s"; then
      rss=$(group_rss "$s" "$pslist")
      printf '  %-20s running  pid %-8s port %-6s RSS %s\n' "$s" "$(pid_of "$s")" "$port" "$rss"
    else
      printf '  %-20s DEAD     (stale PID file; log %s)\n' "$s" "$LOG/$s.log"
    fi
  done
}

do_status() {
  if [[ ! -d $RUN ]] || ! compgen -G "$RUN/*.pid" >/dev/null; then
    say "not running (state: $STATE)"; return 0
  fi
  say "auth mode: $(cat "$STATE/mode" 2>/dev/null || echo '?')   state: $STATE"
  do_status_lines
  any_alive || return 1
}

do_stop() {
  local purge=0
  while (($#)); do
    case $1 in --purge) purge=1; shift ;; *) die "stop: unknown argument '$1'" ;; esac
  done
  local t0; t0=$(now)
  STOP_TIMES=()
  if ! compgen -G "$RUN/*.pid" >/dev/null; then
    say "nothing to stop (no PID files in $RUN)"
  else
    # services first (in parallel), then the message queue and database, epmd last
    stop_services keystone neutron neutron-noauth octavia-api octavia-api-noauth octavia-worker
    stop_services rabbitmq mariadb
    stop_services epmd
  fi
  say "stopped in $(secs "$t0" "$(now)") s${STOP_TIMES[*]:+ (${STOP_TIMES[*]})}"
  if ((purge)); then
    [[ -d $STATE ]] && rm -rf "$STATE"
    say "purged $STATE"
  fi
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
  install) os_install ;;
  start) do_start "$@" ;;
  stop) do_stop "$@" ;;
  status) do_status ;;
  *) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
