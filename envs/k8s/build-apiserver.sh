#!/usr/bin/env bash
# Build kube-apiserver v1.20.2 from Debian's `kubernetes` source package (offline: the tree
# ships vendor/), and cache the binary outside the repository. Needs root on Debian 12
# (apt-get). A second run finds the cached binary and exits at once.
#
#   envs/k8s/build-apiserver.sh            # prints the path of the binary
#   NETARENA_K8S_CACHE=/some/dir envs/k8s/build-apiserver.sh
set -euo pipefail

VERSION=v1.20.2
CACHE="${NETARENA_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/netarena-gym/kubernetes}"
BIN_DIR="$CACHE/$VERSION/bin"
BIN="$BIN_DIR/kube-apiserver"
log() { echo "build-apiserver: $*" >&2; }

if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then
  log "cached: $BIN"
  echo "$BIN"
  exit 0
fi

[ "$(id -u)" = 0 ] || { log "needs root (apt-get)"; exit 1; }
export DEBIAN_FRONTEND=noninteractive

# 1. a deb-src entry for Debian's main archive, unless one exists already
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  uri=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | awk '{print $2}' | grep -v security | head -n1)
  uri=${uri:-http://deb.debian.org/debian}
  log "adding deb-src for $uri"
  cat > /etc/apt/sources.list.d/netarena-gym-src.sources <<SRC
Types: deb-src
URIs: $uri
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
apt-get update -qq
# 2. the toolchain and the runtime pieces (etcd, openssl for keys)
apt-get install -y -qq golang-go etcd-server etcd-client rsync jq dpkg-dev openssl ca-certificates >/dev/null

# 3. the source, built in a scratch folder inside the cache (removed afterwards)
WORK="$CACHE/build.$$"
rm -rf "$WORK"; mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
apt-get source --download-only kubernetes >/dev/null
tarball=$(ls kubernetes_*.orig.tar.* | head -n1)
tar -xf "$tarball"
src=$(find . -maxdepth 1 -type d -name 'kubernetes-*' | head -n1)
cd "$src"
export GOPATH="$PWD/.go" CGO_ENABLED=0 GOPROXY=off GOFLAGS= GO111MODULE=
mkdir -p .go/src/k8s.io && ln -sfn ../../.. .go/src/k8s.io/kubernetes
log "building kube-apiserver $VERSION (about 4 minutes on 2 cores)"
HOME="$WORK/home" KUBE_GIT_VERSION=$VERSION KUBE_GIT_TREE_STATE=clean \
  make WHAT=cmd/kube-apiserver >"$WORK/make.log" 2>&1 || { tail -n 40 "$WORK/make.log" >&2; exit 1; }
built=$(find _output -type f -name kube-apiserver -perm -u+x | head -n1)
[ -n "$built" ] || { log "no binary produced"; exit 1; }
mkdir -p "$BIN_DIR"
install -m 0755 "$built" "$BIN.tmp" && mv -f "$BIN.tmp" "$BIN"
log "built: $BIN"
echo "$BIN"
