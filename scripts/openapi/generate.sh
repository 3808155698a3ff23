#!/usr/bin/env bash
# Write the OpenAPI document the code serves (src/client/openapi.json) and the typed
# client's types generated from it by openapi-typescript (src/client/openapi-types.ts).
# Both are checked in (docs/adr/0007-openapi-from-zod.md); CI runs
# `scripts/openapi/generate.sh --check`, which fails when either is not what the code gives.
set -euo pipefail
cd "$(dirname "$0")/../.."
PATH="$PWD/node_modules/.bin:$PATH"
OUT=src/client
GENERATED=("$OUT/openapi.json" "$OUT/openapi-types.ts")

tsx scripts/openapi/write-document.ts "$OUT/openapi.json"
openapi-typescript "$OUT/openapi.json" --output "$OUT/openapi-types.ts" --silent
prettier --log-level warn --write "${GENERATED[@]}"

if [ "${1:-}" = "--check" ]; then
  if ! git diff --exit-code --stat -- "${GENERATED[@]}" ||
    [ -n "$(git status --porcelain -- "${GENERATED[@]}")" ]; then
    echo "${GENERATED[*]} are stale: run scripts/openapi/generate.sh (npm run openapi) and commit the result" >&2
    exit 1
  fi
fi
