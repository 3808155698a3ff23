#!/usr/bin/env bash
# Fetch CloudNativePG's CustomResourceDefinitions from its Go module's source, for the
# end-to-end test that server-side dry-runs deploy/overlays/ha (a CNPG `Cluster` among
# Arbor's own objects) against a real kube-apiserver: the CRDs are the schema the Cluster
# is validated with, so they must be CNPG's own, not a hand copy.
#
# `go mod download -json MODULE@VERSION` fetches the module zip through the module proxy
# (checked against sum.golang.org) and prints where it was unpacked; the CRD YAML ships in
# it under config/crd/bases/. Nothing is built.
#
# Output: ${ARBOR_CACHE:-$HOME/.cache/arbor}/cnpg-<version>/crds/*.yaml (path printed last)
# A second run finds the stamp and prints the path at once.
# Env:   ARBOR_CACHE   cache root (default ~/.cache/arbor)
#        GO            go binary (default: `go` on PATH, else /usr/local/go/bin/go)
set -euo pipefail

readonly CNPG_MODULE=github.com/cloudnative-pg/cloudnative-pg
readonly CNPG_VERSION=v1.28.0

log() { printf '[cnpg-crds] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

GO=${GO:-}
if [ -z "$GO" ]; then
  if command -v go >/dev/null 2>&1; then GO=$(command -v go)
  elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
  else die "no Go toolchain found (put go on PATH or set GO=/path/to/go)"
  fi
fi

CACHE_ROOT=${ARBOR_CACHE:-$HOME/.cache/arbor}
DIR=$CACHE_ROOT/cnpg-$CNPG_VERSION
OUT=$DIR/crds
STAMP="$CNPG_MODULE@$CNPG_VERSION"
if [ -f "$OUT/.stamp" ] && [ "$(cat "$OUT/.stamp")" = "$STAMP" ]; then
  echo "$OUT"
  exit 0
fi

mkdir -p "$DIR"
exec 9>"$DIR/.lock"
flock 9 # a concurrent run fetches the same thing: wait, then re-check
if [ -f "$OUT/.stamp" ] && [ "$(cat "$OUT/.stamp")" = "$STAMP" ]; then
  echo "$OUT"
  exit 0
fi

export GOPATH=$DIR/go/path GOMODCACHE=$DIR/go/mod GOCACHE=$DIR/go/build
export GOFLAGS="-mod=mod -modcacherw" GOWORK=off GOTOOLCHAIN=local
mkdir -p "$GOPATH" "$GOMODCACHE" "$GOCACHE"

log "go mod download $CNPG_MODULE@$CNPG_VERSION"
# Run outside any module so no go.mod is read or written.
json=$(cd "$DIR" && "$GO" mod download -json "$CNPG_MODULE@$CNPG_VERSION")
src=$(printf '%s' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -n 1)
[ -n "$src" ] && [ -d "$src" ] || die "no module directory in: $json"
[ -d "$src/config/crd/bases" ] || die "no config/crd/bases in $src"

rm -rf "$OUT.tmp"
mkdir -p "$OUT.tmp"
cp "$src"/config/crd/bases/*.yaml "$OUT.tmp/"
n=$(ls "$OUT.tmp"/*.yaml | wc -l)
[ "$n" -gt 0 ] || die "no CRD YAML in $src/config/crd/bases"
echo "$STAMP" >"$OUT.tmp/.stamp"
rm -rf "$OUT"
mv "$OUT.tmp" "$OUT"
log "$n CRDs in $OUT"
echo "$OUT"
