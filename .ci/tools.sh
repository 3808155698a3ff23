#!/usr/bin/env bash
# Every tool the test suite uses, built (from the Go module proxy or the npm registry, into
# $HOME/.cache/arbor) or looked for (Debian's packages, which .ci/run installs first).
# Under CI the tests fail rather than skip when a tool is missing; this fails earlier and
# says which tool, so a run never spends an hour to learn it.
#
#   bash .ci/tools.sh [TOOL...]    build and check TOOLs (default: all); exit 1 naming
#                                  every tool that is missing or did not build
#   . .ci/tools.sh; tools_start; ...; tools_finish   (.ci/run: the builds run beside
#                                  the install and lint stages)
#
# TOOLs: control-plane registry grpcurl cnpg-crds node-lts helm openssl chromium pgbouncer
#        pg-auto-failover postgres-bin jaeger oauth2-proxy
# tools_finish exports ARBOR_TEST_NODE_LTS and ARBOR_PG_BIN for scripts/test.mjs.

ALL_TOOLS=(control-plane registry grpcurl cnpg-crds node-lts helm openssl chromium pgbouncer
  pg-auto-failover postgres-bin jaeger oauth2-proxy)

# The name a failure gives, as the tests' own messages name it.
tool_name() {
  case $1 in
    control-plane) echo 'the Kubernetes control plane (kube-apiserver, kubectl, etcd)' ;;
    registry) echo 'registry and crane' ;;
    grpcurl) echo 'grpcurl' ;;
    cnpg-crds) echo 'CloudNativePG CRDs' ;;
    node-lts) echo 'Node.js LTS' ;;
    helm) echo 'helm' ;;
    openssl) echo 'openssl' ;;
    chromium) echo 'Chromium' ;;
    pgbouncer) echo 'PgBouncer' ;;
    pg-auto-failover) echo 'pg_auto_failover' ;;
    postgres-bin) echo 'PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup)' ;;
    jaeger) echo 'Jaeger all-in-one' ;;
    oauth2-proxy) echo 'OAuth2 Proxy' ;;
    *) echo "unknown tool $1" ;;
  esac
}

# The script that builds a tool; none for what Debian installs.
tool_build() {
  case $1 in
    control-plane) echo scripts/control-plane/build.sh ;;
    registry) echo scripts/registry/build.sh ;;
    grpcurl) echo scripts/grpcurl/build.sh ;;
    cnpg-crds) echo scripts/cnpg-crds/fetch.sh ;;
    node-lts) echo scripts/node-lts/install.sh ;;
    helm) echo scripts/helm/build.sh ;;
    jaeger) echo scripts/jaeger/build.sh ;;
    oauth2-proxy) echo scripts/oauth2-proxy/build.sh ;;
  esac
}

pg_major() { ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -n 1; }

# Why a Debian-installed tool is unusable here, or nothing.
tool_missing() {
  local major
  major=$(pg_major)
  case $1 in
    openssl) command -v openssl >/dev/null 2>&1 || echo 'no openssl on PATH' ;;
    chromium)
      [ -x "${ARBOR_CHROMIUM:-/usr/bin/chromium}" ] ||
        echo "no Chromium at ${ARBOR_CHROMIUM:-/usr/bin/chromium}"
      ;;
    pgbouncer)
      [ -x /usr/sbin/pgbouncer ] || [ -x /usr/bin/pgbouncer ] || echo 'no pgbouncer installed'
      ;;
    pg-auto-failover)
      command -v pg_autoctl >/dev/null 2>&1 || { echo 'no pg_autoctl on PATH'; return; }
      [ -e "/usr/lib/postgresql/$major/lib/pgautofailover.so" ] ||
        echo "no pgautofailover.so for PostgreSQL ${major:-(none installed)}"
      ;;
    postgres-bin)
      local b
      for b in initdb pg_ctl pg_basebackup; do
        [ -x "/usr/lib/postgresql/$major/bin/$b" ] || {
          echo "no $b in /usr/lib/postgresql/${major:-?}/bin"
          return
        }
      done
      ;;
  esac
}

TOOLS_LOG=${TOOLS_LOG:-$(mktemp -d "${TMPDIR:-/tmp}/arbor-ci-tools.XXXXXX")}
declare -A TOOL_PID=() TOOL_START=()
TOOLS_SELECTED=()

# Starts every selected build in the background, each logging to $TOOLS_LOG/<tool>.err and
# printing its result (a path) last to $TOOLS_LOG/<tool>.out. Go's build cache is safe to
# share between builds running at once.
tools_start() {
  TOOLS_SELECTED=("$@")
  [ ${#TOOLS_SELECTED[@]} -gt 0 ] || TOOLS_SELECTED=("${ALL_TOOLS[@]}")
  local t script
  for t in "${TOOLS_SELECTED[@]}"; do
    script=$(tool_build "$t")
    [ -n "$script" ] || continue
    TOOL_START[$t]=$SECONDS
    bash "$script" >"$TOOLS_LOG/$t.out" 2>"$TOOLS_LOG/$t.err" </dev/null &
    TOOL_PID[$t]=$!
    printf '[tools] building %s in the background (log: %s)\n' "$(tool_name "$t")" \
      "$TOOLS_LOG/$t.err"
  done
}

# Waits for the builds, checks every selected tool, prints each one's time; returns 1 with
# a line naming each tool that is missing or did not build.
tools_finish() {
  local t rc why failed=() result
  for t in "${TOOLS_SELECTED[@]}"; do
    why=
    if [ -n "${TOOL_PID[$t]:-}" ]; then
      rc=0
      wait "${TOOL_PID[$t]}" || rc=$?
      result=$(tail -n 1 "$TOOLS_LOG/$t.out" 2>/dev/null)
      if [ "$rc" -ne 0 ]; then
        why="$(tool_build "$t") exited $rc"
        tail -n 20 "$TOOLS_LOG/$t.err" | sed "s/^/[tools] $t: /"
      elif [ -z "$result" ] || [ ! -e "$result" ]; then
        why="$(tool_build "$t") printed no path that exists ('$result')"
      fi
      printf '[tools] %-17s %4ds  %s\n' "$t" "$((SECONDS - TOOL_START[$t]))" "${why:-ok: $result}"
      if [ -z "$why" ] && [ "$t" = node-lts ]; then export ARBOR_TEST_NODE_LTS=$result; fi
    else
      why=$(tool_missing "$t")
      printf '[tools] %-17s %s\n' "$t" "${why:-ok}"
    fi
    [ -z "$why" ] || failed+=("$(tool_name "$t"): $why")
  done
  # The streaming-replica tests use the installed major's binaries, whichever it is.
  if [ -n "$(pg_major)" ]; then export ARBOR_PG_BIN=/usr/lib/postgresql/$(pg_major)/bin; fi
  if [ ${#failed[@]} -gt 0 ]; then
    printf '[tools] FAILED: %d tool(s) the tests need are missing or did not build:\n' \
      "${#failed[@]}"
    printf '[tools]   %s\n' "${failed[@]}"
    return 1
  fi
  printf '[tools] every tool the tests use is here\n'
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  cd "$(dirname "$0")/.."
  for t in "$@"; do
    case " ${ALL_TOOLS[*]} " in
      *" $t "*) ;;
      *) echo "unknown tool '$t'; one of: ${ALL_TOOLS[*]}" >&2; exit 2 ;;
    esac
  done
  tools_start "$@"
  tools_finish
fi
