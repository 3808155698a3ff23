#!/usr/bin/env bash
# Build one Go command with `go install MODULE@VERSION` into the tools cache, for the tools
# whose module builds as it stands (grpcurl, helm). Jaeger (a replace directive), the
# registry and the control plane need their own recipes and keep their own scripts.
#
# Usage:  scripts/go-tool/install.sh NAME VERSION MODULE
# Output: ${ARBOR_CACHE:-$HOME/.cache/arbor}/NAME/VERSION/NAME
# Idempotent: a second run finds the binary and returns at once. Prints the binary's path.
# Env:    ARBOR_CACHE  cache root (default ~/.cache/arbor)
#         GO           go binary (default: `go` on PATH, else /usr/local/go/bin/go)
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: $0 NAME VERSION MODULE" >&2; exit 2; }
readonly NAME=$1 VERSION=$2 MODULE=$3

out="${ARBOR_CACHE:-$HOME/.cache/arbor}/$NAME/$VERSION"
if [ -x "$out/$NAME" ]; then
  echo "$out/$NAME"
  exit 0
fi
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ -x "$GO" ] || { echo "$NAME/build: no Go toolchain found" >&2; exit 1; }

mkdir -p "$out"
tmp=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# GOBIN into a temporary directory, then a rename: a half-written binary is never cached.
GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS=-mod=mod "$GO" install -trimpath "$MODULE@$VERSION" >&2
mv "$tmp/$NAME" "$out/$NAME"
echo "$out/$NAME"
