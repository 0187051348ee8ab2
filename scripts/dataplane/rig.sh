#!/usr/bin/env bash
# A real Neutron dataplane on this machine (Debian 12 packages, OpenStack Zed): neutron-server (noauth) with ML2
# linuxbridge + l2population, a linuxbridge agent and an L3 agent, all on 127.0.0.1, so that ports Raven creates
# carry real packets between network namespaces. Facts behind every setting: docs/dataplane.md.
#
#   rig.sh install          install the missing Debian packages (root)
#   rig.sh start            start everything, wait until both agents are alive (root)
#   rig.sh stop [--purge]   stop exactly what start started, remove the Neutron-made objects start did not find
#                           (--purge: also delete the state dir)
#   rig.sh status           what runs, on which port, whether the agents are alive
#   rig.sh leftovers        list Neutron-made objects in the root namespace that were not there before start;
#                           exit 1 if there are any (check-clean.sh)
#
# State (config, database, logs, PID files, snapshot, clouds.yaml, env): ${RAVEN_DATAPLANE_STATE:-$PWD/.raven/dataplane}
#
# Backends: `--backend ovn` (the default: ML2/OVN with Octavia's OVN provider, ovn-rig.sh, state in
# .raven/dataplane-ovn) or `--backend linuxbridge` (this script, kept while Zed ships the driver), anywhere in the
# arguments or as RAVEN_DATAPLANE_BACKEND.
set -euo pipefail

backend=${RAVEN_DATAPLANE_BACKEND:-ovn}
args=()
while (($#)); do
  case $1 in
    --backend)
      [[ $# -ge 2 ]] || { echo "rig.sh: --backend needs a value (linuxbridge or ovn)" >&2; exit 2; }
      backend=$2
      shift 2
      ;;
    --backend=*)
      backend=${1#--backend=}
      shift
      ;;
    *)
      args+=("$1")
      shift
      ;;
  esac
done
set -- "${args[@]}"
case $backend in
  linuxbridge) ;;
  ovn) exec bash "$(dirname "${BASH_SOURCE[0]}")/ovn-rig.sh" "$@" ;;
  *) echo "rig.sh: unknown backend '$backend' (linuxbridge or ovn)" >&2; exit 2 ;;
esac

# Debian's python3 and tools only: a pyenv shim or a virtualenv must not shadow /usr/bin/python3.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV PYENV_VERSION PYTHONSTARTUP || true
export LC_ALL=C.UTF-8 LANG=C.UTF-8

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RIG=dataplane
# shellcheck source-path=SCRIPTDIR source=../lib/services.sh
source "$SCRIPT_DIR/../lib/services.sh"

STATE=${RAVEN_DATAPLANE_STATE:-$PWD/.raven/dataplane}
[[ $STATE == /* ]] || STATE=$PWD/$STATE
RUN=$STATE/run
LOG=$STATE/log
ETC=$STATE/etc
HOST=127.0.0.1
# The agents' host name: a port binds to them when its binding:host_id is this name.
AGENT_HOST=raven-dp-node-1

# Own ports, none shared with scripts/openstack/real-openstack.sh, so both can run at once.
NEUTRON_PORT=29696
MYSQL_PORT=23306
RABBIT_PORT=25673
RABBIT_DIST_PORT=45673
EPMD_PORT=24369
RABBIT_NODENAME=dataplane@localhost

PACKAGES=(
  neutron-server neutron-linuxbridge-agent neutron-l3-agent
  mariadb-server rabbitmq-server python3-pymysql
  dnsmasq-base ipset iptables ebtables bridge-utils conntrack sudo
  containernetworking-plugins iputils-ping
  curl iproute2 procps util-linux
)

ALL_SERVICES=(epmd mariadb rabbitmq neutron-server linuxbridge-agent l3-agent)
AGENTS=(linuxbridge-agent l3-agent)
# stop: SIGTERM to the agent alone; its privsep helpers exit when it closes their sockets. A TERM to the whole group
# kills the helpers while the agent still works, and it starts new ones (sudo privsep-helper) instead of exiting.
STOP_LEADER_ONLY=("${AGENTS[@]}")

# Root-namespace settings the rig must leave as they were (restored by stop if anything changed them).
SYSCTLS=(net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv6.conf.all.forwarding
  net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables net.bridge.bridge-nf-call-arptables)

# indent: a listing as the user reads it, two spaces in, fields separated by spaces
indent() { sed -e 's/^/  /' -e 's/\t/ /g'; }

# ---------------------------------------------------------------------------------------------------------------
# the root namespace: what the agents create there, snapshot before start, remove after stop
# ---------------------------------------------------------------------------------------------------------------
# scan_objects: one line per object of a kind the agents create, "kind<TAB>table<TAB>name-or-rule", sorted. Names
# must have Neutron's exact shape (<prefix> + the start of a UUID), so that e.g. an OpenVPN tap0 is never touched.
#   netns      qrouter-<router id> namespaces (L3 agent)
#   link       brq<network id[:11]> bridges, vxlan-<vni> devices (linuxbridge agent), tap<port id[:11]> devices (the
#              CNI side's veth ends, or the router ports' the L3 agent made)
#   ipt4/ipt6  neutron-* chains, and rules in other chains that jump to them (the hooks in FORWARD, INPUT, ...)
#   ipset      NIPv4/NIPv6<security group id> sets (security groups with enable_ipset)
#   ebt        neutronARP-/neutronMAC- ebtables chains (anti-spoofing) and the rules that jump to them
scan_objects() {
  local fam save
  {
    ip netns list 2>/dev/null | awk '$1 ~ /^qrouter-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/ {
      print "netns\t-\t" $1 }'
    ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2) }
      $2 ~ /^(brq|tap)[0-9a-f]{8}-[0-9a-f]{2}$/ || $2 ~ /^vxlan-[0-9]+$/ { print "link\t-\t" $2 }'
    for fam in 4 6; do
      save=iptables-save
      [[ $fam == 6 ]] && save=ip6tables-save
      "$save" 2>/dev/null | awk -v k="ipt$fam" '
        /^\*/ { t = substr($0, 2) }
        /^:neutron-/ { split(substr($0, 2), a, " "); print k "-chain\t" t "\t" a[1] }
        /^-A / && $2 !~ /^neutron-/ && / -[jg] neutron-/ { print k "-rule\t" t "\t" $0 }'
    done
    ipset list -n 2>/dev/null | awk '/^NIPv[46][0-9a-f]{8}-/ { print "ipset\t-\t" $1 }'
    ebtables-save 2>/dev/null | awk '
      /^\*/ { t = substr($0, 2) }
      /^:neutron(ARP|MAC)-/ { split(substr($0, 2), a, " "); print "ebt-chain\t" t "\t" a[1] }
      /^-A / && $2 !~ /^neutron/ && / -j neutron(ARP|MAC)-/ { print "ebt-rule\t" t "\t" $0 }'
  } | LC_ALL=C sort -u
}

read_sysctls() {
  local k v
  for k in "${SYSCTLS[@]}"; do
    v=$(sysctl -n "$k" 2>/dev/null) || continue
    printf '%s=%s\n' "$k" "$v"
  done
}

# take_snapshot: the baseline stop and `leftovers` compare against. A start after a run that was never stopped
# (crash, reboot, killed processes) keeps that run's snapshot, so that its leftovers are still cleaned up.
take_snapshot() {
  if [[ -f $STATE/active && -f $STATE/snapshot ]]; then
    say "start: the previous run was not stopped; keeping its snapshot of the root namespace"
  else
    scan_objects >"$STATE/snapshot.tmp"
    mv "$STATE/snapshot.tmp" "$STATE/snapshot"
    read_sysctls >"$STATE/sysctl.snapshot"
  fi
  date -u +%FT%TZ >"$STATE/active"
}

# leftover_objects: objects now present that the snapshot does not have (everything, without a snapshot).
leftover_objects() {
  local base=/dev/null
  [[ -f $STATE/snapshot ]] && base=$STATE/snapshot
  LC_ALL=C comm -13 "$base" <(scan_objects)
}

# sysctl_drift: "key=was->now" for root-namespace settings that differ from the snapshot.
sysctl_drift() {
  [[ -f $STATE/sysctl.snapshot ]] || return 0
  local line k v now
  while IFS= read -r line; do
    k=${line%%=*}
    v=${line#*=}
    now=$(sysctl -n "$k" 2>/dev/null) || continue
    [[ "$now" == "$v" ]] || printf '%s=%s->%s\n' "$k" "$v" "$now"
  done <"$STATE/sysctl.snapshot"
}

# ebt_delete_rule TABLE RULE-LINE: deletes one ebtables rule given as ebtables-save prints it. By spec first; if
# ebtables-nft refuses that (it does for some matches), by rule number: the listed rule with the same words.
ebt_delete_rule() {
  local table=$1 line=$2 chain words n
  read -r -a words <<<"${line#-A }"
  chain=${words[0]}
  if ebtables -t "$table" -D "${words[@]}" 2>/dev/null; then return 0; fi
  local want have
  want=$(printf '%s\n' "${words[@]:1}" | LC_ALL=C sort | tr '\n' ' ')
  while IFS= read -r n; do
    ebtables -t "$table" -D "$chain" "$n" && return 0
  done < <(ebtables -t "$table" -L "$chain" --Ln 2>/dev/null | while IFS= read -r l; do
    [[ $l =~ ^([0-9]+)\.?\ (.*)$ ]] || continue
    # shellcheck disable=SC2086 # split the listed rule into words on purpose
    have=$(printf '%s\n' ${BASH_REMATCH[2]} | LC_ALL=C sort | tr '\n' ' ')
    [[ "$have" == "$want" ]] && echo "${BASH_REMATCH[1]}"
  done | sort -rn | head -n 1)
  return 1
}

# remove_leftovers: deletes what leftover_objects lists, in an order that lets each step succeed (namespaces and
# devices, then the jumps into neutron chains, the chains, the ipsets they matched, ebtables), then puts changed
# root-namespace sysctls back. It never flushes a table, only the neutron chains it deletes.
remove_leftovers() {
  local objs kind table name fam
  objs=$(leftover_objects)
  if [[ -z $objs ]]; then
    say "stop: no Neutron-made objects left in the root namespace"
  else
    # a count per kind (the full list: RAVEN_DATAPLANE_VERBOSE=1)
    say "stop: removing Neutron-made objects that were not there before start: $(cut -f1 <<<"$objs" | uniq -c |
      awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }')"
    if [[ ${RAVEN_DATAPLANE_VERBOSE:-0} == 1 ]]; then indent <<<"$objs"; fi
    # processes inside our qrouter namespaces (none with legacy routers and no metadata proxy, but radvd or haproxy
    # would be ours), then the namespaces; their veth peers in the root namespace go with them
    while IFS=$'\t' read -r kind table name; do
      [[ $kind == netns ]] || continue
      local p
      for p in $(ip netns pids "$name" 2>/dev/null); do
        say "  killing pid $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80)) in $name"
        kill -KILL "$p" 2>/dev/null || true
      done
      ip netns delete "$name" 2>/dev/null || say "  could not delete netns $name"
    done <<<"$objs"
    while IFS=$'\t' read -r kind table name; do
      [[ $kind == link ]] || continue
      if ip link show dev "$name" >/dev/null 2>&1; then
        ip link delete dev "$name" 2>/dev/null || say "  could not delete link $name"
      fi
    done <<<"$objs"
    # iptables: per table one iptables-restore --noflush: the jumps out of other chains, then flush and delete the
    # neutron chains (flush all before deleting any: they jump to each other)
    for fam in 4 6; do
      local restore=iptables-restore script t tables
      [[ $fam == 6 ]] && restore=ip6tables-restore
      tables=$(awk -F'\t' -v k="ipt$fam" '$1 ~ "^" k "-" { print $2 }' <<<"$objs" | sort -u)
      for t in $tables; do
        script=$(
          echo "*$t"
          awk -F'\t' -v k="ipt$fam-rule" -v t="$t" '$1 == k && $2 == t { sub(/^-A /, "-D ", $3); print $3 }' <<<"$objs"
          awk -F'\t' -v k="ipt$fam-chain" -v t="$t" '$1 == k && $2 == t { print "-F " $3 }' <<<"$objs"
          awk -F'\t' -v k="ipt$fam-chain" -v t="$t" '$1 == k && $2 == t { print "-X " $3 }' <<<"$objs"
          echo COMMIT
        )
        if ! "$restore" --noflush <<<"$script" 2>"$LOG/cleanup-ipt.err"; then
          # one by one, so that one failing line (e.g. a chain something else still jumps to) keeps the rest
          say "  ipt$fam $t: batch failed ($(head -n 1 "$LOG/cleanup-ipt.err")); one by one"
          local l words cmd=iptables
          [[ $fam == 6 ]] && cmd=ip6tables
          while IFS= read -r l; do
            [[ $l == -[DFX]* ]] || continue
            printf '*%s\n%s\nCOMMIT\n' "$t" "$l" | "$restore" --noflush 2>/dev/null || say "  failed: $cmd -t $t $l"
          done <<<"$script"
        fi
      done
    done
    while IFS=$'\t' read -r kind table name; do
      [[ $kind == ipset ]] || continue
      ipset destroy "$name" 2>/dev/null || say "  could not destroy ipset $name"
    done <<<"$objs"
    while IFS=$'\t' read -r kind table name; do
      [[ $kind == ebt-rule ]] || continue
      ebt_delete_rule "$table" "$name" || say "  could not delete ebtables -t $table rule: $name"
    done <<<"$objs"
    while IFS=$'\t' read -r kind table name; do
      [[ $kind == ebt-chain ]] || continue
      ebtables -t "$table" -F "$name" 2>/dev/null || true
      ebtables -t "$table" -X "$name" 2>/dev/null || say "  could not delete ebtables -t $table chain $name"
    done <<<"$objs"
    objs=$(leftover_objects)
    if [[ -n $objs ]]; then
      say "stop: still left (see '$0 leftovers'):"
      indent <<<"$objs"
    fi
  fi
  local d k
  for d in $(sysctl_drift); do
    k=${d%%=*}
    say "stop: $k changed while the rig ran (${d#*=}); restoring it"
    sysctl -q -w "$k=$(sed -n "s/^$k=//p" "$STATE/sysctl.snapshot")" || say "  could not restore $k"
  done
}

# ---------------------------------------------------------------------------------------------------------------
# config files (all in $ETC; nothing is read from /etc/neutron)
# ---------------------------------------------------------------------------------------------------------------
write_neutron_conf() {
  mkdir -p "$ETC/neutron/policy.d" "$STATE/neutron/state" "$STATE/lock"
  echo '{}' >"$ETC/neutron/policy.yaml"
  write_noauth_api_paste "$ETC/neutron/api-paste.ini"
  local q debug=false
  [[ ${RAVEN_DATAPLANE_DEBUG:-0} == 1 ]] && debug=true
  # Read by the server and both agents (each agent adds its own .ini).
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
service_plugins = router
# real RPC: the agents talk to the server through RabbitMQ (fake:/ only works inside one process)
transport_url = rabbit://guest:guest@$HOST:$RABBIT_PORT/
api_workers = 0
rpc_workers = 1
rpc_state_report_workers = 0
# no Nova and no DHCP agent here
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
dhcp_agent_notification = false
allow_overlapping_ips = true
# agents report every 5 s; one that misses 20 s is dead
agent_down_time = 20
[agent]
report_interval = 5
# Debian's helper minus rootwrap: everything runs as root already; oslo.privsep starts "sudo privsep-helper"
# children in the agent's process group
root_helper = sudo
root_helper_daemon =
[experimental]
# Zed refuses to load the linuxbridge mechanism driver and agent without it
linuxbridge = true
[database]
connection = mysql+pymysql://neutron:${SECRET}@$HOST:$MYSQL_PORT/neutron?charset=utf8mb4
[oslo_concurrency]
lock_path = $STATE/lock
[oslo_policy]
policy_file = $ETC/neutron/policy.yaml
policy_dirs = $ETC/neutron/policy.d
[quotas]
EOF
    for q in network subnet port router floatingip security_group security_group_rule; do
      echo "quota_$q = -1"
    done
    cat <<EOF
[ml2]
type_drivers = flat,vxlan
tenant_network_types = vxlan
# l2population: without it VXLAN on lo runs in multicast mode, flooded frames come back through lo and the bridge
# learns pod MACs on the vxlan port (heavy packet loss); with it one host floods nothing
mechanism_drivers = linuxbridge,l2population
extension_drivers = port_security
[ml2_type_vxlan]
vni_ranges = 1:1000
[securitygroup]
enable_security_group = true
firewall_driver = iptables
enable_ipset = true
EOF
  } >"$ETC/neutron/neutron.conf"

  cat >"$ETC/neutron/linuxbridge_agent.ini" <<EOF
[DEFAULT]
host = $AGENT_HOST
[agent]
polling_interval = 2
[linux_bridge]
physical_interface_mappings =
bridge_mappings =
[vxlan]
enable_vxlan = true
local_ip = $HOST
l2_population = true
arp_responder = false
[securitygroup]
enable_security_group = true
firewall_driver = iptables
enable_ipset = true
EOF

  cat >"$ETC/neutron/l3_agent.ini" <<EOF
[DEFAULT]
host = $AGENT_HOST
interface_driver = linuxbridge
agent_mode = legacy
# otherwise every router gets a haproxy
enable_metadata_proxy = false
[agent]
extensions =
EOF
}

init_neutron_db() {
  local mark=$STATE/marks/neutron ver
  ver=$(pkg_version neutron-server)
  if [[ "$(cat "$mark" 2>/dev/null)" != "$ver" ]]; then
    neutron-db-manage --config-file "$ETC/neutron/neutron.conf" upgrade heads >"$LOG/neutron-db-manage.log" 2>&1 ||
      {
        tail -n 30 "$LOG/neutron-db-manage.log" >&2
        die "neutron-db-manage upgrade heads failed"
      }
    echo "$ver" >"$mark"
  fi
}

# ---------------------------------------------------------------------------------------------------------------
# agents
# ---------------------------------------------------------------------------------------------------------------
# agents_json: GET /v2.0/agents?host=... (noauth: the API runs as admin, no token, no X-Project-Id needed)
agents_json() { curl -s -m 5 "http://$HOST:$NEUTRON_PORT/v2.0/agents?host=$AGENT_HOST"; }

# agents_state SINCE: "<type>=<alive>" per agent type; an agent counts as alive only once it has (re)started after
# SINCE (UTC, "YYYY-MM-DD HH:MM:SS"), so that a row left alive by the previous run does not count.
agents_state() {
  agents_json | /usr/bin/python3 -c '
import json, sys
since = sys.argv[1]
try:
    agents = json.load(sys.stdin)["agents"]
except Exception:
    sys.exit(0)
for a in agents:
    fresh = (a.get("started_at") or "") >= since
    print("%s=%s" % (a["agent_type"].replace(" ", "_"), "alive" if a["alive"] and fresh else "dead"))
' "${1:-0}"
}

# rpc_consumers: "queue=consumers" for the server's RPC topics (a passive declare through kombu, which
# oslo.messaging uses; queue=none while it does not exist).
RPC_QUEUES=(q-plugin q-l3-plugin q-reports-plugin q-server-resource-versions)
rpc_consumers() {
  /usr/bin/python3 - "amqp://guest:guest@$HOST:$RABBIT_PORT//" "${RPC_QUEUES[@]}" <<'EOF' 2>/dev/null || true
import sys
import kombu
with kombu.Connection(sys.argv[1], connect_timeout=3) as conn:
    for q in sys.argv[2:]:
        ch = conn.channel()
        try:
            print("%s=%d" % (q, ch.queue_declare(queue=q, passive=True).consumer_count))
        except Exception:
            print("%s=none" % q)
EOF
}

wait_rpc_consumers() {
  local timeout=$1 t0 st q ok
  t0=$(date +%s)
  while :; do
    alive neutron-server || fail_service neutron-server "exited while starting"
    st=$(rpc_consumers)
    ok=1
    for q in "${RPC_QUEUES[@]}"; do grep -Eqx "$q=[1-9][0-9]*" <<<"$st" || ok=0; done
    ((ok)) && return 0
    (($(date +%s) - t0 < timeout)) ||
      fail_service neutron-server "did not consume its RPC topics within ${timeout}s ($(tr '\n' ' ' <<<"$st"))"
    sleep 0.3
  done
}

wait_agents() {
  local since=$1 timeout=${2:-120} t0 st
  t0=$(date +%s)
  while :; do
    local s
    for s in "${AGENTS[@]}"; do alive "$s" || fail_service "$s" "exited while starting"; done
    st=$(agents_state "$since")
    if grep -qx 'Linux_bridge_agent=alive' <<<"$st" && grep -qx 'L3_agent=alive' <<<"$st"; then return 0; fi
    (($(date +%s) - t0 < timeout)) || {
      say "agents: ${st:-none}" >&2
      fail_service linuxbridge-agent "and l3-agent were not both alive in Neutron within ${timeout}s"
    }
    sleep 0.5
  done
}

# ---------------------------------------------------------------------------------------------------------------
# start / stop / status
# ---------------------------------------------------------------------------------------------------------------
write_outputs() {
  local f=$STATE/clouds.yaml
  cat >"$f.tmp" <<EOF
# written by scripts/dataplane/rig.sh start ($(date -u +%FT%TZ))
clouds:
  dataplane:
    auth_type: none
    network_endpoint_override: http://$HOST:$NEUTRON_PORT
    region_name: RegionOne
EOF
  mv "$f.tmp" "$f"
  cat >"$STATE/env" <<EOF
# written by scripts/dataplane/rig.sh start; source it or read it as KEY=VALUE
RAVEN_DATAPLANE_STATE=$STATE
RAVEN_DATAPLANE_NEUTRON_URL=http://$HOST:$NEUTRON_PORT
RAVEN_DATAPLANE_HOST=$AGENT_HOST
RAVEN_DATAPLANE_CLOUDS=$STATE/clouds.yaml
RAVEN_DATAPLANE_CLOUD=dataplane
OS_CLIENT_CONFIG_FILE=$STATE/clouds.yaml
OS_CLOUD=dataplane
RAVEN_DATAPLANE_NEUTRON_PORT=$NEUTRON_PORT
RAVEN_DATAPLANE_MYSQL_PORT=$MYSQL_PORT
RAVEN_DATAPLANE_RABBIT_PORT=$RABBIT_PORT
RAVEN_DATAPLANE_EPMD_PORT=$EPMD_PORT
EOF
}

do_start() {
  (($# == 0)) || die "start: unknown argument '$1'"
  need_root start "it runs the agents, which create bridges, namespaces and iptables rules"
  mkdir -p "$RUN" "$LOG" "$ETC" "$STATE/marks"
  if any_alive; then
    local s incomplete=0
    for s in "${ALL_SERVICES[@]}"; do alive "$s" || incomplete=1; done
    if ((incomplete == 0)); then
      say "already running; state: $STATE"
      return 0
    fi
    die "some services of an earlier start still run (see '$0 status'); run '$0 stop' first"
  fi
  ports_free "$EPMD_PORT" "$MYSQL_PORT" "$RABBIT_PORT" "$RABBIT_DIST_PORT" "$NEUTRON_PORT" || exit 1
  local T0 t
  T0=$(now)
  STARTED=()
  trap on_start_exit EXIT

  if [[ -n "$(pkg_missing "${PACKAGES[@]}")" ]]; then
    t=$(now)
    pkg_install install "${PACKAGES[@]}"
    timing "install missing packages" "$t"
  fi

  t=$(now)
  take_snapshot
  local fwd
  fwd=$(sysctl -n net.ipv4.ip_forward)
  [[ $fwd == 0 ]] || say "start: WARNING net.ipv4.ip_forward is $fwd in the root namespace (the rig leaves it as is)"
  timing "root namespace snapshot" "$t"

  t=$(now)
  write_secret
  mkdir -p "$ETC"
  chmod 0700 "$ETC" # the config holds the DB password
  (
    umask 077
    write_neutron_conf
    write_rabbit_conf
  )
  timing "config files" "$t"

  t=$(now)
  start_epmd
  timing "epmd" "$t"
  start_mariadb neutron "$SECRET" neutron
  # RabbitMQ takes several seconds: it starts while the DB migrates
  local t_rabbit
  t_rabbit=$(now)
  start_rabbitmq
  t=$(now)
  init_neutron_db
  timing "neutron db upgrade" "$t"

  local t_server since
  t_server=$(now)
  launch neutron-server neutron-server --config-file "$ETC/neutron/neutron.conf"
  wait_tcp rabbitmq "$RABBIT_PORT" 120
  timing "rabbitmq ready" "$t_rabbit"
  wait_http neutron-server "http://$HOST:$NEUTRON_PORT/" 180
  timing "neutron-server API ready" "$t_server"
  # An RPC call an agent makes before the server consumes its topic is lost (no queue yet), and the agent then
  # waits for the 60 s RPC timeout plus a back-off: start the agents only once the server consumes.
  wait_rpc_consumers 120
  timing "neutron-server RPC ready" "$t_server"

  t=$(now)
  since=$(date -u '+%F %T')
  launch linuxbridge-agent /usr/bin/python3 "$SCRIPT_DIR/bin/neutron-linuxbridge-agent" \
    --config-file "$ETC/neutron/neutron.conf" --config-file "$ETC/neutron/linuxbridge_agent.ini"
  launch l3-agent /usr/bin/neutron-l3-agent \
    --config-file "$ETC/neutron/neutron.conf" --config-file "$ETC/neutron/l3_agent.ini"
  wait_agents "$since" 180
  timing "agents alive" "$t"

  write_outputs
  trap - EXIT
  timing "TOTAL start" "$T0"
  say "Neutron dataplane (Zed, Debian packages) running on $HOST, agents on host $AGENT_HOST"
  do_status_lines
  say "timings:"
  printf '  %s\n' "${TIMINGS[@]}"
  say "clouds.yaml: $STATE/clouds.yaml (cloud 'dataplane')   env: $STATE/env   logs: $LOG/"
}

service_port() {
  case $1 in
    epmd) echo "$EPMD_PORT" ;;
    mariadb) echo "$MYSQL_PORT" ;;
    rabbitmq) echo "$RABBIT_PORT" ;;
    neutron-server) echo "$NEUTRON_PORT" ;;
    *) echo - ;;
  esac
}

do_status_lines() {
  service_lines
  if alive neutron-server; then
    local st
    st=$(agents_state 0 | tr '\n' ' ')
    say "  agents on $AGENT_HOST: ${st:-none reported}"
  fi
}

# kill_strays: once every service is stopped, processes that still name our config dir (a privsep helper that left
# its agent's group would); by PID, never by name.
kill_strays() {
  local p cmd
  for p in $(pgrep -f -- "${ETC//./\\.}/" 2>/dev/null || true); do
    [[ $p == "$$" ]] && continue
    cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-100) || continue
    say "stop: pid $p outlived its service group, SIGKILL: $cmd"
    kill -KILL "$p" 2>/dev/null || true
  done
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
  else
    need_root stop "it removes what the agents created in the root namespace"
    # agents first (their privsep helpers are in their groups), then the server, RabbitMQ, MariaDB, epmd
    stop_services "${AGENTS[@]}"
    stop_services neutron-server
    stop_services rabbitmq mariadb
    stop_services epmd
    kill_strays
    say "stopped in $(secs "$t0" "$(now)") s${STOP_TIMES[*]:+ (${STOP_TIMES[*]})}"
    local t1
    t1=$(now)
    remove_leftovers
    rm -f "$STATE/active"
    say "root namespace cleaned in $(secs "$t1" "$(now)") s"
  fi
  if ((purge)); then
    [[ -d $STATE ]] && rm -rf "$STATE"
    say "purged $STATE"
  fi
}

do_leftovers() {
  local objs drift rc=0
  objs=$(leftover_objects)
  drift=$(sysctl_drift)
  [[ -f $STATE/snapshot ]] || say "no snapshot in $STATE: listing every object of the kinds the agents create"
  if [[ -n $objs ]]; then
    say "Neutron-made objects in the root namespace that were not there before start:"
    indent <<<"$objs"
    rc=1
  fi
  if [[ -n $drift ]]; then
    say "root-namespace settings changed since start (was->now):"
    indent <<<"$drift"
    rc=1
  fi
  if ((rc == 0)); then
    if [[ -f $STATE/snapshot ]]; then say "clean: no Neutron-made objects beyond the start snapshot"
    else say "clean: no Neutron-made objects"; fi
  fi
  return "$rc"
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
  leftovers)
    need_root leftovers "iptables, ebtables and ipset need it to list"
    do_leftovers
    ;;
  *)
    sed -n '6,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
