#!/usr/bin/env bash
# Restart, in place, the kube-apiserver and/or etcd that start.sh started in DIR: the
# same binaries, flags, ports, certificates and data, as after a crash or an upgrade.
# Tests use it to prove that watches resume and nothing is duplicated.
#
# Usage: scripts/control-plane/restart.sh DIR [apiserver|etcd|both] [DOWN_SECONDS]
#   both (default) stops the apiserver, then etcd, stays down DOWN_SECONDS (default 2),
#   then starts etcd and the apiserver again and waits until both are ready.
set -euo pipefail

log() { printf '[control-plane/restart] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ $# -ge 1 ] && [ -d "$1" ] || die "usage: $0 DIR [apiserver|etcd|both] [DOWN_SECONDS]"
DIR=$(cd "$1" && pwd)
WHICH=${2:-both}
DOWN=${3:-2}
case "$WHICH" in apiserver | etcd | both) ;; *) die "restart what? apiserver, etcd or both" ;; esac
[ -s "$DIR/pids" ] || die "$DIR/pids missing: nothing started there"
# shellcheck disable=SC1091
set -a; . "$DIR/env"; set +a

# start.sh wrote etcd's pid first and the apiserver's second.
mapfile -t PIDS < <(grep -E '^[0-9]+$' "$DIR/pids")
ETCD_PID=${PIDS[0]}
API_PID=${PIDS[1]}

declare -A CMD
stop_one() {
  local name=$1 pid=$2
  [ -r "/proc/$pid/cmdline" ] || die "$name (pid $pid) is not running"
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$DIR/" || die "pid $pid is not ours"
  # The exact argv it runs with, NUL-separated, to start it again the same way.
  CMD[$name]=$(base64 -w0 <"/proc/$pid/cmdline")
  kill -TERM "$pid"
  for _ in $(seq 1 150); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
  [ -e "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  log "stopped $name (pid $pid)"
}
start_one() {
  local name=$1 log_name=$2
  local -a argv
  mapfile -d '' -t argv < <(printf '%s' "${CMD[$name]}" | base64 -d)
  "${argv[@]}" </dev/null >>"$DIR/$log_name.log" 2>&1 &
  NEW_PID=$!
  log "started $name (pid $NEW_PID)"
}

[ "$WHICH" != etcd ] && stop_one apiserver "$API_PID"
[ "$WHICH" != apiserver ] && stop_one etcd "$ETCD_PID"
sleep "$DOWN"
deadline=$((SECONDS + ${ARBOR_KUBE_START_TIMEOUT:-90}))
if [ "$WHICH" != apiserver ]; then
  start_one etcd etcd
  ETCD_PID=$NEW_PID
  until curl -fsS --max-time 2 "$ARBOR_TEST_KUBE_ETCD_URL/health" 2>/dev/null | grep -q '"health":"true"'; do
    [ "$SECONDS" -lt "$deadline" ] || die "etcd not healthy again (see $DIR/etcd.log)"
    sleep 0.2
  done
fi
if [ "$WHICH" != etcd ]; then
  start_one apiserver kube-apiserver
  API_PID=$NEW_PID
fi
printf '%s\n%s\n' "$ETCD_PID" "$API_PID" >"$DIR/pids"
until [ "$(curl -s --max-time 2 --cacert "$ARBOR_TEST_KUBE_CA_FILE" \
  -H "Authorization: Bearer $ARBOR_TEST_KUBE_ADMIN_TOKEN" -o /dev/null -w '%{http_code}' \
  "$ARBOR_TEST_KUBE_APISERVER_URL/readyz" 2>/dev/null)" = 200 ]; do
  [ "$SECONDS" -lt "$deadline" ] || die "kube-apiserver not ready again (see $DIR/kube-apiserver.log)"
  sleep 0.3
done
log "ready again"
