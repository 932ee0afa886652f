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
# only this cluster's processes (TERM, then KILL): those whose command line names one of our
# two temp dirs, those Ray started with our token path in their environment (the Ray client
# server's command line names neither dir), and every descendant of either (the raylet starts
# its dashboard and runtime-env agents with a clean environment and renames them
# `ray::DashboardAgent`). Each is recorded with its start time, so a PID freed and reused
# before the KILL pass is left alone.
set -euo pipefail
DIR=${NETARENA_RAY_DIR:-/tmp/netarena-ray-$(id -u)}
PORT=${NETARENA_RAY_PORT:-6390}
CPUS=${NETARENA_RAY_CPUS:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)

auth() {
  # token auth with a private token of this cluster (the driver needs the same two lines)
  export RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH="$DIR/auth_token"
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
    --disable-usage-stats >"$DIR/head.log" 2>&1 || { stop; cat "$DIR/head.log" >&2; exit 1; }
  if [ "${NETARENA_RAY_NODES:-2}" != 1 ]; then
    ray start --address="127.0.0.1:$PORT" --node-ip-address=127.0.0.1 --num-cpus="$CPUS" \
      --resources='{"worker_b": 1}' --temp-dir="$DIR/b" --disable-usage-stats \
      --dashboard-agent-listen-port=$((PORT + 3)) \
      >"$DIR/b.log" 2>&1 || { stop; cat "$DIR/b.log" >&2; exit 1; }
  fi
  echo "export NETARENA_RAY_ADDRESS=127.0.0.1:$PORT RAY_AUTH_MODE=token RAY_AUTH_TOKEN_PATH=$DIR/auth_token"
}

started() {  # field 22 of /proc/$1/stat (after the ")" that ends the command name); none: gone
  sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20
}

ours() {  # "PID STARTTIME" of every process of this cluster (see the header)
  local seeds all kids pid t
  # command lines naming a node's temp dir; environments with our token path and the
  # RAY_CLIENT_MODE Ray sets for its own processes (this script and the shell that runs it
  # carry the token path only, and are left out whatever they carry); one grep over /proc
  # each (-z: one argument or variable a line; a process gone meanwhile only sets its status)
  seeds=$( {
    grep -lzF -e "$DIR/head" -e "$DIR/b" /proc/[0-9]*/cmdline 2>/dev/null || true
    { grep -lzFx -- "RAY_AUTH_TOKEN_PATH=$DIR/auth_token" /proc/[0-9]*/environ 2>/dev/null ||
        true; } | xargs -r grep -lz '^RAY_CLIENT_MODE=' 2>/dev/null || true
  } | cut -d/ -f3 | { grep -vx -e "$$" -e "$PPID" || true; } | tr '\n' ' ')
  all=$(ps -e -o pid=,ppid=)
  kids=$seeds
  while [ -n "${kids// /}" ]; do  # descendants, breadth first
    kids=$(awk -v ps=" $kids " 'index(ps, " " $2 " ") {print $1}' <<<"$all" | tr '\n' ' ')
    seeds="$seeds $kids"
  done
  for pid in $(tr ' ' '\n' <<<"$seeds" | sort -un); do
    t=$(started "$pid") || t=""  # a process gone since (a transient one) is left out
    if [ -n "$t" ]; then echo "$pid $t"; fi
  done
  return 0
}

signal_ours() {  # $1: signal; $2: file of "PID STARTTIME" lines, each signalled if still the same
  local pid t now
  while read -r pid t; do
    now=$(started "$pid") || continue
    [ "$now" = "$t" ] && kill "-$1" "$pid" 2>/dev/null || true
  done <"$2"
}

stop() {
  [ -d "$DIR" ] || return 0
  ours >"$DIR/stop.pids"
  signal_ours TERM "$DIR/stop.pids"
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do  # up to 5 s for a clean exit
    [ -z "$(ours)" ] && break
    sleep 0.5
  done
  ours >>"$DIR/stop.pids"  # and any started since (a worker the raylet was starting)
  signal_ours KILL "$DIR/stop.pids"
  rm -f "$DIR/stop.pids"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
