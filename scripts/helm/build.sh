#!/usr/bin/env bash
# Build helm from the Go module proxy, for the chart's tests (`helm lint`, `helm template`
# compared with `kustomize build deploy/base`, and the rendered chart applied with
# --dry-run=server on the real kube-apiserver), on a machine with Go but no helm package.
#
# Output: ${ARBOR_CACHE:-$HOME/.cache/arbor}/helm/<version>/helm
# Idempotent: a second run finds the binary and returns at once. Prints the binary's path.
# Env:    ARBOR_CACHE  cache root (default ~/.cache/arbor)
#         GO           go binary (default: `go` on PATH, else /usr/local/go/bin/go)
set -euo pipefail

readonly VERSION=v3.19.0
readonly MODULE=helm.sh/helm/v3/cmd/helm

out="${ARBOR_CACHE:-$HOME/.cache/arbor}/helm/$VERSION"
if [ -x "$out/helm" ]; then
  echo "$out/helm"
  exit 0
fi
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ -x "$GO" ] || { echo "helm/build: no Go toolchain found" >&2; exit 1; }

mkdir -p "$out"
tmp=$(mktemp -d "$out/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# GOBIN into a temporary directory, then a rename: a half-written binary is never cached.
GOBIN="$tmp" CGO_ENABLED=0 GOFLAGS=-mod=mod "$GO" install -trimpath "$MODULE@$VERSION" >&2
mv "$tmp/helm" "$out/helm"
echo "$out/helm"
