#!/usr/bin/env bash
# Start etcd + kube-apiserver v1.20.2 on loopback (building the binary on first use) and
# print `export NETARENA_KUBECONFIG=...`. State folder: $NETARENA_K8S_CACHE/apiserver
# (default ~/.cache/netarena-gym/kubernetes/apiserver), or --dir D.
#   eval "$(envs/k8s/start-apiserver.sh)"
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v etcd >/dev/null || { [ "$(id -u)" = 0 ] && apt-get install -y -qq etcd-server openssl >/dev/null; }
"$here/build-apiserver.sh" >/dev/null
cd "$here/../.."
exec "${PYTHON:-python}" -m netarena_gym.k8s.backends.apiserver start "$@"
