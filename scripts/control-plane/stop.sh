#!/usr/bin/env bash
# Stop the control plane that start.sh started in DIR.
#
# Usage: scripts/control-plane/stop.sh DIR [--rm]
#   Sends SIGTERM to the pids in DIR/pids (kube-apiserver first, then etcd),
#   waits up to 15s each, then SIGKILL. --rm also deletes DIR afterwards
#   (by default it stays, with its logs, for post-mortems).
# Safe to run twice, or on a dir whose processes already died.
set -euo pipefail

log() { printf '[control-plane/stop] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if [ $# -lt 1 ] || [ -z "$1" ]; then die "usage: $0 DIR [--rm]"; fi
[ -d "$1" ] || die "no such dir: $1"
DIR=$(cd "$1" && pwd)
REMOVE=0
[ "${2:-}" = "--rm" ] && REMOVE=1

# A pid is only ours if its command line mentions DIR (every daemon start.sh
# runs gets DIR in its flags): guards against killing an unrelated process
# that reused the pid after ours died.
is_ours() {
  local pid=$1
  [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$DIR/"
}

if [ -f "$DIR/pids" ]; then
  # Reverse start order: the apiserver goes before the etcd it writes to.
  mapfile -t pids < <(grep -E '^[0-9]+$' "$DIR/pids" | tac)
  for pid in "${pids[@]}"; do
    if ! is_ours "$pid"; then
      log "pid $pid: not running (or not ours)"
      continue
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do
      is_ours "$pid" || break
      sleep 0.1
    done
    if is_ours "$pid"; then
      log "pid $pid ignored SIGTERM for 15s; killing"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    # Reap it if it is our child (start.sh calls us on failure).
    wait "$pid" 2>/dev/null || true
    log "stopped pid $pid"
  done
  rm -f "$DIR/pids"
else
  log "no $DIR/pids: nothing to stop"
fi

if [ "$REMOVE" = 1 ]; then
  rm -rf "$DIR"
  log "removed $DIR"
fi
