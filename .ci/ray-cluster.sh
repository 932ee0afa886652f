#!/usr/bin/env bash
# A real two-node Ray cluster on this machine, for the ray_cluster tests.
#
#   .ci/ray-cluster.sh start   # prints: export NETARENA_RAY_ADDRESS=127.0.0.1:PORT
#   .ci/ray-cluster.sh stop    # stops exactly the two nodes started here
#
# Nodes and driver authenticate with a private token ($NETARENA_RAY_DIR/auth_token, 0600).
# The head offers {"netarena_root": 1} (Mininet episodes go only there, see
# netarena_gym.eval.executors.backend_resources), the second node {"worker_b": 1}. Each node
# has its own --temp-dir under $NETARENA_RAY_DIR (default /tmp/netarena-ray-$UID), and the
# ports a node would otherwise take at a fixed default (the Ray client server, 10001; each
# dashboard agent, 52365) are PORT+1..PORT+3, so two clusters with their own NETARENA_RAY_PORT
# and NETARENA_RAY_DIR run side by side; NETARENA_RAY_NODES=1 starts the head only. stop
# does not use `ray stop` (it would stop every Ray node on the machine): it signals, by PID,
# only the processes whose command line names one of our two temp dirs (TERM, then KILL).
set -euo pipefail
DIR=${NETARENA_RAY_DIR:-/tmp/netarena-ray-$(id -u)}
PORT=${NETARENA_RAY_PORT:-6390}
CPUS=${NETARENA_RAY_CPUS:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

auth() {
  # token auth with a private token of this cluster (the driver needs the same two lines)
  export RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH="$DIR/auth_token"
}

record() {  # the PIDs of node $1's processes: those whose command line names its temp dir
  for p in /proc/[0-9]*; do
    if { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q -- "$DIR/$1"; then
      echo "${p#/proc/}"
    fi
  done >"$DIR/$1.pids"
}

start() {
  mkdir -p "$DIR/head" "$DIR/b"
  chmod 700 "$DIR"
  [ -s "$DIR/auth_token" ] || (umask 077; python -c 'import secrets; print(secrets.token_hex(32), end="")' >"$DIR/auth_token")
  auth
  export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" RAY_USAGE_STATS_ENABLED=0
  ray start --head --node-ip-address=127.0.0.1 --port="$PORT" --num-cpus="$CPUS" \
    --resources='{"netarena_root": 1}' --temp-dir="$DIR/head" --include-dashboard=false \
    --ray-client-server-port=$((PORT + 1)) --dashboard-agent-listen-port=$((PORT + 2)) \
    --disable-usage-stats >"$DIR/head.log" 2>&1 || { record head; stop; cat "$DIR/head.log" >&2; exit 1; }
  record head
  if [ "${NETARENA_RAY_NODES:-2}" != 1 ]; then
    ray start --address="127.0.0.1:$PORT" --node-ip-address=127.0.0.1 --num-cpus="$CPUS" \
      --resources='{"worker_b": 1}' --temp-dir="$DIR/b" --disable-usage-stats \
      --dashboard-agent-listen-port=$((PORT + 3)) \
      >"$DIR/b.log" 2>&1 || { record b; stop; cat "$DIR/b.log" >&2; exit 1; }
    record b
  fi
  echo "export NETARENA_RAY_ADDRESS=127.0.0.1:$PORT RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH=$DIR/auth_token"
}

stop() {
  record head; record b  # again: the nodes' worker processes started since
  for d in b head; do
    [ -f "$DIR/$d.pids" ] || continue
    while read -r pid; do
      if { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q -- "$DIR/$d"; then
        kill -TERM "$pid" 2>/dev/null || true
      fi
    done <"$DIR/$d.pids"
  done
  sleep 5
  for d in b head; do
    [ -f "$DIR/$d.pids" ] || continue
    while read -r pid; do  # still ours? (a PID freed since may have been reused)
      if { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q -- "$DIR/$d"; then
        kill -KILL "$pid" 2>/dev/null || true
      fi
    done <"$DIR/$d.pids"
    rm -f "$DIR/$d.pids"
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
