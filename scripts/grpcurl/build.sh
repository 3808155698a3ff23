#!/usr/bin/env bash
# Build grpcurl from the Go module proxy, for the gRPC end-to-end test (reflection and one
# call with no proto files at hand), on a machine that has Go but no grpcurl package.
#
# Output: ${ARBOR_CACHE:-$HOME/.cache/arbor}/grpcurl/<version>/grpcurl
# Idempotent: a second run finds the binary and returns at once. Prints the binary's path.
# Env:    ARBOR_CACHE  cache root (default ~/.cache/arbor)
#         GO           go binary (default: `go` on PATH, else /usr/local/go/bin/go)
set -euo pipefail

readonly VERSION=v1.9.3
readonly MODULE=github.com/fullstorydev/grpcurl/cmd/grpcurl

out="${ARBOR_CACHE:-$HOME/.cache/arbor}/grpcurl/$VERSION"
if [ -x "$out/grpcurl" ]; then
  echo "$out/grpcurl"
  exit 0
fi
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ -x "$GO" ] || { echo "grpcurl/build: no Go toolchain found" >&2; exit 1; }

mkdir -p "$out"
tmp=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# GOBIN into a temporary directory, then a rename: a half-written binary is never cached.
GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS=-mod=mod "$GO" install -trimpath "$MODULE@$VERSION" >&2
mv "$tmp/grpcurl" "$out/grpcurl"
echo "$out/grpcurl"
