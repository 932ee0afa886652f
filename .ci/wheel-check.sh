#!/usr/bin/env bash
# A wheel install runs every env: build the wheel, install it (not editable, with every
# extra) into a fresh venv outside the checkout, and from there reset and step each env on
# each interface and run one `netarena-gym eval` per env. Everything an env reads must ship
# in the wheel. The venv reuses the machine's packages (--system-site-packages: torch and
# the big extras are not downloaded again), but the netarena_gym it imports must be the
# wheel's: checked below. Called by .ci/run before the tests; about a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${PYTHON:-python}
WORK=$(mktemp -d /tmp/netarena-wheel-check.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
unset PYTHONPATH NETARENA_K8S_DATA

echo "wheel-check: building the wheel"
# from a copy of the tracked and unignored files: no build/ or egg-info left in the checkout,
# and nothing stale from an earlier build/ can slip into the wheel
mkdir "$WORK/src"
git -C "$REPO" ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c \
    'test -e "$1" && printf "%s\0" "$1"' _ {} | tar -C "$REPO" --null -T - -cf - | tar -C "$WORK/src" -xf -
"$PY" -m pip wheel -q --no-deps --no-build-isolation -w "$WORK/dist" "$WORK/src"
WHEEL=$(ls "$WORK"/dist/netarena_gym-*.whl)
for f in netarena_gym/k8s/data/intent.json netarena_gym/k8s/data/workload.yaml \
         netarena_gym/capacity_planning/data/malt-example-final.textproto \
         netarena_gym/capacity_planning/data/LICENSE netarena_gym/capacity_planning/data/NOTICE; do
    "$PY" - "$WHEEL" "$f" <<'EOF'
import sys, zipfile
if sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist():
    sys.exit(f"wheel-check: {sys.argv[2]} is not in {sys.argv[1]}")
EOF
done

echo "wheel-check: installing $(basename "$WHEEL") with every extra into a fresh venv"
"$PY" -m venv --system-site-packages "$WORK/venv"
V="$WORK/venv/bin"
"$V/python" -m pip install -q --no-deps --force-reinstall "$WHEEL"
"$V/python" -m pip install -q "${WHEEL}[dev,mininet,k8s,report,a2a,ray,llm,train]"

cd "$WORK"                                   # outside the checkout: nothing read from it
"$V/python" - "$WORK/venv" <<'EOF'
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np

import netarena_gym
from netarena_gym.capacity_planning.data import example_path

venv = Path(sys.argv[1]).resolve()
where = Path(netarena_gym.__file__).resolve()
assert venv in where.parents, f"netarena_gym imported from {where}, not from the wheel in {venv}"
assert example_path().is_file() and venv in example_path().parents, example_path()

CASES = {
    "NetArena-Routing-v0": [("text", {"machine": "r0", "command": "ip route show"}), ("discrete", 0)],
    "NetArena-K8sPolicy-v0": [("text", {"command": "kubectl get networkpolicy"}), ("discrete", 0)],
    "NetArena-CapacityPlanning-v0": [
        ("code", "def process_graph(graph):\n    return {'type': 'text', 'data': '0', 'updated_graph': graph}\n"),
        ("text", {"tool": "get_node", "node": "ju1"}), ("discrete", 0)],
}
for env_id, cases in CASES.items():
    for interface, action in cases:
        env = gym.make(env_id, level=1, interface=interface)
        obs, info = env.reset(seed=0)
        if interface == "discrete":
            action = int(np.flatnonzero(obs["action_mask"])[0])
        obs, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(obs), (env_id, interface)
        print(f"wheel-check: {env_id} {interface}: reset and step ok "
              f"(reward {reward:+.2f}, {info['command_kind']})")
        env.close()
EOF

for args in "--env NetArena-Routing-v0" "--env NetArena-K8sPolicy-v0" \
            "--env NetArena-CapacityPlanning-v0 --interface text"; do
    # shellcheck disable=SC2086
    "$V/netarena-gym" eval $args --agent expert --level 1 --episodes 3 --seed 0 --format json \
        > "$WORK/eval.json"
    "$V/python" - "$WORK/eval.json" "$args" <<'EOF'
import json, sys
summary = json.load(open(sys.argv[1]))
assert summary["correctness"] == 1.0 and summary["safety"] == 1.0, summary
print(f"wheel-check: netarena-gym eval {sys.argv[2]}: expert correct and safe")
EOF
done
echo "wheel-check: ok"
