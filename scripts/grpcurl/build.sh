#!/usr/bin/env bash
# Build grpcurl from the Go module proxy, for the gRPC end-to-end test (reflection and one
# call with no proto files at hand), on a machine that has Go but no grpcurl package.
# Output: ${ARBOR_CACHE:-$HOME/.cache/arbor}/grpcurl/<version>/grpcurl (see go-tool/install.sh)
set -euo pipefail
readonly VERSION=v1.9.3
exec "$(dirname "$0")/../go-tool/install.sh" grpcurl "$VERSION" github.com/fullstorydev/grpcurl/cmd/grpcurl
