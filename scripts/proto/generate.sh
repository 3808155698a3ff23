#!/usr/bin/env bash
# Lint the protos and regenerate their TypeScript (protobuf-es v2) into src/gen.
# The generated code is checked in (docs/adr/0006-grpc-on-the-rest-port.md); CI runs
# `scripts/proto/generate.sh --check`, which fails when src/gen is not what the protos give.
# Both tools come from npm (@bufbuild/buf ships the buf binary), so nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/../.."
PATH="$PWD/node_modules/.bin:$PATH"

buf lint
buf generate
npx prettier --log-level warn --write src/gen

if [ "${1:-}" = "--check" ]; then
  if ! git diff --exit-code --stat -- src/gen || [ -n "$(git status --porcelain -- src/gen)" ]; then
    echo "src/gen is stale: run scripts/proto/generate.sh and commit the result" >&2
    exit 1
  fi
fi
