#!/usr/bin/env bash
# Start a real, minimal Kubernetes control plane (etcd + kube-apiserver) on
# loopback for tests: no Docker, no kubelet, no controller-manager, no
# scheduler. The flag set follows controller-runtime's envtest, plus a static
# admin token and a https service-account issuer (so TokenRequest and the
# /openid/v1/jwks discovery endpoint work).
#
# Usage: scripts/control-plane/start.sh [DIR]
#   DIR (default: a new mktemp dir) receives:
#     kubeconfig   admin kubeconfig (bearer token, CA embedded)
#     env          KEY=value lines, for `source` / `set -a` / dotenv
#     pids         etcd and kube-apiserver pids, one per line (stop.sh reads it)
#     pki/         CA, serving cert, service-account signing key pair, token file
#     *.log        etcd and kube-apiserver logs
#   The last line on stdout is DIR; progress goes to stderr.
#
# Env (all optional):
#   ARBOR_KUBE_BIN_DIR       dir with etcd, kube-apiserver, kubectl (default: run build.sh,
#                            a fast no-op when already built)
#   ARBOR_ETCD_PORT, ARBOR_ETCD_PEER_PORT, ARBOR_APISERVER_PORT
#                            fixed ports (default: free random ports in 20000-32767)
#   ARBOR_API_AUDIENCES      --api-audiences (default: the issuer URL)
#   ARBOR_KUBE_START_TIMEOUT seconds to wait for readiness (default 90)
#   ARBOR_APISERVER_EXTRA_ARGS  extra kube-apiserver flags, space separated
#
# Stop with scripts/control-plane/stop.sh DIR.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
START_TIME=$SECONDS
log() { printf '[control-plane/start %3ds] %s\n' "$((SECONDS - START_TIME))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

for tool in openssl curl base64; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is required (apt-get install $tool)"
done

# ---- working dir -----------------------------------------------------------
if [ $# -ge 1 ] && [ -n "$1" ]; then
  mkdir -p "$1"
  DIR=$(cd "$1" && pwd)
else
  DIR=$(mktemp -d "${TMPDIR:-/tmp}/arbor-kube.XXXXXX")
fi
# The env file is written unquoted so that shells, dotenv parsers and
# `node --env-file` all read it the same way; that needs a plain path.
case "$DIR" in
  *[[:space:]\"\'\$\`\\]*) die "working dir must not contain spaces, quotes, \$, \` or \\: $DIR" ;;
esac
if [ -s "$DIR/pids" ]; then
  die "$DIR/pids exists: a control plane may already run there (stop.sh $DIR first)"
fi
PKI=$DIR/pki
mkdir -p "$PKI"

# ---- binaries ----------------------------------------------------------------
if [ -n "${ARBOR_KUBE_BIN_DIR:-}" ]; then
  BIN_DIR=$ARBOR_KUBE_BIN_DIR
else
  # build.sh prints the bin dir as its last stdout line; it is a no-op when built.
  BIN_DIR=$("$SCRIPT_DIR/build.sh" | tail -n 1) || die "build.sh failed"
fi
for b in etcd kube-apiserver kubectl; do
  [ -x "$BIN_DIR/$b" ] || die "$BIN_DIR/$b missing: run scripts/control-plane/build.sh"
done
KUBECTL=$BIN_DIR/kubectl

# ---- ports -------------------------------------------------------------------
# A port is taken as free when nothing accepts a connection on it. Stay below
# Linux's ephemeral range (32768+) so outgoing connections don't grab it
# between this check and the bind.
declare -a CHOSEN_PORTS=()
free_port() {
  local p i used
  for i in $(seq 1 100); do
    p=$((20000 + RANDOM % 12768))
    used=0
    for q in "${CHOSEN_PORTS[@]}"; do [ "$q" = "$p" ] && used=1; done
    [ "$used" = 1 ] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  die "no free loopback port found"
}
# free_port runs in a $(...) subshell, so record the pick here, in the parent.
pick_port() { local v; v=$(free_port); CHOSEN_PORTS+=("$v"); printf -v "$1" '%s' "$v"; }
if [ -n "${ARBOR_ETCD_PORT:-}" ]; then ETCD_PORT=$ARBOR_ETCD_PORT; CHOSEN_PORTS+=("$ETCD_PORT"); else pick_port ETCD_PORT; fi
if [ -n "${ARBOR_ETCD_PEER_PORT:-}" ]; then ETCD_PEER_PORT=$ARBOR_ETCD_PEER_PORT; CHOSEN_PORTS+=("$ETCD_PEER_PORT"); else pick_port ETCD_PEER_PORT; fi
if [ -n "${ARBOR_APISERVER_PORT:-}" ]; then API_PORT=$ARBOR_APISERVER_PORT; CHOSEN_PORTS+=("$API_PORT"); else pick_port API_PORT; fi

ETCD_URL=http://127.0.0.1:$ETCD_PORT
API_URL=https://127.0.0.1:$API_PORT
# The issuer must be https, or the apiserver silently skips the discovery
# endpoints. It becomes the `iss` claim of every service-account token.
SA_ISSUER=$API_URL
# Default jwks_uri would use the host's advertise address; tests only talk to
# loopback, so point discovery at the loopback URL.
SA_JWKS_URI=$API_URL/openid/v1/jwks
API_AUDIENCES=${ARBOR_API_AUDIENCES:-$SA_ISSUER}

# ---- PKI ---------------------------------------------------------------------
log "generating CA, serving cert, service-account keys and admin token in $PKI"
openssl_q() { openssl "$@" 2>>"$PKI/openssl.log" || die "openssl $1 failed (see $PKI/openssl.log)"; }
# CA and serving keys are EC P-256: RSA key generation takes seconds here, per
# start. The service-account key stays RSA: RS256 is what every JWT verifier
# supports, and what real clusters publish.
openssl_q req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
  -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -subj "/CN=arbor-test-ca" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
openssl_q req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$PKI/apiserver.key" -out "$PKI/apiserver.csr" \
  -subj "/CN=kube-apiserver"
cat >"$PKI/apiserver.ext" <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
EOF
openssl_q x509 -req -in "$PKI/apiserver.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
  -CAcreateserial -days 3650 -extfile "$PKI/apiserver.ext" -out "$PKI/apiserver.crt"
# Service-account token signing key (RS256) and its public half for verification.
openssl_q genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key"
openssl_q pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"
# Static token file: token,user,uid,"groups". system:masters bypasses RBAC.
ADMIN_TOKEN=$(openssl rand -hex 32)
printf '%s,admin,admin,"system:masters"\n' "$ADMIN_TOKEN" >"$PKI/tokens.csv"
chmod 600 "$PKI"/*.key "$PKI/tokens.csv"

# ---- cleanup on failure ------------------------------------------------------
PIDS=()
STARTED_OK=0
on_exit() {
  if [ "$STARTED_OK" != 1 ] && [ "${#PIDS[@]}" -gt 0 ]; then
    log "start failed; stopping what was started"
    "$SCRIPT_DIR/stop.sh" "$DIR" >&2 || true
  fi
}
trap on_exit EXIT

# Start a daemon. Output goes to a log file and stdin from /dev/null, so a
# caller that captures our stdout (node's execFile, $(...)) is not kept
# waiting by the daemons holding its pipe open.
start_daemon() {
  local name=$1; shift
  "$@" </dev/null >"$DIR/$name.log" 2>&1 &
  local pid=$!
  PIDS+=("$pid")
  echo "$pid" >>"$DIR/pids"
  log "started $name (pid $pid, log $DIR/$name.log)"
}

# Fail fast with the log tail when a daemon exits during startup.
check_alive() {
  local name=$1 pid=$2
  if ! kill -0 "$pid" 2>/dev/null; then
    log "$name exited; last lines of $DIR/$name.log:"
    tail -n 30 "$DIR/$name.log" >&2 || true
    die "$name failed to start (port taken? see $DIR/$name.log)"
  fi
}

TIMEOUT=${ARBOR_KUBE_START_TIMEOUT:-90}

# ---- etcd --------------------------------------------------------------------
# Single member on loopback; no fsync, since test data is throw-away and fsync
# dominates write latency on CI disks.
: >"$DIR/pids"
start_daemon etcd "$BIN_DIR/etcd" \
  --name=arbor-test \
  --data-dir="$DIR/etcd-data" \
  --listen-client-urls="$ETCD_URL" \
  --advertise-client-urls="$ETCD_URL" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="arbor-test=http://127.0.0.1:$ETCD_PEER_PORT" \
  --unsafe-no-fsync=true \
  --log-level=warn
ETCD_PID=${PIDS[0]}

deadline=$((SECONDS + TIMEOUT))
until curl -fsS --max-time 2 "$ETCD_URL/health" 2>/dev/null | grep -q '"health":"true"'; do
  check_alive etcd "$ETCD_PID"
  [ "$SECONDS" -lt "$deadline" ] || die "etcd not healthy after ${TIMEOUT}s (see $DIR/etcd.log)"
  sleep 0.2
done
log "etcd healthy at $ETCD_URL"

# ---- kube-apiserver ----------------------------------------------------------
# shellcheck disable=SC2206 # word splitting of the extra args is intended
EXTRA_ARGS=(${ARBOR_APISERVER_EXTRA_ARGS:-})
start_daemon kube-apiserver "$BIN_DIR/kube-apiserver" \
  --etcd-servers="$ETCD_URL" \
  --bind-address=127.0.0.1 \
  --secure-port="$API_PORT" \
  --cert-dir="$PKI/generated" \
  --tls-cert-file="$PKI/apiserver.crt" \
  --tls-private-key-file="$PKI/apiserver.key" \
  --client-ca-file="$PKI/ca.crt" \
  --token-auth-file="$PKI/tokens.csv" \
  --anonymous-auth=true \
  --authorization-mode=RBAC \
  --service-cluster-ip-range=10.0.0.0/24 \
  --service-account-issuer="$SA_ISSUER" \
  --service-account-jwks-uri="$SA_JWKS_URI" \
  --service-account-key-file="$PKI/sa.pub" \
  --service-account-signing-key-file="$PKI/sa.key" \
  --api-audiences="$API_AUDIENCES" \
  --disable-admission-plugins=ServiceAccount \
  --allow-privileged=true \
  --profiling=false \
  "${EXTRA_ARGS[@]}"
# ServiceAccount admission is off (as in envtest): without the controller
# manager no `default` ServiceAccount exists, and the plugin would reject pods.
API_PID=${PIDS[1]}

until [ "$(curl -s --max-time 2 --cacert "$PKI/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
          -o /dev/null -w '%{http_code}' "$API_URL/readyz" 2>/dev/null)" = 200 ]; do
  check_alive kube-apiserver "$API_PID"
  check_alive etcd "$ETCD_PID"
  [ "$SECONDS" -lt "$deadline" ] || die "kube-apiserver not ready after ${TIMEOUT}s (see $DIR/kube-apiserver.log)"
  sleep 0.5
done
log "kube-apiserver ready at $API_URL"

# ---- kubeconfig + env ----------------------------------------------------------
# CA embedded, so the file works when copied and with any client library.
cat >"$DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: arbor-test
  cluster:
    server: $API_URL
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: admin
  user:
    token: $ADMIN_TOKEN
contexts:
- name: arbor-test
  context:
    cluster: arbor-test
    user: admin
    namespace: default
current-context: arbor-test
EOF
chmod 600 "$DIR/kubeconfig"

cat >"$DIR/env" <<EOF
KUBECONFIG=$DIR/kubeconfig
ARBOR_TEST_KUBE_DIR=$DIR
ARBOR_TEST_KUBE_APISERVER_URL=$API_URL
ARBOR_TEST_KUBE_CA_FILE=$PKI/ca.crt
ARBOR_TEST_KUBE_ADMIN_TOKEN=$ADMIN_TOKEN
ARBOR_TEST_KUBE_SA_ISSUER=$SA_ISSUER
ARBOR_TEST_KUBE_SA_JWKS_URI=$SA_JWKS_URI
ARBOR_TEST_KUBE_API_AUDIENCES=$API_AUDIENCES
ARBOR_TEST_KUBE_ETCD_URL=$ETCD_URL
ARBOR_TEST_KUBECTL=$KUBECTL
EOF
chmod 600 "$DIR/env"

# ---- RBAC: anonymous service-account issuer discovery ------------------------
# By default only system:serviceaccounts may read /.well-known/openid-configuration
# and /openid/v1/jwks. The STS verifies tokens as an outside party would, without
# credentials, so open discovery to everyone (what clusters serving OIDC
# discovery publicly do).
"$KUBECTL" --kubeconfig "$DIR/kubeconfig" create clusterrolebinding \
  arbor-test:service-account-issuer-discovery \
  --clusterrole=system:service-account-issuer-discovery \
  --group=system:unauthenticated --group=system:authenticated >/dev/null \
  || die "could not create the issuer-discovery ClusterRoleBinding"

# Self-check: the JWKS must be readable without credentials (RBAC is cached
# briefly, so allow a few tries).
for i in $(seq 1 20); do
  if curl -fsS --max-time 2 --cacert "$PKI/ca.crt" "$SA_JWKS_URI" 2>/dev/null | grep -q '"keys"'; then
    break
  fi
  [ "$i" -lt 20 ] || die "anonymous GET $SA_JWKS_URI did not return a JWKS"
  sleep 0.25
done

STARTED_OK=1
log "control plane up in $((SECONDS - START_TIME))s; source $DIR/env (stop: scripts/control-plane/stop.sh $DIR)"
echo "$DIR"
