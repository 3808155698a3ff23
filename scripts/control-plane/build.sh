#!/usr/bin/env bash
# Build kube-apiserver, kubectl and etcd from the Go module proxy, for tests
# that need a real Kubernetes control plane on a machine without Docker.
#
# Output: ${ARBOR_CACHE:-$HOME/.cache/arbor}/k8s/<k8s-version>/bin/{kube-apiserver,kubectl,etcd}
# The build is skipped when those binaries exist and were built from the same
# recipe (bin/.stamp), so a second run (e.g. the next CI run) takes a second.
#
# Why a wrapper module: `go install k8s.io/kubernetes/cmd/...@vX` cannot work,
# because k8s.io/kubernetes requires its staging modules (k8s.io/api, ...) at
# v0.0.0 and maps them with `replace => ./staging/...`, and replaces in a
# dependency are ignored. So we create a throw-away module OUTSIDE the repo
# that requires k8s.io/kubernetes and replaces each staging module with its
# published v0.Y.Z tag. etcd gets its own wrapper module so its version does
# not move the etcd client libraries compiled into the apiserver.
#
# Usage: scripts/control-plane/build.sh            (prints the bin dir last)
# Env:   ARBOR_CACHE   cache root (default ~/.cache/arbor)
#        GO            go binary (default: `go` on PATH, else /usr/local/go/bin/go)
set -euo pipefail

# ---- pinned versions -------------------------------------------------------
# Bumping: the proxy reachable here serves only some tags (others answer
# "403 This module version is not available"), so check each module with
# `go mod download -json MODULE@VERSION` before changing these.
readonly K8S_VERSION=v1.34.4         # kube-apiserver and kubectl
readonly STAGING_VERSION=v0.34.4     # staging modules are tagged v0.Y.Z for v1.Y.Z
# k8s.io/sample-apiserver has no v0.34.4 on the proxy. Only its go.mod is read
# (k8s.io/kubernetes requires it, no binary we build imports it), so the
# nearest served tag is fine.
readonly SAMPLE_APISERVER_VERSION=v0.34.2
# Kubernetes 1.34 is built and tested against etcd 3.6 (its client is 3.6.4);
# take the newest 3.6 patch the proxy serves. Its go.mod says `go 1.26.0`.
readonly ETCD_VERSION=v3.6.16
# Bump when the build recipe (flags, layout) changes, to force a rebuild.
readonly RECIPE_REVISION=1

# Staging modules of k8s.io/kubernetes v1.34 that its go.mod requires (the 31
# staging dirs minus sample-cli-plugin and sample-controller, which it does not
# require and which the proxy does not serve at v0.34.x).
readonly STAGING_MODULES=(
  k8s.io/api k8s.io/apiextensions-apiserver k8s.io/apimachinery k8s.io/apiserver
  k8s.io/cli-runtime k8s.io/client-go k8s.io/cloud-provider k8s.io/cluster-bootstrap
  k8s.io/code-generator k8s.io/component-base k8s.io/component-helpers
  k8s.io/controller-manager k8s.io/cri-api k8s.io/cri-client k8s.io/csi-translation-lib
  k8s.io/dynamic-resource-allocation k8s.io/endpointslice k8s.io/externaljwt k8s.io/kms
  k8s.io/kube-aggregator k8s.io/kube-controller-manager k8s.io/kube-proxy
  k8s.io/kube-scheduler k8s.io/kubectl k8s.io/kubelet k8s.io/metrics k8s.io/mount-utils
  k8s.io/pod-security-admission
)

readonly BINARIES=(kube-apiserver kubectl etcd)

# ---- helpers ---------------------------------------------------------------
START_TIME=$SECONDS
log() { printf '[control-plane/build %4ds] %s\n' "$((SECONDS - START_TIME))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Run a long `go build -v` with its package list going to a log file, printing
# a heartbeat every 30s (CI logs otherwise look hung for ~15 minutes) and the
# log's tail if it fails.
run_logged() {
  local what=$1 logfile=$2 total=$3; shift 3
  log "$what (log: $logfile)"
  "$@" >"$logfile" 2>&1 &
  local pid=$!
  # The ticker's stdout and its `sleep` are detached from our pipes: a killed
  # ticker's orphaned sleep would otherwise hold a caller's $(...) open.
  (
    while sleep 30 >/dev/null 2>&1; do
      kill -0 "$pid" 2>/dev/null || exit 0
      log "  ... still $what: $(wc -l <"$logfile") of ~$total packages compiled"
    done
  ) >/dev/null &
  local ticker=$!
  local rc=0
  wait "$pid" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [ "$rc" -ne 0 ]; then
    log "last lines of $logfile:"
    tail -n 40 "$logfile" >&2
    die "$what failed (exit $rc)"
  fi
}

# ---- locate go ---------------------------------------------------------------
GO=${GO:-}
if [ -z "$GO" ]; then
  if command -v go >/dev/null 2>&1; then GO=$(command -v go)
  elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
  else die "no Go toolchain found (need Go >= 1.26: put go on PATH or set GO=/path/to/go)"
  fi
fi
go_version=$(GOTOOLCHAIN=local "$GO" env GOVERSION) || die "cannot run $GO"
# etcd v3.6.16's go.mod declares go 1.26.0; GOTOOLCHAIN=local (below) forbids
# downloading a newer toolchain, so an older Go must fail here, clearly.
case "$go_version" in
  go1.2[6-9]*|go1.[3-9][0-9]*) ;;
  *) die "$GO is $go_version; need Go >= 1.26" ;;
esac

# ---- cache layout ----------------------------------------------------------
CACHE_ROOT=${ARBOR_CACHE:-$HOME/.cache/arbor}
VERSION_DIR=$CACHE_ROOT/k8s/$K8S_VERSION
BIN_DIR=$VERSION_DIR/bin
STAMP="k8s=$K8S_VERSION staging=$STAGING_VERSION etcd=$ETCD_VERSION recipe=$RECIPE_REVISION"

have_binaries() {
  local b
  for b in "${BINARIES[@]}"; do [ -x "$BIN_DIR/$b" ] || return 1; done
  [ -f "$BIN_DIR/.stamp" ] && [ "$(cat "$BIN_DIR/.stamp")" = "$STAMP" ]
}

if have_binaries; then
  log "up to date: $BIN_DIR ($STAMP)"
  echo "$BIN_DIR"
  exit 0
fi

mkdir -p "$VERSION_DIR"
# Two builds at once (two terminals, CI + developer) would race on the same
# wrapper dirs; serialise, then re-check in case the other one finished it.
exec 9>"$VERSION_DIR/.lock"
if ! flock -n 9; then
  log "another build holds $VERSION_DIR/.lock; waiting for it"
  flock 9
fi
if have_binaries; then
  log "up to date (built by a concurrent run): $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi

# All Go state lives under the cache dir: nothing in $HOME/go, nothing in the
# repo, and CI can cache/clean one directory.
export GOPATH=$CACHE_ROOT/go/path
export GOMODCACHE=$CACHE_ROOT/go/mod
export GOCACHE=$CACHE_ROOT/go/build
# -trimpath: no local paths in the binaries; -modcacherw: the module cache is
# deletable with a plain rm -rf; -buildvcs=false: the wrapper is not in a repo.
export GOFLAGS="-trimpath -modcacherw -buildvcs=false"
export GOWORK=off          # never pick up a go.work from a parent directory
export GOTOOLCHAIN=local   # never try to download a toolchain
export CGO_ENABLED=0       # static binaries, as upstream builds them; no C compiler needed
mkdir -p "$GOPATH" "$GOMODCACHE" "$GOCACHE"

# A cold build needs ~0.8 GB of modules and ~2.6 GB of build cache; failing
# half-way through on a full disk is slow and confusing, so check first
# (only when cold: a warm cache needs far less).
if [ ! -d "$GOMODCACHE/k8s.io/kubernetes@$K8S_VERSION" ]; then
  free_kb=$(df -Pk "$CACHE_ROOT" | awk 'NR==2 {print $4}')
  if [ "${free_kb:-0}" -lt $((4 * 1024 * 1024)) ]; then
    die "only $((free_kb / 1024)) MB free under $CACHE_ROOT; a cold build needs ~4 GB (set ARBOR_CACHE elsewhere?)"
  fi
fi

log "building $STAMP with $go_version on $(nproc) cores into $BIN_DIR"
log "cache: $CACHE_ROOT (cold: ~3.5 GB of modules + build cache, ~15 min on 2 cores)"

# Build into a scratch dir and move the binaries in at the end, so a failed or
# interrupted build never leaves a half-populated bin dir behind.
WORK=$VERSION_DIR/work
rm -rf "$WORK"
mkdir -p "$WORK/kube" "$WORK/etcd" "$WORK/out"

# ---- wrapper module: kube-apiserver + kubectl ------------------------------
{
  echo "// Generated by arbor scripts/control-plane/build.sh; throw-away wrapper."
  echo "module arbor.local/control-plane/kube"
  echo
  # Same go / godebug lines as k8s.io/kubernetes v1.34 declares, so the
  # binaries get the GODEBUG defaults upstream ships with.
  echo "go 1.24.0"
  echo
  echo "godebug default=go1.24"
  echo
  echo "require k8s.io/kubernetes $K8S_VERSION"
  echo
  echo "// No version on the left: also replaces the v0.0.0 that k8s.io/kubernetes requires."
  echo "replace ("
  for m in "${STAGING_MODULES[@]}"; do
    printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"
  done
  printf '\t%s => %s %s\n' k8s.io/sample-apiserver k8s.io/sample-apiserver "$SAMPLE_APISERVER_VERSION"
  echo ")"
} >"$WORK/kube/go.mod"

# ---- wrapper module: etcd ----------------------------------------------------
# go.etcd.io/etcd/server/v3's root package is `package main` (etcdmain.Main).
# Its own replace lines (=> ../api etc.) are ignored, the published
# api/client/pkg modules at the same tag are used instead.
cat >"$WORK/etcd/go.mod" <<EOF
// Generated by arbor scripts/control-plane/build.sh; throw-away wrapper.
module arbor.local/control-plane/etcd

go 1.26.0

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
EOF

readonly KUBE_PKGS=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl)
readonly ETCD_PKG=go.etcd.io/etcd/server/v3

# ---- resolve + download ----------------------------------------------------
# `go list -mod=mod -deps` downloads exactly the modules these packages need
# (not the whole k8s test graph, as `go mod download`/`tidy` would) and
# records their checksums in go.sum, verified against the checksum database.
log "resolving and downloading modules for kube-apiserver + kubectl"
(cd "$WORK/kube" && "$GO" list -mod=mod -deps "${KUBE_PKGS[@]}" >"$WORK/kube-deps.txt" 2>"$WORK/kube-list.log") \
  || { tail -n 40 "$WORK/kube-list.log" >&2; die "module download for kube-apiserver/kubectl failed (proxy unreachable, or a pinned tag not served?)"; }
KUBE_NPKGS=$(wc -l <"$WORK/kube-deps.txt")
log "  $KUBE_NPKGS packages (incl. the standard library)"

log "resolving and downloading modules for etcd"
(cd "$WORK/etcd" && "$GO" list -mod=mod -deps "$ETCD_PKG" >"$WORK/etcd-deps.txt" 2>"$WORK/etcd-list.log") \
  || { tail -n 40 "$WORK/etcd-list.log" >&2; die "module download for etcd failed (proxy unreachable, or a pinned tag not served?)"; }
ETCD_NPKGS=$(wc -l <"$WORK/etcd-deps.txt")
log "  $ETCD_NPKGS packages (incl. the standard library)"

# ---- compile -----------------------------------------------------------------
# Version stamps as upstream's hack/lib/version.sh sets them; without them the
# server reports v0.0.0-master+$Format and kubectl warns about version skew.
# -s -w: no symbol table / DWARF, smaller binaries and a cheaper link.
minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
kube_ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done

# One `go build` for both commands: they share most packages, and go builds
# them in parallel.
(cd "$WORK/kube" && run_logged "compiling kube-apiserver + kubectl" "$WORK/kube-build.log" "$KUBE_NPKGS" \
  "$GO" build -v -ldflags "$kube_ldflags" -o "$WORK/out/" "${KUBE_PKGS[@]}")

(cd "$WORK/etcd" && run_logged "compiling etcd" "$WORK/etcd-build.log" "$ETCD_NPKGS" \
  "$GO" build -v -ldflags "-s -w" -o "$WORK/out/etcd" "$ETCD_PKG")

# ---- smoke check + install -------------------------------------------------
"$WORK/out/kube-apiserver" --version >&2 || die "built kube-apiserver does not run"
"$WORK/out/kubectl" version --client >&2 || die "built kubectl does not run"
"$WORK/out/etcd" --version >&2 || die "built etcd does not run"

mkdir -p "$BIN_DIR"
for b in "${BINARIES[@]}"; do mv -f "$WORK/out/$b" "$BIN_DIR/$b"; done
# Keep the wrapper go.mod/go.sum and logs for reference (small).
rmdir "$WORK/out"
echo "$STAMP" >"$BIN_DIR/.stamp"   # written last: marks the bin dir complete

log "done in $((SECONDS - START_TIME))s: $BIN_DIR"
echo "$BIN_DIR"
