"""Random edit sequences on the simulator (catalogue edits, extra policies created and
deleted, labels), for tests that pin incremental builders to a recomputation."""
import json

import numpy as np

EXTRA = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}}


def extra_commands(names=("zz-deny", "aa-deny", "mm-deny", "qq-deny")) -> list[dict]:
    """Commands that create, patch and delete policies not named after an app, and
    relabel one that is."""
    out = []
    for n in names:
        manifest = {**EXTRA, "metadata": {"name": n}}
        out.append({"command": "kubectl apply -f -", "stdin": json.dumps(manifest)})
        out.append({"command": f"kubectl delete networkpolicy {n}"})
        for types in ('["Ingress","Egress"]', '["Ingress"]'):
            out.append({"command": f"kubectl patch networkpolicy {n} --type=json -p "
                                   f"'[{{\"op\":\"add\",\"path\":\"/spec/policyTypes\",\"value\":{types}}}]'"})
    out.append({"command": "kubectl label networkpolicy frontend tier=web --overwrite"})
    out.append({"command": "kubectl label networkpolicy frontend tier-"})
    return out


def random_edits(env, episodes: int, steps: int, seed: int = 0):
    """Yield after every edit of ``env`` (the unwrapped discrete K8s env): masked
    catalogue actions, and one time in four one of :func:`extra_commands`."""
    rng = np.random.default_rng(seed)
    extra = extra_commands()
    for ep in range(episodes):
        env.reset(seed=ep)
        yield
        for _ in range(steps):
            if rng.random() < 0.25:
                env.backend.run(extra[int(rng.integers(len(extra)))])
                env._connectivity()
                env._fill_catalogue()
            else:
                valid = np.flatnonzero(env.catalogue.mask)
                _, _, term, trunc, _ = env.step(int(valid[rng.integers(len(valid))]))
                if term or trunc:
                    yield
                    break
            yield
