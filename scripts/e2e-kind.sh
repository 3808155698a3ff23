#!/usr/bin/env bash
# End-to-end on a throw-away kind cluster, for machines with Docker: build the image,
# deploy Arbor (deploy/base) with a scratch PostgreSQL, apply the CRDs' example tree,
# wait until every object is Ready, then run the example workload that trades its
# projected ServiceAccount token for an Arbor token and lists groups with it.
#
# Needs: docker, kind, kubectl. Not run in CI (no Docker there); CI runs the same
# reconciler against a real kube-apiserver in test/e2e/reconciler*.test.ts instead.
#
# Usage: scripts/e2e-kind.sh        KEEP=1 keeps the cluster afterwards
set -euo pipefail

CLUSTER=${CLUSTER:-arbor-e2e}
IMAGE=arbor:dev
TIMEOUT=${TIMEOUT:-180s}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
log() { printf '\n[e2e-kind] %s\n' "$*" >&2; }
for tool in docker kind kubectl; do
  command -v "$tool" >/dev/null || { echo "e2e-kind: $tool is required" >&2; exit 1; }
done

cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then log "keeping cluster $CLUSTER (kind delete cluster --name $CLUSTER)"
  else kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

if ! kind get clusters | grep -qx "$CLUSTER"; then
  log "creating kind cluster $CLUSTER"
  kind create cluster --name "$CLUSTER" --wait 120s
fi
kubectl config use-context "kind-$CLUSTER" >/dev/null

log "building $IMAGE and loading it into the cluster"
docker build -t "$IMAGE" .
kind load docker-image "$IMAGE" --name "$CLUSTER"

log "scratch PostgreSQL in namespace arbor-e2e-db (trust auth: test only)"
kubectl create namespace arbor-e2e-db --dry-run=client -o yaml | kubectl apply -f -
kubectl -n arbor-e2e-db apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: postgres}
spec:
  selector: {matchLabels: {app: postgres}}
  template:
    metadata: {labels: {app: postgres}}
    spec:
      containers:
        - name: postgres
          image: postgres:16
          env: [{name: POSTGRES_HOST_AUTH_METHOD, value: trust}]
          ports: [{containerPort: 5432}]
          readinessProbe: {exec: {command: [pg_isready, -U, postgres]}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: postgres}
spec:
  selector: {app: postgres}
  ports: [{port: 5432}]
YAML
kubectl -n arbor-e2e-db rollout status deploy/postgres --timeout="$TIMEOUT"

log "secrets arbor-db and arbor-admin, then deploy/base"
kubectl apply -f deploy/base/namespace.yaml
kubectl -n arbor-system create secret generic arbor-db \
  --from-literal=DATABASE_URL=postgres://postgres@postgres.arbor-e2e-db.svc:5432/postgres \
  --dry-run=client -o yaml | kubectl apply -f -
kubectl -n arbor-system create secret generic arbor-admin \
  --from-literal=ARBOR_ADMIN_TOKEN="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
  --dry-run=client -o yaml | kubectl apply -f -
kubectl -n arbor-system delete job arbor-migrate --ignore-not-found
kubectl apply -f crds/
kubectl apply -k deploy/base
# The example tree creates an organization, which only the administrator may: let the
# default namespace act as one (docs/adr/0005-namespace-authority.md).
kubectl -n arbor-system set env deploy/arbor-reconciler ARBOR_RECONCILER_ADMIN_NAMESPACES=default
kubectl -n arbor-system wait --for=condition=complete job/arbor-migrate --timeout="$TIMEOUT"
kubectl -n arbor-system rollout status deploy/arbor-api --timeout="$TIMEOUT"
kubectl -n arbor-system rollout status deploy/arbor-reconciler --timeout="$TIMEOUT"

log "example tree: Groups, an Identity and a RoleBinding"
kubectl apply -f crds/examples/org-tree.yaml
kubectl wait --for=condition=Ready --timeout="$TIMEOUT" \
  groups.arbor.dev/acme groups.arbor.dev/acme-platform \
  identities.arbor.dev/workload rolebindings.arbor.dev/workload-viewer
kubectl get arbor

log "example workload: projected token -> /sts/exchange -> /iam/v2beta1/groups"
kubectl delete pod arbor-workload --ignore-not-found
kubectl create configmap arbor-workload \
  --from-literal=IDENTITY_UID="$(kubectl get identities.arbor.dev workload -o jsonpath='{.status.uid}')" \
  --dry-run=client -o yaml | kubectl apply -f -
kubectl apply -f deploy/examples/workload.yaml
kubectl wait --for=jsonpath='{.status.phase}'=Succeeded pod/arbor-workload --timeout="$TIMEOUT" || {
  kubectl logs arbor-workload || true
  kubectl -n arbor-system logs deploy/arbor-api --tail=50 || true
  exit 1
}
kubectl logs arbor-workload
log "OK"
