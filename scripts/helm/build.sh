#!/usr/bin/env bash
# Build helm from the Go module proxy, for the chart's tests (`helm lint`, `helm template`
# compared with `kustomize build deploy/base`, and the rendered chart applied with
# --dry-run=server on the real kube-apiserver), on a machine with Go but no helm package.
# Output: ${ARBOR_CACHE:-$HOME/.cache/arbor}/helm/<version>/helm (see go-tool/install.sh)
set -euo pipefail
readonly VERSION=v3.19.0
exec "$(dirname "$0")/../go-tool/install.sh" helm "$VERSION" helm.sh/helm/v3/cmd/helm
