#!/usr/bin/env bash
# Build Jaeger all-in-one from the Go module proxy, for the tracing end-to-end test (a real
# OTLP receiver whose query API returns the spans Arbor exported), on a machine that has Go
# but no Jaeger package.
#
# Output: ${ARBOR_CACHE:-$HOME/.cache/arbor}/jaeger-<version>/jaeger-all-in-one
# Idempotent: a second run finds the binary and returns at once. Prints the binary's path.
# Env:    ARBOR_CACHE  cache root (default ~/.cache/arbor)
#         GO           go binary (default: `go` on PATH, else /usr/local/go/bin/go)
set -euo pipefail

readonly VERSION=v1.76.0
readonly MODULE=github.com/jaegertracing/jaeger

out="${ARBOR_CACHE:-$HOME/.cache/arbor}/jaeger-$VERSION"
if [ -x "$out/jaeger-all-in-one" ]; then
  echo "$out/jaeger-all-in-one"
  exit 0
fi
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[ -x "$GO" ] || { echo "jaeger/build: no Go toolchain found" >&2; exit 1; }

mkdir -p "$out"
tmp=$(mktemp -d "$out/.build.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# Jaeger's go.mod has a replace directive, which `go install module@version` refuses; so the
# module's source is downloaded (checked against the sum database as usual) and built as the
# main module, its own go.mod and go.sum deciding every dependency.
src=$(GOFLAGS=-mod=mod "$GO" mod download -json "$MODULE@$VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "jaeger/build: $MODULE@$VERSION did not download" >&2; exit 1; }
cp -R "$src" "$tmp/src"
chmod -R u+w "$tmp/src"
# Built into the temporary directory, then a rename: a half-written binary is never cached.
(cd "$tmp/src" && CGO_ENABLED=0 "$GO" build -trimpath -o "$tmp/jaeger-all-in-one" \
  ./cmd/all-in-one) >&2
mv "$tmp/jaeger-all-in-one" "$out/jaeger-all-in-one"
echo "$out/jaeger-all-in-one"
