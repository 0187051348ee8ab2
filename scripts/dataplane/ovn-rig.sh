#!/usr/bin/env bash
# The ML2/OVN dataplane on this machine (Debian 12 packages, OpenStack Zed): Open vSwitch in userspace
# (datapath_type=netdev: no openvswitch kernel module needed), OVN (NB and SB databases, northd, ovn-controller),
# neutron-server with ML2/OVN and the OVN L3 plugin (noauth), Octavia with the OVN provider (noauth), MariaDB; no
# RabbitMQ (ML2/OVN has no RPC agents). Ports Raven creates bind to the chassis and carry real packets between network
# namespaces, load balancers too. Facts behind every setting: docs/ovn.md. rig.sh runs this for `--backend ovn`.
#
#   ovn-rig.sh install          install the missing Debian packages (root)
#   ovn-rig.sh start            start everything, wait until the chassis is an alive agent in Neutron and Octavia
#                               answers (root; RAVEN_DATAPLANE_OCTAVIA=0: without Octavia)
#   ovn-rig.sh stop [--purge]   stop exactly what start started, remove the rig's pod namespaces and devices
#                               (--purge: also delete the state dir, except the migrated-database cache)
#   ovn-rig.sh status           what runs, on which port, whether the chassis is alive
#   ovn-rig.sh leftovers        list what the rig or its pods left (namespaces, devices, daemons, listeners); exit 1
#                               if anything
#
# State (config, databases, logs, PID files, sockets, env): ${RAVEN_DATAPLANE_OVN_STATE:-$PWD/.raven/dataplane-ovn}.
# Everything it makes in the root namespace is named rvo-… (and OVS's own ovs-netdev), and its ports are its own, so
# it runs beside the linuxbridge rig.
set -euo pipefail

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV PYENV_VERSION PYTHONSTARTUP || true
export LC_ALL=C.UTF-8 LANG=C.UTF-8

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RIG=dataplane-ovn
# shellcheck source-path=SCRIPTDIR source=../lib/services.sh
source "$SCRIPT_DIR/../lib/services.sh"

STATE=${RAVEN_DATAPLANE_OVN_STATE:-$PWD/.raven/dataplane-ovn}
[[ $STATE == /* ]] || STATE=$PWD/$STATE
RUN=$STATE/run
LOG=$STATE/log
ETC=$STATE/etc
CACHE=$STATE/cache
HOST=127.0.0.1
# The chassis (OVN system-id and hostname): a port binds to it when its binding:host_id is this name.
CHASSIS=rvo-node-1
# The integration bridge, the pods' host-end prefix and the pod namespaces' prefix: rvo-, never the linuxbridge
# rig's names (tap…, brq…, raven-pod-…), so that neither rig's clean-up ever touches the other's.
BRIDGE=rvo-br-int
IF_PREFIX=rvo
NETNS_PREFIX=rvo-pod-
# Own ports: none shared with the linuxbridge rig (29696, 23306, …) or scripts/openstack/real-openstack.sh.
NEUTRON_PORT=39696
MYSQL_PORT=33306
OCTAVIA_PORT=39876
# RAVEN_DATAPLANE_OCTAVIA=0: start without Octavia (Neutron and OVN only; Services are then not translated)
WITH_OCTAVIA=1
[[ ${RAVEN_DATAPLANE_OCTAVIA:-1} == 0 ]] && WITH_OCTAVIA=0

PACKAGES=(
  neutron-server python3-pymysql mariadb-server
  openvswitch-switch ovn-central ovn-host ethtool
  octavia-api python3-ovn-octavia-provider uwsgi-core uwsgi-plugin-python3
  iputils-ping curl iproute2 procps util-linux
)

# start order; stop goes the other way
ALL_SERVICES=(mariadb ovsdb-server ovs-vswitchd ovn-nb ovn-sb ovn-northd ovn-controller neutron-server
  octavia-driver-agent octavia-api)
# uwsgi's master alone gets the SIGTERM (a TERM to its workers only makes them reload); so does the driver agent,
# which sets its children's exit event and waits for them (a TERM to its whole group left it hanging: docs/ovn.md)
STOP_LEADER_ONLY=(octavia-api octavia-driver-agent)

# OVS and OVN tools find their sockets and write their files here, never in /var/run/openvswitch or /var/run/ovn.
export OVS_RUNDIR=$RUN OVS_DBDIR=$STATE/ovs OVS_LOGDIR=$LOG OVS_SYSCONFDIR=$ETC
export OVN_RUNDIR=$RUN OVN_DBDIR=$STATE/ovs OVN_LOGDIR=$LOG OVN_SYSCONFDIR=$ETC
OVS_DB=unix:$RUN/db.sock
export OVN_NB_DB=unix:$RUN/ovnnb_db.sock OVN_SB_DB=unix:$RUN/ovnsb_db.sock

vsctl() { ovs-vsctl --db="$OVS_DB" --timeout=30 "$@"; }

# ---------------------------------------------------------------------------------------------------------------
# config files (all in $ETC; nothing is read from /etc/neutron)
# ---------------------------------------------------------------------------------------------------------------
write_neutron_conf() {
  mkdir -p "$ETC/neutron" "$STATE/neutron/state" "$STATE/lock"
  echo '{}' >"$ETC/neutron/policy.yaml"
  write_noauth_api_paste "$ETC/neutron/api-paste.ini"
  local q debug=false
  [[ ${RAVEN_DATAPLANE_DEBUG:-0} == 1 ]] && debug=true
  {
    cat <<EOF
[DEFAULT]
use_stderr = true
debug = $debug
state_path = $STATE/neutron/state
api_paste_config = $ETC/neutron/api-paste.ini
auth_strategy = noauth
bind_host = $HOST
bind_port = $NEUTRON_PORT
core_plugin = ml2
service_plugins = ovn-router,trunk
# no RPC agents under ML2/OVN: the in-process fake transport, no RabbitMQ
transport_url = fake:/
# at least one API worker process: with 0 the API runs in the parent, ML2/OVN never registers in its hash ring
# ("HashRing is empty"), no chassis shows up as an agent and no port ever binds
api_workers = 1
rpc_workers = 1
rpc_state_report_workers = 0
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
dhcp_agent_notification = false
allow_overlapping_ips = true
agent_down_time = 75
[database]
connection = mysql+pymysql://neutron:${SECRET}@$HOST:$MYSQL_PORT/neutron?charset=utf8mb4
[oslo_concurrency]
lock_path = $STATE/lock
[oslo_policy]
policy_file = $ETC/neutron/policy.yaml
[quotas]
EOF
    for q in network subnet port router floatingip security_group security_group_rule; do
      echo "quota_$q = -1"
    done
    cat <<EOF
[ml2]
type_drivers = geneve,flat
tenant_network_types = geneve
mechanism_drivers = ovn
extension_drivers = port_security
overlay_ip_version = 4
[ml2_type_geneve]
vni_ranges = 1001:2000
# Geneve with OVN's options: network MTU 1442
max_header_size = 38
[securitygroup]
enable_security_group = true
[ovn]
ovn_nb_connection = $OVN_NB_DB
ovn_sb_connection = $OVN_SB_DB
ovn_l3_scheduler = leastloaded
ovn_metadata_enabled = false
enable_distributed_floating_ip = false
# compare Neutron's database with OVN's at start, and only log differences
neutron_sync_mode = log
ovsdb_connection_timeout = 60
EOF
  } >"$ETC/neutron/neutron.conf"
}

# write_octavia_conf: Octavia's API and driver agent with the OVN provider only. The provider driver runs inside the
# API process (it writes OVN's Load_Balancer rows and makes the VIP port through Neutron); the driver agent runs the
# provider's agent (OVN events: member status, VIP port changes) and the status/stats sockets through which the
# provider reports provisioning status back to Octavia's database. No amphorae, no worker, no RabbitMQ.
write_octavia_conf() {
  mkdir -p "$ETC/octavia" "$STATE/octavia" "$STATE/lock/octavia"
  echo '{}' >"$ETC/octavia/policy.yaml"
  cat >"$ETC/octavia/octavia.conf" <<EOF
[DEFAULT]
use_stderr = true
debug = false
# The provider's request thread works after the API has answered, and its status reports to the driver agent are
# retried with a backoff that logs nothing until it gives up: at DEBUG its log shows each request and report.
default_log_levels = ovn_octavia_provider=DEBUG,ovsdbapp=INFO,sqlalchemy=WARN,oslo_policy=INFO,stevedore=WARN,urllib3=WARN,keystoneauth=WARN
# nothing here speaks RPC (no amphora driver, no worker)
transport_url = fake:/
[database]
connection = mysql+pymysql://neutron:${SECRET}@$HOST:$MYSQL_PORT/octavia?charset=utf8mb4
[oslo_concurrency]
lock_path = $STATE/lock/octavia
[oslo_policy]
policy_file = $ETC/octavia/policy.yaml
[api_settings]
auth_strategy = noauth
enabled_provider_drivers = ovn:'The OVN provider driver.'
default_provider_driver = ovn
healthcheck_enabled = false
[driver_agent]
enabled_provider_agents = ovn
status_socket_path = $RUN/octavia-status.sock
stats_socket_path = $RUN/octavia-stats.sock
get_socket_path = $RUN/octavia-get.sock
# the API's validations of networks, subnets and ports go to Neutron, as Octavia itself (the service auth below):
# otherwise with the caller's token, and there is none under noauth ("auth_url was not provided", then 400 "Port …
# not found")
[controller_worker]
network_driver = allowed_address_pairs_driver
[networking]
allow_invisible_resource_usage = true
[ovn]
ovn_nb_connection = $OVN_NB_DB
ovn_sb_connection = $OVN_SB_DB
ovsdb_connection_timeout = 60
# Neutron is noauth: keystoneauth's "none" plugin and the endpoint (used by Octavia and by the OVN provider)
[neutron]
endpoint = http://$HOST:$NEUTRON_PORT
region_name = RegionOne
[service_auth]
auth_type = none
EOF
}

# init_db DB PACKAGE MIGRATE...: the schema from a dump of a freshly migrated database, made once per version of
# PACKAGE (the migration is the slowest step of the start, 45–65 s here for Neutron; loading the dump takes
# seconds). Every start begins from that empty schema, so Neutron's and Octavia's databases and OVN's fresh NB/SB
# never disagree.
init_db() {
  local db=$1 pkg=$2 ver dump
  shift 2
  ver=$(pkg_version "$pkg")
  dump=$CACHE/$db-${ver//[^A-Za-z0-9.+-]/_}.sql
  mysql_cli -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db;"
  if [[ -s $dump ]]; then
    mysql_cli "$db" <"$dump" || die "loading $dump failed (delete it to migrate again)"
    say "$db database: loaded the migrated schema from $dump"
    return 0
  fi
  "$@" >"$LOG/$db-db-manage.log" 2>&1 || {
    tail -n 30 "$LOG/$db-db-manage.log" >&2
    die "$db: $* failed"
  }
  mkdir -p "$CACHE"
  mariadb-dump --no-defaults -uroot --socket="$RUN/mysqld.sock" --single-transaction "$db" >"$dump.tmp"
  mv "$dump.tmp" "$dump"
  say "$db database: migrated, schema cached in $dump"
}

# ---------------------------------------------------------------------------------------------------------------
# OVS and OVN
# ---------------------------------------------------------------------------------------------------------------
# wait_for SERVICE SECONDS WHAT CMD...: until CMD succeeds, while SERVICE stays alive.
wait_for() {
  local svc=$1 timeout=$2 what=$3 t0
  shift 3
  t0=$(date +%s)
  until "$@" >/dev/null 2>&1; do
    alive "$svc" || fail_service "$svc" "exited while starting"
    (($(date +%s) - t0 < timeout)) || fail_service "$svc" "did not get to '$what' within ${timeout}s"
    sleep 0.2
  done
}

# ovsdb NAME SCHEMA SOCKET-NAME DB-NAME: a fresh database (OVN's are rebuilt on every start from Neutron's) served on
# a unix socket in $RUN.
start_ovsdb() {
  local svc=$1 schema=$2 sock=$3 db=$4
  rm -f "$STATE/ovs/$db"
  ovsdb-tool create "$STATE/ovs/$db" "$schema"
  launch "$svc" ovsdb-server "$STATE/ovs/$db" --remote="punix:$RUN/$sock" --unixctl="$RUN/$svc.ctl"
  wait_for "$svc" 30 "listening on $sock" test -S "$RUN/$sock"
}

start_ovs_ovn() {
  mkdir -p "$STATE/ovs"
  start_ovsdb ovsdb-server /usr/share/openvswitch/vswitch.ovsschema db.sock conf.db
  vsctl --no-wait init
  # --monitor, as OVS's own ovs-ctl runs it: a parent process restarts the switch when it dies of a signal. OVS 3.1's
  # userspace conntrack can abort on an assertion under OVN's ACL traffic (docs/ovn.md); a restarted switch gets its
  # flows back from ovn-controller within a second or two.
  launch ovs-vswitchd ovs-vswitchd "$OVS_DB" --unixctl="$RUN/ovs-vswitchd.ctl" --monitor
  # secure: no NORMAL flows of its own, only OVN's; no in-band control flows
  vsctl --may-exist add-br "$BRIDGE" -- set Bridge "$BRIDGE" datapath_type=netdev fail-mode=secure \
    other_config:disable-in-band=true
  start_ovsdb ovn-nb /usr/share/ovn/ovn-nb.ovsschema ovnnb_db.sock ovnnb_db.db
  start_ovsdb ovn-sb /usr/share/ovn/ovn-sb.ovsschema ovnsb_db.sock ovnsb_db.db
  ovn-nbctl --no-wait init
  ovn-sbctl init # (23.03's ovn-sbctl refuses --no-wait)
  launch ovn-northd ovn-northd --ovnnb-db="$OVN_NB_DB" --ovnsb-db="$OVN_SB_DB" --unixctl="$RUN/ovn-northd.ctl"
  vsctl set Open_vSwitch . external_ids:system-id="$CHASSIS" external_ids:hostname="$CHASSIS" \
    external_ids:ovn-remote="$OVN_SB_DB" external_ids:ovn-encap-type=geneve external_ids:ovn-encap-ip="$HOST" \
    external_ids:ovn-bridge="$BRIDGE" external_ids:ovn-bridge-datapath-type=netdev
  launch ovn-controller ovn-controller "$OVS_DB"
  wait_for ovn-controller 60 "chassis $CHASSIS in the SB database" \
    bash -c "ovn-sbctl --bare --columns=name list Chassis | grep -qx '$CHASSIS'"
}

# chassis_alive: the chassis is an alive "OVN Controller agent" in Neutron (noauth: admin, no token needed); no port
# binds before that.
chassis_alive() {
  curl -s -m 5 "http://$HOST:$NEUTRON_PORT/v2.0/agents?host=$CHASSIS" | /usr/bin/python3 -c '
import json, sys
agents = json.load(sys.stdin)["agents"]
sys.exit(0 if any(a["alive"] and a["agent_type"] == "OVN Controller agent" for a in agents) else 1)'
}

# ---------------------------------------------------------------------------------------------------------------
# the root namespace: what the rig and its pods make there
# ---------------------------------------------------------------------------------------------------------------
# rig_objects: "kind<TAB>name" per namespace or device of the rig's: pod namespaces (rvo-…), pod host ends
# (rvo<port id[:11]>), the bridge's and the datapath's devices. ovs-netdev counts only while no ovs-vswitchd runs at
# all (otherwise it is that switch's).
rig_objects() {
  ip netns list 2>/dev/null | awk '$1 ~ /^rvo-/ { print "netns\t" $1 }'
  ip -o link show 2>/dev/null | awk -F': ' -v br="$BRIDGE" '{ sub(/@.*/, "", $2) }
    $2 ~ /^rvo[0-9a-f]{8}-[0-9a-f]{2}$/ || $2 == br || $2 ~ /^genev_sys/ { print "link\t" $2 }'
  if [[ -e /sys/class/net/ovs-netdev ]] && ! pgrep -x ovs-vswitchd >/dev/null; then printf 'link\tovs-netdev\n'; fi
}

# remove_pods: the pods' processes (a namespace lives on while one holds it), their namespaces, their host ends; and
# once no ovs-vswitchd runs at all, the datapath devices a crashed or killed one left (a clean exit removes them).
remove_pods() {
  local kind name p
  while IFS=$'\t' read -r kind name; do
    [[ $kind == netns && $name == "$NETNS_PREFIX"* ]] || continue
    for p in $(ip netns pids "$name" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns delete "$name" 2>/dev/null || say "  could not delete netns $name"
  done < <(rig_objects)
  while IFS=$'\t' read -r kind name; do
    [[ $kind == link ]] || continue
    if [[ $name == "$BRIDGE" || $name == ovs-netdev || $name == genev_sys* ]] && pgrep -x ovs-vswitchd >/dev/null; then
      continue
    fi
    ip link delete dev "$name" 2>/dev/null || true
  done < <(rig_objects)
}

# report_switch_crashes: how often ovs-vswitchd died and its monitor restarted it since the last start (the log is
# appended to; `launch` marks each start), with the assertion it died on.
report_switch_crashes() {
  local f=$LOG/ovs-vswitchd.log since n
  [[ -f $f ]] || return 0
  since=$({ grep -n '^===== .* starting ovs-vswitchd' "$f" || true; } | tail -n 1 | cut -d: -f1)
  # the monitor counts them: "<n> crashes: pid … died, … restarting"
  n=$(tail -n +"${since:-1}" "$f" | awk 'match($0, /\|ERR\|[0-9]+ crashes/) {
    v = substr($0, RSTART + 5, RLENGTH - 13) + 0; if (v > n) n = v } END { print n + 0 }')
  ((n > 0)) || return 0
  say "stop: ovs-vswitchd crashed $n time(s) while the rig ran and was restarted by its monitor:" \
    "$(tail -n +"${since:-1}" "$f" | grep -o 'assertion .*' | sort -u | head -n 1)"
}

# ---------------------------------------------------------------------------------------------------------------
# start / stop / status
# ---------------------------------------------------------------------------------------------------------------
write_outputs() {
  local f=$STATE/clouds.yaml
  cat >"$f.tmp" <<EOF
# written by scripts/dataplane/ovn-rig.sh start ($(date -u +%FT%TZ))
clouds:
  dataplane-ovn:
    auth_type: none
    network_endpoint_override: http://$HOST:$NEUTRON_PORT
    region_name: RegionOne
EOF
  # Octavia noauth takes the project from X-Project-Id: the one noauth Neutron puts header-less requests in (Raven
  # sends load_balancer_project_id to Octavia only; the openstack CLI ignores it)
  if ((WITH_OCTAVIA)); then
    printf '    %s\n' "load_balancer_endpoint_override: http://$HOST:$OCTAVIA_PORT" \
      "load_balancer_project_id: fake_project_id" >>"$f.tmp"
  fi
  mv "$f.tmp" "$f"
  cat >"$STATE/env" <<EOF
# written by scripts/dataplane/ovn-rig.sh start; source it or read it as KEY=VALUE
RAVEN_DATAPLANE_BACKEND=ovn
RAVEN_DATAPLANE_STATE=$STATE
RAVEN_DATAPLANE_NEUTRON_URL=http://$HOST:$NEUTRON_PORT
RAVEN_DATAPLANE_HOST=$CHASSIS
RAVEN_DATAPLANE_CLOUDS=$STATE/clouds.yaml
RAVEN_DATAPLANE_CLOUD=dataplane-ovn
RAVEN_DATAPLANE_OVS_DATABASE=$OVS_DB
RAVEN_DATAPLANE_OVS_BRIDGE=$BRIDGE
RAVEN_DATAPLANE_INTERFACE_PREFIX=$IF_PREFIX
RAVEN_DATAPLANE_NETNS_PREFIX=$NETNS_PREFIX
OS_CLIENT_CONFIG_FILE=$STATE/clouds.yaml
OS_CLOUD=dataplane-ovn
RAVEN_DATAPLANE_NEUTRON_PORT=$NEUTRON_PORT
RAVEN_DATAPLANE_MYSQL_PORT=$MYSQL_PORT
EOF
  if ((WITH_OCTAVIA)); then
    printf '%s\n' "RAVEN_DATAPLANE_OCTAVIA_URL=http://$HOST:$OCTAVIA_PORT" "RAVEN_DATAPLANE_OCTAVIA_PROVIDER=ovn" \
      "RAVEN_DATAPLANE_OCTAVIA_PORT=$OCTAVIA_PORT" >>"$STATE/env"
  fi
}

# launch_octavia: the driver agent first (it makes the sockets the provider reports through), then the API. Neither
# needs Neutron to start, so they start beside neutron-server; wait_octavia waits for both.
launch_octavia() {
  # both through bin/octavia-ovn: the OVN provider ignores the configured socket paths (docs/ovn.md)
  launch octavia-driver-agent "$SCRIPT_DIR/bin/octavia-ovn" --config-file "$ETC/octavia/octavia.conf"
  launch octavia-api uwsgi-core --add-header "Connection: close" --plugin python3 --master --processes 1 --threads 4 \
    --lazy-apps --die-on-term --need-app --buffer-size 65535 --enable-threads --thunder-lock \
    --http-socket "$HOST:$OCTAVIA_PORT" --wsgi-file "$SCRIPT_DIR/bin/octavia-ovn" \
    --pyargv "--config-file $ETC/octavia/octavia.conf"
}

wait_octavia() {
  wait_for octavia-driver-agent 60 "its status socket" test -S "$RUN/octavia-status.sock"
  wait_http octavia-api "http://$HOST:$OCTAVIA_PORT/" 120
}

do_start() {
  (($# == 0)) || die "start: unknown argument '$1'"
  need_root start "it runs Open vSwitch and makes network devices"
  mkdir -p "$RUN" "$LOG" "$ETC"
  if any_alive; then
    local s incomplete=0
    for s in "${ALL_SERVICES[@]}"; do alive "$s" || incomplete=1; done
    if ((incomplete == 0)); then
      say "already running; state: $STATE"
      return 0
    fi
    die "some services of an earlier start still run (see '$0 status'); run '$0 stop' first"
  fi
  ports_free "$MYSQL_PORT" "$NEUTRON_PORT" "$OCTAVIA_PORT" || exit 1
  # the userspace datapath's device is always "ovs-netdev": one such switch per network namespace
  if pgrep -x ovs-vswitchd >/dev/null; then die "another ovs-vswitchd runs on this machine; this rig needs its own"; fi
  local T0 t
  T0=$(now)
  STARTED=()
  trap on_start_exit EXIT
  date -u +%FT%TZ >"$STATE/active"

  if [[ -n "$(pkg_missing "${PACKAGES[@]}")" ]]; then
    t=$(now)
    pkg_install install "${PACKAGES[@]}"
    timing "install missing packages" "$t"
  fi

  t=$(now)
  write_secret
  chmod 0700 "$ETC" # the config holds the DB password
  (
    umask 077
    write_neutron_conf
    write_octavia_conf
  )
  timing "config files" "$t"

  start_mariadb neutron "$SECRET" neutron octavia
  t=$(now)
  start_ovs_ovn
  timing "ovs + ovn (chassis up)" "$t"
  t=$(now)
  init_db neutron neutron-server neutron-db-manage --config-file "$ETC/neutron/neutron.conf" upgrade heads
  timing "neutron db (cache or migrate)" "$t"
  if ((WITH_OCTAVIA)); then
    t=$(now)
    init_db octavia octavia-api octavia-db-manage --config-file "$ETC/octavia/octavia.conf" upgrade head
    timing "octavia db (cache or migrate)" "$t"
  fi

  t=$(now)
  launch neutron-server neutron-server --config-file "$ETC/neutron/neutron.conf"
  if ((WITH_OCTAVIA)); then launch_octavia; fi
  wait_http neutron-server "http://$HOST:$NEUTRON_PORT/" 180
  timing "neutron-server API ready" "$t"
  wait_for neutron-server 180 "chassis $CHASSIS alive as an OVN Controller agent" chassis_alive
  timing "chassis alive in Neutron" "$t"

  if ((WITH_OCTAVIA)); then
    wait_octavia
    timing "octavia api + driver agent up" "$t"
  fi

  write_outputs
  trap - EXIT
  timing "TOTAL start" "$T0"
  say "Neutron ML2/OVN dataplane (Zed, Debian packages) running on $HOST, chassis $CHASSIS, bridge $BRIDGE"
  do_status_lines
  say "timings:"
  printf '  %s\n' "${TIMINGS[@]}"
  say "clouds.yaml: $STATE/clouds.yaml (cloud 'dataplane-ovn')   env: $STATE/env   logs: $LOG/"
}

service_port() {
  case $1 in
    mariadb) echo "$MYSQL_PORT" ;;
    neutron-server) echo "$NEUTRON_PORT" ;;
    octavia-api) echo "$OCTAVIA_PORT" ;;
    *) echo - ;;
  esac
}

do_status_lines() {
  service_lines
  if alive neutron-server; then
    if chassis_alive 2>/dev/null; then say "  chassis $CHASSIS: OVN_Controller_agent=alive"; else
      say "  chassis $CHASSIS: not alive in Neutron"
    fi
  fi
}

do_stop() {
  local purge=0
  while (($#)); do
    case $1 in
      --purge)
        purge=1
        shift
        ;;
      *) die "stop: unknown argument '$1'" ;;
    esac
  done
  local t0
  t0=$(now)
  STOP_TIMES=()
  if ! compgen -G "$RUN/*.pid" >/dev/null && [[ ! -f $STATE/active ]]; then
    say "nothing to stop (no PID files in $RUN)"
    if [[ -n "$(rig_objects)" ]]; then
      need_root stop "it removes the rig's namespaces and devices"
      remove_pods
    fi
  else
    need_root stop "it removes the rig's namespaces and devices"
    remove_pods
    stop_services octavia-api octavia-driver-agent
    stop_services neutron-server
    stop_services ovn-controller ovn-northd
    stop_services ovn-sb ovn-nb
    # "exit --cleanup": ovs-vswitchd deletes its datapath devices (ovs-netdev, the bridge); a plain SIGTERM leaves
    # them behind. It answers before it is done: wait for the process to go.
    if alive ovs-vswitchd; then
      local pid
      pid=$(pid_of ovs-vswitchd)
      timeout 15 ovs-appctl -t "$RUN/ovs-vswitchd.ctl" exit --cleanup >/dev/null 2>&1 || true
      for _ in $(seq 75); do [[ -d /proc/$pid ]] || break; sleep 0.2; done
    fi
    stop_services ovs-vswitchd
    stop_services ovsdb-server mariadb
    report_switch_crashes
    say "stopped in $(secs "$t0" "$(now)") s${STOP_TIMES[*]:+ (${STOP_TIMES[*]})}"
    remove_pods
    rm -f "$STATE/active" "$RUN"/*.sock "$RUN"/*.ctl
  fi
  if ((purge)); then
    if [[ -d $STATE ]]; then find "$STATE" -mindepth 1 -maxdepth 1 ! -name cache -exec rm -rf {} +; fi
    say "purged $STATE (kept $CACHE)"
  fi
}

do_leftovers() {
  local objs daemons="" s listeners
  objs=$(rig_objects)
  for s in "${ALL_SERVICES[@]}"; do alive "$s" && daemons+="$s "; done
  listeners=$(ss -ltnH "( sport = :$NEUTRON_PORT or sport = :$MYSQL_PORT or sport = :$OCTAVIA_PORT )" 2>/dev/null ||
    true)
  if [[ -z $objs && -z $daemons && -z $listeners ]]; then
    say "clean: no rvo- namespaces or devices, no rig daemons, nothing listening on $NEUTRON_PORT/$MYSQL_PORT/$OCTAVIA_PORT"
    return 0
  fi
  [[ -z $objs ]] || {
    say "namespaces and devices of the rig or its pods:"
    sed -e 's/^/  /' -e 's/\t/ /g' <<<"$objs"
  }
  [[ -z $daemons ]] || say "rig daemons still running: $daemons"
  [[ -z $listeners ]] || say "still listening: $(tr '\n' ' ' <<<"$listeners")"
  return 1
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
  install)
    need_root install "apt-get"
    pkg_install install "${PACKAGES[@]}"
    ;;
  start) do_start "$@" ;;
  stop) do_stop "$@" ;;
  status) do_status ;;
  leftovers) do_leftovers ;;
  *)
    sed -n '8,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
