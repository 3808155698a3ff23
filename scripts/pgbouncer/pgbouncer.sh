#!/usr/bin/env bash
# Debian's PgBouncer in transaction mode in front of a PostgreSQL, for the pooler tests
# (scripts/test.mjs's "through PgBouncer" pass, test/ha/pooler.test.ts).
#
#   pgbouncer.sh start DIR PORT UPSTREAM_URL   prints UPSTREAM_URL with PgBouncer's host:port
#   pgbouncer.sh stop DIR                      stops it and removes DIR
#
# Every database of the upstream server is reachable by name (a `*` entry), as the user of
# UPSTREAM_URL; clients need no password (auth_type trust: loopback tests only), and
# PgBouncer logs in upstream with UPSTREAM_URL's password. PgBouncer refuses to run as
# root: as root it runs as the `postgres` user (DIR is handed to it).
set -euo pipefail

cmd=${1:?usage: pgbouncer.sh start DIR PORT UPSTREAM_URL | stop DIR}
dir=${2:?DIR}

bin=$(command -v pgbouncer || echo /usr/sbin/pgbouncer)

as_owner() {
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
  else
    "$@"
  fi
}

start() {
  local port=$1 upstream=$2
  [ -x "$bin" ] || { echo "pgbouncer is not installed" >&2; exit 2; }
  # postgres://user[:password]@host[:port]/db[?…]
  local re='^postgres(ql)?://([^:@/]+)(:([^@/]*))?@([^:/]+)(:([0-9]+))?(/[^?]*)?'
  [[ $upstream =~ $re ]] || { echo "cannot parse UPSTREAM_URL" >&2; exit 2; }
  local user=${BASH_REMATCH[2]} password=${BASH_REMATCH[4]} host=${BASH_REMATCH[5]}
  local uport=${BASH_REMATCH[7]:-5432} path=${BASH_REMATCH[8]:-/postgres}
  mkdir -p "$dir"
  chmod 700 "$dir"
  printf '"%s" "%s"\n' "$user" "$password" >"$dir/userlist.txt"
  local server_auth=""
  [ -n "$password" ] && server_auth=" password=$password"
  cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = host=$host port=$uport user=$user$server_auth

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 10
server_lifetime = 300
server_idle_timeout = 30
ignore_startup_parameters = extra_float_digits
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF
  [ "$(id -u)" = 0 ] && chown -R postgres: "$dir"
  as_owner "$bin" -d -q "$dir/pgbouncer.ini"
  for _ in $(seq 1 50); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "postgres://$user@127.0.0.1:$port$path"
      return 0
    fi
    sleep 0.1
  done
  echo "pgbouncer did not start" >&2
  cat "$dir/pgbouncer.log" >&2 || true
  return 1
}

stop() {
  [ -d "$dir" ] || return 0
  if [ -f "$dir/pgbouncer.pid" ]; then
    local pid
    pid=$(cat "$dir/pgbouncer.pid")
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

case "$cmd" in
  start) start "${3:?PORT}" "${4:?UPSTREAM_URL}" ;;
  stop) stop ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
