# Shared by scripts/openstack/real-openstack.sh, scripts/dataplane/rig.sh and ovn-rig.sh (sourced, not run): Debian
# package installs, process control (one process group per service, PID files with start times), MariaDB and RabbitMQ
# on loopback with their own ports, Neutron's noauth API pipeline.
#
# The caller sets, before using the functions below:
#   RIG        name used in messages (e.g. real-openstack)
#   RUN LOG    directories for PID files and logs
#   HOST       the address everything binds to (127.0.0.1)
# and, for MariaDB / RabbitMQ: STATE ETC MYSQL_PORT RABBIT_PORT RABBIT_DIST_PORT EPMD_PORT RABBIT_NODENAME.
# shellcheck shell=bash

say() { printf '%s\n' "$*"; }
die() {
  printf '%s: %s\n' "$RIG" "$*" >&2
  exit 1
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
TIMINGS=()
timing() { TIMINGS+=("$(printf '%-28s %6s s' "$1" "$(secs "$2" "$(now)")")"); }

# ---------------------------------------------------------------------------------------------------------------
# Debian packages
# ---------------------------------------------------------------------------------------------------------------
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown; }

# pkg_missing PKG...: prints the packages that are not installed.
pkg_missing() {
  local p st
  for p in "$@"; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [[ "$st" == "installed" ]] || printf '%s\n' "$p"
  done
}

# pkg_install LABEL PKG...: installs the missing ones, without recommends. A temporary policy-rc.d (exit 101) stops
# Debian from starting the system services (MariaDB, RabbitMQ, keepalived, ...) the packages ship: the rigs run
# their own instances on their own ports.
pkg_install() {
  local label=$1 missing t0 created_policy=0
  shift
  mapfile -t missing < <(pkg_missing "$@")
  if ((${#missing[@]} == 0)); then
    echo "$label: all $# packages already installed"
    return 0
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "$label: must run as root to install: ${missing[*]}" >&2
    return 1
  fi
  t0=$(now)
  echo "$label: missing: ${missing[*]}"
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\n# temporary, made by raven scripts/lib/services.sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    created_policy=1
  fi
  # no EXIT trap here: the callers own the EXIT trap of `start`
  local rc=0
  DEBIAN_FRONTEND=noninteractive apt-get update -q || rc=$?
  if ((rc == 0)); then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" || rc=$?
  fi
  if ((created_policy)); then
    rm -f /usr/sbin/policy-rc.d
  fi
  if ((rc != 0)); then
    echo "$label: apt-get failed (exit $rc)" >&2
    return "$rc"
  fi
  awk -v l="$label" -v a="$t0" -v b="$(now)" 'BEGIN { printf "%s: done in %.1f s\n", l, b - a }'
}

# ---------------------------------------------------------------------------------------------------------------
# process control: each service is one process group (setsid), PID file = "pid starttime"
# ---------------------------------------------------------------------------------------------------------------
proc_start_time() { awk '{ print $22 }' "/proc/$1/stat" 2>/dev/null || true; }

# alive SERVICE: true when the PID in its PID file runs and is the process that was started (start time matches).
alive() {
  local f=$RUN/$1.pid pid st
  [[ -f $f ]] || return 1
  read -r pid st <"$f" || return 1
  [[ -n ${pid:-} && -d /proc/$pid ]] || return 1
  [[ "$(proc_start_time "$pid")" == "${st:-}" ]] || return 1
  # a zombie is not alive
  [[ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" != Z ]]
}
pid_of() {
  local pid _st
  read -r pid _st <"$RUN/$1.pid"
  echo "$pid"
}

# launch SERVICE CMD...: runs CMD in its own session/process group, stdout+stderr to $LOG/SERVICE.log.
STARTED=()
launch() {
  local svc=$1
  shift
  printf '===== %s %s: starting %s\n' "$(date -u +%FT%TZ)" "$RIG" "$svc" >>"$LOG/$svc.log"
  setsid "$@" </dev/null >>"$LOG/$svc.log" 2>&1 &
  local pid=$!
  local st=""
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    st=$(proc_start_time "$pid")
    [[ -n $st ]] && break
    sleep 0.01
  done
  echo "$pid $st" >"$RUN/$svc.pid"
  STARTED+=("$svc")
}

fail_service() {
  local svc=$1 why=$2
  printf '%s: %s %s; last lines of %s:\n' "$RIG" "$svc" "$why" "$LOG/$svc.log" >&2
  tail -n 40 "$LOG/$svc.log" 2>/dev/null | sed 's/^/  | /' >&2 || true
  exit 1
}

# wait_http SERVICE URL [TIMEOUT]: until URL answers with any HTTP status (< 500), while the PID stays alive.
wait_http() {
  local svc=$1 url=$2 timeout=${3:-120} t0 code
  t0=$(date +%s)
  while :; do
    alive "$svc" || fail_service "$svc" "exited while starting"
    code=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$url" 2>/dev/null || true)
    if [[ $code =~ ^[1-4][0-9][0-9]$ ]]; then return 0; fi
    (($(date +%s) - t0 < timeout)) || fail_service "$svc" "did not answer $url within ${timeout}s"
    sleep 0.25
  done
}

# wait_tcp SERVICE PORT [TIMEOUT]
wait_tcp() {
  local svc=$1 port=$2 timeout=${3:-60} t0
  t0=$(date +%s)
  while :; do
    alive "$svc" || fail_service "$svc" "exited while starting"
    if (exec 3<>"/dev/tcp/$HOST/$port") 2>/dev/null; then return 0; fi
    (($(date +%s) - t0 < timeout)) || fail_service "$svc" "did not listen on $HOST:$port within ${timeout}s"
    sleep 0.2
  done
}

# ports_free PORT...: fails listing the busy ones (another stack, or a leftover process from a start whose state dir
# was deleted, would otherwise answer in place of ours).
ports_free() {
  local p busy=()
  for p in "$@"; do
    if (exec 3<>"/dev/tcp/$HOST/$p") 2>/dev/null; then busy+=("$p"); fi
  done
  ((${#busy[@]} == 0)) && return 0
  printf '%s: port(s) already in use on %s: %s\n' "$RIG" "$HOST" "${busy[*]}" >&2
  ss -ltnp 2>/dev/null | grep -E ":($(
    IFS='|'
    echo "${busy[*]}"
  ))\b" | sed 's/^/  | /' >&2 || true
  return 1
}

# Services whose group leader alone gets the SIGTERM, the rest of the group following it (uwsgi masters: a TERM to
# the workers only makes them reload, which can hang; Neutron agents: a TERM to their privsep helpers mid-operation
# makes them start new ones). Everything else: the whole group. Either way SIGKILL to the group after 20 s.
STOP_LEADER_ONLY=()
STOP_TIMES=()

# stop_services SVC...: SIGTERM each group, wait up to 20 s for all, then SIGKILL what is left of the group.
stop_services() {
  local svc pid pids=() svcs=() deadline
  for svc in "$@"; do
    [[ -f $RUN/$svc.pid ]] || continue
    if alive "$svc"; then
      pid=$(pid_of "$svc")
      if [[ " ${STOP_LEADER_ONLY[*]} " == *" $svc "* ]]; then
        kill -TERM "$pid" 2>/dev/null || true
      else
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      fi
      pids+=("$pid")
      svcs+=("$svc")
    else
      # the leader is gone, but children it left in its group (e.g. privsep helpers) are still ours
      # (only when no process has that PID: otherwise the PID, and so the group id, belongs to someone else now)
      pid=$(pid_of "$svc" 2>/dev/null || true)
      if [[ -n $pid && ! -d /proc/$pid ]] && pgrep -g "$pid" >/dev/null 2>&1; then
        kill -TERM -- "-$pid" 2>/dev/null || true
        pids+=("$pid")
        svcs+=("$svc")
      else
        rm -f "$RUN/$svc.pid"
      fi
    fi
  done
  ((${#svcs[@]})) || return 0
  local t0 i left took=()
  t0=$(now)
  deadline=$(($(date +%s) + 20))
  while (($(date +%s) < deadline)); do
    left=0
    for i in "${!svcs[@]}"; do
      [[ -n ${took[$i]:-} ]] && continue
      # the group is gone when no process has that PGID any more
      if pgrep -g "${pids[$i]}" >/dev/null 2>&1; then left=1; else took[i]=$(secs "$t0" "$(now)"); fi
    done
    ((left)) || break
    sleep 0.2
  done
  for i in "${!svcs[@]}"; do
    if [[ -n ${took[$i]:-} ]]; then STOP_TIMES+=("${svcs[$i]} ${took[$i]}s"); else STOP_TIMES+=("${svcs[$i]} killed"); fi
  done
  for i in "${!svcs[@]}"; do
    if pgrep -g "${pids[$i]}" >/dev/null 2>&1; then
      say "stop: ${svcs[$i]} did not exit within 20 s, SIGKILL"
      kill -KILL -- "-${pids[$i]}" 2>/dev/null || true
    fi
    rm -f "$RUN/${svcs[$i]}.pid"
  done
}

# group_rss SERVICE PS_OUTPUT: "N MB in M processes" for the service's process group.
group_rss() {
  awk -v g="$(pid_of "$1")" '$1 == g { r += $2; n++ } END { printf "%d MB in %d processes", r / 1024, n }' <<<"$2"
}

# ---------------------------------------------------------------------------------------------------------------
# MariaDB (datadir $STATE/mysql, socket in $RUN, TCP on $HOST:$MYSQL_PORT)
# ---------------------------------------------------------------------------------------------------------------
mysql_cli() { mariadb --no-defaults -uroot --socket="$RUN/mysqld.sock" "$@"; }

# start_mariadb DB_USER DB_PASSWORD DATABASE...: starts it (initialising the datadir once), creates the databases
# and a user with all privileges on them, from 127.0.0.1 only.
start_mariadb() {
  local user=$1 password=$2 t0 db
  shift 2
  t0=$(now)
  if [[ ! -d $STATE/mysql/mysql ]]; then
    rm -rf "$STATE/mysql"
    mkdir -p "$STATE/mysql"
    mariadb-install-db --no-defaults --user=root --datadir="$STATE/mysql" \
      --auth-root-authentication-method=normal --skip-test-db >"$LOG/mariadb-install.log" 2>&1 ||
      {
        tail -n 30 "$LOG/mariadb-install.log" >&2
        die "mariadb-install-db failed"
      }
  fi
  launch mariadb mariadbd --no-defaults --user=root --datadir="$STATE/mysql" --socket="$RUN/mysqld.sock" \
    --pid-file="$RUN/mysqld.pidfile" --bind-address="$HOST" --port="$MYSQL_PORT" --skip-name-resolve --skip-log-bin \
    --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 \
    --max-connections=500 --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci
  local t1
  t1=$(date +%s)
  until mysql_cli -e 'SELECT 1' >/dev/null 2>&1; do
    alive mariadb || fail_service mariadb "exited while starting"
    (($(date +%s) - t1 < 60)) || fail_service mariadb "did not answer within 60s"
    sleep 0.1
  done
  {
    for db in "$@"; do echo "CREATE DATABASE IF NOT EXISTS $db;"; done
    echo "CREATE USER IF NOT EXISTS '$user'@'127.0.0.1' IDENTIFIED BY '$password';"
    echo "ALTER USER '$user'@'127.0.0.1' IDENTIFIED BY '$password';"
    for db in "$@"; do echo "GRANT ALL PRIVILEGES ON $db.* TO '$user'@'127.0.0.1';"; done
  } | mysql_cli
  timing "mariadb (init+start)" "$t0"
}

# ---------------------------------------------------------------------------------------------------------------
# RabbitMQ (own epmd and distribution ports on loopback, so it never meets the system's or another rig's node)
# ---------------------------------------------------------------------------------------------------------------
write_rabbit_conf() {
  mkdir -p "$STATE/rabbitmq/home" "$STATE/rabbitmq/mnesia" "$STATE/rabbitmq/log" "$ETC/rabbitmq"
  : >"$ETC/rabbitmq/rabbitmq-env.conf"
  echo '[].' >"$ETC/rabbitmq/enabled_plugins"
  cat >"$ETC/rabbitmq/rabbitmq.conf" <<EOF
listeners.tcp.default = $HOST:$RABBIT_PORT
loopback_users.guest = true
disk_free_limit.absolute = 50MB
EOF
}

# start_epmd: first and in the foreground of its own group, so its PID is known (RabbitMQ would otherwise start
# one itself, outside any PID file).
start_epmd() {
  launch epmd epmd -address "$HOST" -port "$EPMD_PORT"
  wait_tcp epmd "$EPMD_PORT" 10
}

# start_rabbitmq: launches it; wait for it with `wait_tcp rabbitmq $RABBIT_PORT`.
start_rabbitmq() {
  # an `env ...` prefix: setsid cannot run a shell function
  launch rabbitmq env HOME="$STATE/rabbitmq/home" \
    RABBITMQ_CONF_ENV_FILE="$ETC/rabbitmq/rabbitmq-env.conf" \
    RABBITMQ_NODENAME="$RABBIT_NODENAME" RABBITMQ_USE_LONGNAME=false \
    RABBITMQ_NODE_IP_ADDRESS="$HOST" RABBITMQ_NODE_PORT="$RABBIT_PORT" RABBITMQ_DIST_PORT="$RABBIT_DIST_PORT" \
    ERL_EPMD_ADDRESS="$HOST" ERL_EPMD_PORT="$EPMD_PORT" \
    RABBITMQ_MNESIA_BASE="$STATE/rabbitmq/mnesia" RABBITMQ_LOG_BASE="$STATE/rabbitmq/log" \
    RABBITMQ_LOGS="$LOG/rabbitmq-server.log" \
    RABBITMQ_CONFIG_FILE="$ETC/rabbitmq/rabbitmq.conf" RABBITMQ_ADVANCED_CONFIG_FILE="$ETC/rabbitmq/advanced.config" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$ETC/rabbitmq/enabled_plugins" \
    RABBITMQ_PID_FILE="$RUN/rabbitmq.pidfile" \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" \
    /usr/lib/rabbitmq/bin/rabbitmq-server
}

# ---------------------------------------------------------------------------------------------------------------
# the dataplane rigs' commands (scripts/dataplane/rig.sh, ovn-rig.sh): each defines ALL_SERVICES, NEUTRON_PORT,
# do_stop and do_status_lines
# ---------------------------------------------------------------------------------------------------------------
need_root() { [[ $(id -u) -eq 0 ]] || die "$1 must run as root ($2)"; }

# write_secret: the state dir's password (MariaDB's, and RabbitMQ's where there is one), made once, kept private.
write_secret() {
  if [[ ! -s $STATE/secret ]]; then
    (
      umask 077
      od -An -N24 -tx1 /dev/urandom | tr -d ' \n' >"$STATE/secret"
    )
  fi
  chmod 0600 "$STATE/secret"
  SECRET=$(cat "$STATE/secret")
}

any_alive() {
  local s
  for s in "${ALL_SERVICES[@]}"; do alive "$s" && return 0; done
  return 1
}

# on_start_exit: start's EXIT trap: a failed start stops what it started.
on_start_exit() {
  local rc=$?
  if ((rc != 0)); then
    printf '%s: start failed; stopping what it started: %s\n' "$RIG" "${STARTED[*]:-nothing}" >&2
    do_stop >&2 || true
  fi
}

# service_lines: a line per service with a PID file: alive (PID, port from service_port, memory) or DEAD.
service_lines() {
  local s pslist
  pslist=$(ps -eo pgid=,rss= 2>/dev/null || true)
  for s in "${ALL_SERVICES[@]}"; do
    [[ -f $RUN/$s.pid ]] || continue
    if alive "$s"; then
      printf '  %-18s alive  pid %-8s port %-6s RSS %s\n' "$s" "$(pid_of "$s")" "$(service_port "$s")" \
        "$(group_rss "$s" "$pslist")"
    else
      printf '  %-18s DEAD   (stale PID file; log %s)\n' "$s" "$LOG/$s.log"
    fi
  done
}

do_status() {
  if [[ ! -d $RUN ]] || ! compgen -G "$RUN/*.pid" >/dev/null; then
    say "not running (state: $STATE)"
    return 0
  fi
  say "state: $STATE   Neutron: http://$HOST:$NEUTRON_PORT (noauth)"
  do_status_lines
  any_alive || return 1
}

# ---------------------------------------------------------------------------------------------------------------
# Neutron
# ---------------------------------------------------------------------------------------------------------------
# write_noauth_api_paste FILE: neutron-server's paste pipeline with noauth only: the API runs as admin, and requests
# without X-Project-Id land in project fake_project_id (admin-only fields such as binding:host_id work; with a
# project header the context is not admin).
write_noauth_api_paste() {
  cat >"$1" <<'EOF'
[composite:neutron]
use = egg:Paste#urlmap
/: neutronversions_composite
/v2.0: neutronapi_v2_0

[composite:neutronapi_v2_0]
use = call:neutron.auth:pipeline_factory
noauth = http_proxy_to_wsgi request_id fake_project_id catch_errors extensions neutronapiapp_v2_0

[composite:neutronversions_composite]
use = call:neutron.auth:pipeline_factory
noauth = http_proxy_to_wsgi neutronversions

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory

[filter:catch_errors]
paste.filter_factory = oslo_middleware:CatchErrors.factory

[filter:fake_project_id]
paste.filter_factory = neutron.auth:NoauthFakeProjectId.factory

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory

[filter:extensions]
paste.filter_factory = neutron.api.extensions:plugin_aware_extension_middleware_factory

[app:neutronversions]
paste.app_factory = neutron.pecan_wsgi.app:versions_factory

[app:neutronapiapp_v2_0]
paste.app_factory = neutron.api.v2.router:APIRouter.factory
EOF
}
