#!/usr/bin/env bash
# Smoke test of a running linuxbridge dataplane rig (scripts/dataplane/rig.sh start --backend linuxbridge) with real
# packets, by hand, as root:
#   1. network A (10.77.0.0/24, no DHCP), two ports bound to the agents' host, each plumbed like the CNI side
#      would (veth tap<port[:11]> <-> eth0 in a network namespace of its own, tap into brq<network[:11]>): ping.
#   2. a security group without ingress rules on the second port blocks the ping; back to the default group opens it.
#   3. network B (10.78.0.0/24) whose bridge this script creates BEFORE the agent does (as os-vif does): does the
#      agent adopt it (vxlan device, SG chains, port ACTIVE) and do packets flow?
#   4. a router (no external gateway) on both subnets: ping across it.
# Prints the timings it measures. Deletes everything it created (API objects, namespaces) on exit, also on failure.
# All packets stay between the namespaces it creates; nothing is routed from or to the root namespace.
set -euo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C.UTF-8

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RIG=smoke
# shellcheck source-path=SCRIPTDIR source=../lib/services.sh
source "$SCRIPT_DIR/../lib/services.sh" # say, die, now, secs

STATE=${RAVEN_DATAPLANE_STATE:-$PWD/.raven/dataplane}
[[ -f $STATE/env ]] || die "no $STATE/env: start the rig first (scripts/dataplane/rig.sh start --backend linuxbridge)"
[[ $(id -u) -eq 0 ]] || die "must run as root (it creates network namespaces and veth pairs)"
NEUTRON=$(sed -n 's/^RAVEN_DATAPLANE_NEUTRON_URL=//p' "$STATE/env")/v2.0
AGENT_HOST=$(sed -n 's/^RAVEN_DATAPLANE_HOST=//p' "$STATE/env")
NS_PREFIX=rdpsmoke-
if ip netns list | grep "^$NS_PREFIX" >/dev/null; then
  die "namespaces $NS_PREFIX* exist: another smoke run, or a leftover"
fi

# ---------------------------------------------------------------------------------------------------------------
# Neutron API (noauth: no token; no X-Project-Id, so everything lands in the default project)
# ---------------------------------------------------------------------------------------------------------------
# api METHOD PATH [JSON]: prints the response body; fails on HTTP >= 300.
api() {
  local out code
  out=$(curl -sS -m 30 -X "$1" -H 'Content-Type: application/json' -w '\n%{http_code}' \
    ${3:+--data "$3"} "$NEUTRON$2")
  code=${out##*$'\n'}
  out=${out%$'\n'*}
  if ((code >= 300)); then
    printf 'smoke: %s %s -> %s %s\n' "$1" "$2" "$code" "$out" >&2
    return 1
  fi
  printf '%s\n' "$out"
}
# jf PATH: a field of the JSON on stdin, PATH dotted (port.fixed_ips.0.ip_address)
jf() {
  /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d = d[int(k)] if k.isdigit() else d[k]
print(d)' "$1"
}

CREATED=()    # "kind id"
NAMESPACES=() # ours; deleting one deletes its veth end, and so the tap in the root namespace
BRIDGES=()    # bridges this script created itself
ROUTER_IFS=() # "router subnet"

cleanup() {
  local rc=$? i kind id k
  set +e
  for i in "${ROUTER_IFS[@]}"; do
    read -r kind id <<<"$i"
    api PUT "/routers/$kind/remove_router_interface" "{\"subnet_id\": \"$id\"}" >/dev/null
  done
  # in an order Neutron accepts: nothing is deleted while something else still uses it
  for k in routers ports subnets networks security-groups; do
    for i in "${CREATED[@]}"; do
      read -r kind id <<<"$i"
      [[ $kind == "$k" ]] || continue
      api DELETE "/$kind/$id" >/dev/null || say "smoke: could not delete $kind $id"
    done
  done
  for i in "${NAMESPACES[@]}"; do ip netns delete "$i" 2>/dev/null; done
  # the agent deletes the bridges of deleted networks, also one it adopted; one it never saw is still ours
  for i in "${BRIDGES[@]}"; do
    for ((k = 0; k < 50; k++)); do
      ip link show dev "$i" >/dev/null 2>&1 || break
      sleep 0.1
    done
    if ip link show dev "$i" >/dev/null 2>&1; then
      say "smoke: the agent left $i (created by this script) in place; deleting it"
      ip link delete dev "$i"
    fi
  done
  ((rc == 0)) || say "smoke: FAILED (exit $rc); cleaned up what it created"
}
trap cleanup EXIT

# The helpers below run in the main shell (never in $(...)), so that what they record for the cleanup stays recorded
# and a failure stops the script; results are in R.

network() { # NAME CIDR -> R="network-id subnet-id"
  local net sub
  net=$(api POST /networks "{\"network\": {\"name\": \"smoke-$1\"}}" | jf network.id)
  CREATED+=("networks $net")
  sub=$(api POST /subnets "{\"subnet\": {\"network_id\": \"$net\", \"cidr\": \"$2\", \"ip_version\": 4,
    \"enable_dhcp\": false, \"name\": \"smoke-$1\"}}" | jf subnet.id)
  CREATED+=("subnets $sub")
  R="$net $sub"
}

port() { # NAME NETWORK-ID -> R="port-id mac ip"
  local p
  p=$(api POST /ports "{\"port\": {\"network_id\": \"$2\", \"name\": \"smoke-$1\", \"device_owner\": \"compute:raven\",
    \"device_id\": \"$(cat /proc/sys/kernel/random/uuid)\", \"binding:host_id\": \"$AGENT_HOST\"}}")
  CREATED+=("ports $(jf port.id <<<"$p")")
  jf port.binding:vif_type <<<"$p" | grep -qx bridge || die "port $1 did not bind as bridge: $p"
  R="$(jf port.id <<<"$p") $(jf port.mac_address <<<"$p") $(jf port.fixed_ips.0.ip_address <<<"$p")"
}

# plumb NAME PORT-ID MAC IP GATEWAY NETWORK-ID: what a CNI plugin does for a pod. R = seconds from the tap coming up
# to the agent's bridge existing; T_UP = when the tap came up.
plumb() {
  local ns=$NS_PREFIX$1 port=$2 mac=$3 ip=$4 gw=$5 net=$6
  local tap=tap${port:0:11} br=brq${net:0:11} peer=rdp${port:0:8}
  ip netns add "$ns"
  NAMESPACES+=("$ns")
  ip link add "$tap" mtu 1450 type veth peer name "$peer" mtu 1450
  ip link set "$peer" netns "$ns"
  ip -n "$ns" link set "$peer" name eth0
  ip -n "$ns" link set eth0 address "$mac"
  ip -n "$ns" addr add "$ip/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via "$gw"
  T_UP=$(now)
  ip link set "$tap" up
  # the agent never enslaves a compute:* port ("added elsewhere"): wait for its bridge, then do it ourselves
  local i
  for ((i = 0; i < 150; i++)); do
    ip link show dev "$br" >/dev/null 2>&1 && break
    sleep 0.1
  done
  ip link show dev "$br" >/dev/null 2>&1 || die "bridge $br did not appear within 15 s"
  R=$(secs "$T_UP" "$(now)")
  ip link set "$tap" master "$br"
}

wait_status() { # PORT-ID STATUS TIMEOUT-S [SINCE] -> R = seconds since SINCE (default: now)
  local t0=${4:-} s i
  [[ -n $t0 ]] || t0=$(now)
  for ((i = 0; i < $3 * 10; i++)); do
    s=$(api GET "/ports/$1?fields=status" | jf port.status)
    if [[ $s == "$2" ]]; then
      R=$(secs "$t0" "$(now)")
      return 0
    fi
    sleep 0.1
  done
  die "port $1 is $s, not $2, after $3 s"
}

# reach FROM-NAME IP: one bounded probe
reach() { ip netns exec "$NS_PREFIX$1" ping -c 1 -W 1 -q "$2" >/dev/null 2>&1; }
# ping3 FROM-NAME IP: the proper check, 3 probes, all must answer
ping3() { ip netns exec "$NS_PREFIX$1" ping -c 3 -W 1 -q "$2" >/dev/null 2>&1; }
# until_reach FROM-NAME IP PROBES [not] [SINCE]: R = seconds from SINCE (default: now) to the start of the first
# probe that IP answers (or, with "not", does not answer); probes 0.2 s apart, a lost one takes 1 s.
until_reach() {
  local t0=${5:-} t i
  [[ -n $t0 ]] || t0=$(now)
  for ((i = 0; i < $3; i++)); do
    t=$(now)
    if [[ ${4:-} == not ]]; then reach "$1" "$2" || break; else reach "$1" "$2" && break; fi
    sleep 0.2
  done
  ((i < $3)) || die "$1 $([[ ${4:-} == not ]] && echo still reaches || echo does not reach) $2 after $3 probes"
  R=$(secs "$t0" "$t")
}

mac_rules() { ebtables -t nat -L "neutronMAC-tap${1:0:11}" 2>/dev/null | grep -c -- --among-src || true; }

T0=$(now)
# 1. same network
network a 10.77.0.0/24
read -r NET_A SUB_A <<<"$R"
port a1 "$NET_A"
read -r A1 A1_MAC A1_IP <<<"$R"
port a2 "$NET_A"
read -r A2 A2_MAC A2_IP <<<"$R"
say "network A $NET_A: a1 $A1_IP, a2 $A2_IP"
plumb a1 "$A1" "$A1_MAC" "$A1_IP" 10.77.0.1 "$NET_A"
say "  a1: tap up -> agent's bridge exists $R s"
wait_status "$A1" ACTIVE 20 "$T_UP"
say "  a1: tap up -> port ACTIVE $R s"
plumb a2 "$A2" "$A2_MAC" "$A2_IP" 10.77.0.1 "$NET_A"
wait_status "$A2" ACTIVE 20 "$T_UP"
say "  a2: tap up -> port ACTIVE $R s (bridge already there)"
ping3 a1 "$A2_IP" || die "a1 cannot ping a2"
say "  ping a1 -> a2: ok (3/3)"

# 2. security groups
SG=$(api POST /security-groups '{"security_group": {"name": "smoke-no-ingress"}}' | jf security_group.id)
CREATED+=("security-groups $SG")
DEFAULT_SG=$(api GET "/ports/$A2?fields=security_groups" | jf port.security_groups.0)
TS=$(now)
api PUT "/ports/$A2" "{\"port\": {\"security_groups\": [\"$SG\"]}}" >/dev/null
until_reach a1 "$A2_IP" 40 not "$TS"
say "  a2 in a group without ingress: blocked after $R s"
ping3 a1 "$A2_IP" && die "a1 still pings a2 through a group without ingress"
TS=$(now)
api PUT "/ports/$A2" "{\"port\": {\"security_groups\": [\"$DEFAULT_SG\"]}}" >/dev/null
until_reach a1 "$A2_IP" 40 "" "$TS"
say "  a2 back in the default group: open after $R s"
ping3 a1 "$A2_IP" || die "a1 cannot ping a2 after the group change"
# the port was processed again (the launcher's delete-by-number path): still exactly one MAC rule, port ACTIVE
[[ $(mac_rules "$A2") == 1 ]] || die "a2 has $(mac_rules "$A2") MAC anti-spoofing rules, want 1"
say "  a2 reprocessed: $(mac_rules "$A2") MAC rule, status $(api GET "/ports/$A2?fields=status" | jf port.status)"

# 3. network B, bridge created before the agent knows the network
network b 10.78.0.0/24
read -r NET_B SUB_B <<<"$R"
port b1 "$NET_B"
read -r B1 B1_MAC B1_IP <<<"$R"
port b2 "$NET_B"
read -r B2 B2_MAC B2_IP <<<"$R"
BR_B=brq${NET_B:0:11}
ip link add "$BR_B" type bridge
BRIDGES+=("$BR_B")
ip link set "$BR_B" up
say "network B $NET_B: b1 $B1_IP, b2 $B2_IP; created $BR_B before the agent"
plumb b1 "$B1" "$B1_MAC" "$B1_IP" 10.78.0.1 "$NET_B"
wait_status "$B1" ACTIVE 20 "$T_UP"
say "  b1: tap up -> port ACTIVE $R s"
plumb b2 "$B2" "$B2_MAC" "$B2_IP" 10.78.0.1 "$NET_B"
wait_status "$B2" ACTIVE 20 "$T_UP"
say "  b2: tap up -> port ACTIVE $R s"
VNI=$(api GET "/networks/$NET_B" | jf network.provider:segmentation_id)
ip -o link show master "$BR_B" | grep "vxlan-$VNI" >/dev/null || die "the agent did not add vxlan-$VNI to $BR_B"
iptables-save -t filter | grep -- ":neutron-linuxbri-i${B1:0:10} " >/dev/null || die "no SG chain for b1"
ping3 b1 "$B2_IP" || die "b1 cannot ping b2"
say "  agent adopted $BR_B (vxlan-$VNI added, SG chains for b1); ping b1 -> b2: ok (3/3)"

# 4. router between A and B, no external gateway
ROUTER=$(api POST /routers '{"router": {"name": "smoke"}}' | jf router.id)
CREATED+=("routers $ROUTER")
TR=$(now)
api PUT "/routers/$ROUTER/add_router_interface" "{\"subnet_id\": \"$SUB_A\"}" >/dev/null
ROUTER_IFS+=("$ROUTER $SUB_A")
api PUT "/routers/$ROUTER/add_router_interface" "{\"subnet_id\": \"$SUB_B\"}" >/dev/null
ROUTER_IFS+=("$ROUTER $SUB_B")
until_reach a1 "$B1_IP" 150 "" "$TR"
say "router $ROUTER: first reply a1 -> b1 $R s after the first add_router_interface"
ping3 a1 "$B1_IP" || die "a1 cannot ping b1 through the router"
ping3 b2 "$A2_IP" || die "b2 cannot ping a2 through the router"
TTL=$(ip netns exec "${NS_PREFIX}a1" ping -c 1 -W 1 "$B1_IP" | sed -n 's/.*ttl=\([0-9]*\).*/\1/p')
say "  ping a1 -> b1 and b2 -> a2: ok (3/3 each), ttl $TTL (one routed hop)"
[[ $(sysctl -n net.ipv4.ip_forward) == 0 ]] || say "  WARNING: net.ipv4.ip_forward is not 0 in the root namespace"

say "smoke: all checks passed in $(secs "$T0" "$(now)") s; cleaning up"
