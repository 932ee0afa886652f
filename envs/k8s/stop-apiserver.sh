#!/usr/bin/env bash
# Stop the etcd + kube-apiserver that start-apiserver.sh started (by their PIDs only).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
exec "${PYTHON:-python}" -m netarena_gym.k8s.backends.apiserver stop "$@"
