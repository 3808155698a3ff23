#!/usr/bin/env bash
# A pg_auto_failover formation on loopback, for the failover test (test/ha) and for trying
# a failover by hand: a monitor, a primary and a synchronous standby, each under its own
# pg_autoctl keeper in its own process group.
#
#   cluster.sh start DIR MONITOR_PORT PORT1 PORT2   prints the multi-host DATABASE_URL
#   cluster.sh kill-primary DIR                     SIGKILLs the primary's keeper and postgres;
#                                                   prints the killed node's name
#   cluster.sh state DIR                            the monitor's view, one node a line
#   cluster.sh stop DIR                             stops everything and removes DIR
#
# Needs Debian's pg-auto-failover-cli and postgresql-NN-auto-failover (NN = the PostgreSQL
# major in /usr/lib/postgresql). PostgreSQL refuses to run as root: as root, everything
# runs as the `postgres` user (DIR is handed to it). Ports are the caller's (pick free ones).
# The monitor's health checks are tightened (1 s period, 2 s to "unhealthy", 2 s demote
# timeout) so that a failover takes seconds rather than the production defaults' ~30-60 s.
set -euo pipefail

cmd=${1:?usage: cluster.sh start|kill-primary|state|stop DIR ...}
dir=${2:?DIR}

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pgbin" ] || { echo "no PostgreSQL under /usr/lib/postgresql" >&2; exit 2; }
command -v pg_autoctl >/dev/null || { echo "pg_autoctl is not installed" >&2; exit 2; }

# Run as postgres when root; everything pg_autoctl keeps (config, state, pid files) in DIR.
# setpriv and env exec (runuser would fork and keep its own pid), so a pid recorded for
# `as_pg …` in the background is the command's own.
as_pg_prefix=()
set_prefix() {
  as_pg_prefix=(env HOME="$dir" XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/share"
    XDG_RUNTIME_DIR="$dir/run" PATH="$pgbin:$PATH" PG_CONFIG="$pgbin/pg_config" PGHOST=127.0.0.1)
  if [ "$(id -u)" = 0 ]; then
    as_pg_prefix+=(setpriv --reuid=postgres --regid=postgres --init-groups --)
  fi
}
set_prefix
as_pg() { "${as_pg_prefix[@]}" "$@"; }

monitor_uri() { echo "postgres://autoctl_node@127.0.0.1:$(cat "$dir/monitor.port")/pg_auto_failover?sslmode=disable"; }

# psql on the monitor, unaligned, no headers.
monitor_sql() { as_pg psql -X -q -At -h 127.0.0.1 -p "$(cat "$dir/monitor.port")" -U autoctl_node -d pg_auto_failover -c "$1"; }

# Start `pg_autoctl create … --run` for node NAME in its own session (process group).
launch() {
  local name=$1
  shift
  # exec: $! is then the keeper itself, leader of its own process group (setsid does not
  # fork here: a background job of a script is no group leader).
  (exec "${as_pg_prefix[@]}" setsid pg_autoctl "$@" --run >"$dir/$name.log" 2>&1) &
  echo $! >"$dir/$name.pid"
}

wait_for() { # WHAT SECONDS COMMAND...
  local what=$1 secs=$2
  shift 2
  for _ in $(seq 1 $((secs * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "timed out waiting for $what" >&2
  for f in "$dir"/*.log; do echo "--- $f" >&2; tail -n 30 "$f" >&2; done
  return 1
}

node_state_is() { # NAME STATE: the monitor saw it reach STATE (and assigned it)
  [ "$(monitor_sql "SELECT reportedstate || '/' || goalstate FROM pgautofailover.node WHERE nodename = '$1'")" = "$2/$2" ]
}

start() {
  local mport=$1 p1=$2 p2=$3
  mkdir -p "$dir/config" "$dir/share" "$dir/run"
  chmod 700 "$dir"
  [ "$(id -u)" = 0 ] && chown -R postgres: "$dir"
  echo "$mport" >"$dir/monitor.port"
  local common=(--auth trust --no-ssl --hostname 127.0.0.1 --pgctl "$pgbin/pg_ctl")

  launch monitor create monitor --pgdata "$dir/monitor" --pgport "$mport" "${common[@]}"
  wait_for "the monitor" 60 monitor_sql "SELECT 1 FROM pgautofailover.formation"
  # Fast failure detection: a test should not wait out production timeouts.
  # ALTER SYSTEM is one statement per call (it cannot run in a transaction block).
  local setting
  for setting in health_check_period=1000 health_check_timeout=1000 health_check_max_retries=1 \
    health_check_retry_delay=500 node_considered_unhealthy_timeout=2000 primary_demote_timeout=2000; do
    as_pg psql -X -q -h 127.0.0.1 -p "$mport" -U postgres -d pg_auto_failover \
      -c "ALTER SYSTEM SET pgautofailover.${setting%%=*} = ${setting#*=}" >/dev/null
  done
  as_pg psql -X -q -h 127.0.0.1 -p "$mport" -U postgres -d pg_auto_failover -c "SELECT pg_reload_conf()" >/dev/null

  local monitor
  monitor=$(monitor_uri)
  launch node1 create postgres --pgdata "$dir/node1" --pgport "$p1" --name node1 \
    --dbname arbor --monitor "$monitor" "${common[@]}"
  wait_for "node1 to run alone" 90 node_state_is node1 single
  # pg_basebackup (how node2 starts) waits for a spread checkpoint: ~90 s at the defaults.
  as_pg psql -X -q -h 127.0.0.1 -p "$p1" -U postgres -d postgres \
    -c "ALTER SYSTEM SET checkpoint_completion_target = 0" -c "SELECT pg_reload_conf()" >/dev/null
  launch node2 create postgres --pgdata "$dir/node2" --pgport "$p2" --name node2 \
    --dbname arbor --monitor "$monitor" "${common[@]}"
  wait_for "node2 to be a streaming standby" 120 node_state_is node2 secondary
  wait_for "node1 to be primary" 30 node_state_is node1 primary
  echo "postgres://postgres@127.0.0.1:$p1,127.0.0.1:$p2/arbor?target_session_attrs=read-write"
}

kill_primary() {
  local name
  name=$(monitor_sql "SELECT nodename FROM pgautofailover.node WHERE reportedstate = 'primary' AND goalstate = 'primary'")
  [ -n "$name" ] || { echo "no primary" >&2; return 1; }
  local pgpid
  pgpid=$(head -n 1 "$dir/$name/postmaster.pid")
  # The keeper first (it would restart postgres), then postgres and all it runs.
  kill -KILL -- "-$(cat "$dir/$name.pid")" 2>/dev/null || true
  kill -KILL "$pgpid" 2>/dev/null || true
  pkill -KILL -P "$pgpid" 2>/dev/null || true
  echo "$name"
}

stop() {
  [ -d "$dir" ] || return 0
  for n in node2 node1 monitor; do
    [ -f "$dir/$n.pid" ] && kill -TERM -- "-$(cat "$dir/$n.pid")" 2>/dev/null || true
  done
  for _ in $(seq 1 50); do
    local alive=0
    for n in node2 node1 monitor; do
      [ -f "$dir/$n.pid" ] && kill -0 -- "-$(cat "$dir/$n.pid")" 2>/dev/null && alive=1
    done
    [ $alive = 0 ] && break
    sleep 0.2
  done
  for n in node2 node1 monitor; do
    [ -f "$dir/$n.pid" ] && kill -KILL -- "-$(cat "$dir/$n.pid")" 2>/dev/null || true
    if [ -f "$dir/$n/postmaster.pid" ]; then
      kill -KILL "$(head -n 1 "$dir/$n/postmaster.pid")" 2>/dev/null || true
    fi
  done
  rm -rf "$dir"
}

case "$cmd" in
  start) start "${3:?MONITOR_PORT}" "${4:?PORT1}" "${5:?PORT2}" ;;
  kill-primary) kill_primary ;;
  state) monitor_sql "SELECT nodename || ' ' || reportedstate || ' ' || goalstate FROM pgautofailover.node ORDER BY nodeid" ;;
  stop) stop ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
