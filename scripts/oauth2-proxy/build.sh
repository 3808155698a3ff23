#!/usr/bin/env bash
# Build OAuth2 Proxy from the Go module proxy, for the gateway end-to-end test (a real
# reverse proxy that accepts Arbor's API tokens by their signature, issuer and audience, as
# docs/oauth-clients.md tells a gateway to), on a machine that has Go but no oauth2-proxy.
# Output: ${ARBOR_CACHE:-$HOME/.cache/arbor}/oauth2-proxy/<version>/oauth2-proxy
#         (see go-tool/install.sh)
set -euo pipefail
readonly VERSION=v7.15.6
exec "$(dirname "$0")/../go-tool/install.sh" oauth2-proxy "$VERSION" \
  github.com/oauth2-proxy/oauth2-proxy/v7
