"""Random kubectl command sequences for the differential test: all three patch types,
labels, applies, deletes, malformed patches and out-of-range values, on the Online
Boutique policies, and the read commands of :data:`READS` (workload kinds, ``get all``,
jsonpath, custom-columns, describe). Each command is ``(command line, stdin)``."""
from __future__ import annotations

import json
import shlex

import numpy as np

APPS = ["adservice", "cartservice", "checkoutservice", "currencyservice", "emailservice",
        "frontend", "loadgenerator", "paymentservice", "productcatalogservice",
        "recommendationservice", "redis-cart", "shippingservice"]
PORTS = [9555, 7070, 8080, 0, 70000, 65535, 1, -3, "http", "grpc", "HTTP", "a--b", "web-", 5000]
PROTOCOLS = ["TCP", "UDP", "SCTP", "ICMP", "tcp", None]


# read commands LLM agents type (replayed upstream episodes): the workload kinds, get all,
# jsonpath and custom-columns, describe; both backends must print the same (normalised)
WORKLOAD = ["frontend", "cartservice", "redis-cart", "loadgenerator", "nosuch"]
READS = [
    "kubectl get all", "kubectl get all -o wide", "kubectl get all -l app={app}",
    "kubectl get deploy", "kubectl get deployments -o wide", "kubectl get deployment {app}",
    "kubectl get rs", "kubectl get replicasets --show-labels", "kubectl get rs -o wide",
    "kubectl get ep", "kubectl get endpoints {app}", "kubectl get ep -o wide",
    "kubectl get events", "kubectl get ev", "kubectl get pods -o wide", "kubectl get svc -o wide",
    "kubectl get pods,svc -l app={app}", "kubectl describe deploy {app}", "kubectl describe rs {app}",
    "kubectl describe ep {app}", "kubectl describe pod {app}", "kubectl describe svc {app}",
    "kubectl get pods -o jsonpath={{.items[*].metadata.name}}",
    "kubectl get pods -o jsonpath='{{range .items[*]}}{{.metadata.name}}{{\"\\t\"}}{{.status.podIP}}{{\"\\n\"}}{{end}}'",
    "kubectl get pods -o jsonpath='{{.items[?(@.metadata.labels.app==\"{app}\")].status.podIP}}'",
    "kubectl get pod {app} -o jsonpath='{{.metadata.labels}} {{.spec.containers[0].ports}}'",
    "kubectl get svc -o jsonpath='{{range .items[*]}}{{.metadata.name}}:{{.spec.ports[0].targetPort}}{{\"\\n\"}}{{end}}'",
    "kubectl get deploy -o jsonpath='{{.items[*].spec.template.spec.containers[*].ports[*].containerPort}}'",
    "kubectl get ep {app} -o jsonpath='{{.subsets[*].addresses[*].ip}}'",
    "kubectl get netpol -o jsonpath='{{.items[*].spec.podSelector.matchLabels.app}}'",
    "kubectl get pods -o custom-columns=NAME:.metadata.name,IP:.status.podIP,LABELS:.metadata.labels",
    "kubectl get deploy -o custom-columns=NAME:.metadata.name,READY:.status.readyReplicas --no-headers",
    "kubectl get netpol -o custom-columns=NAME:.metadata.name,PORTS:.spec.ingress[*].ports[*].port",
    "kubectl get pods -o jsonpath={{.items[}}", "kubectl get pods -o custom-columns=NAME",
    "kubectl get deploy {app} -o yaml", "kubectl get rs -o json", "kubectl get ep {app} -o yaml",
]

# ``-o`` on a write verb (delete accepts only name: the others are its error)
WRITE_OUTPUTS = ("-o yaml", "-o json", "-o name", "-o jsonpath={.metadata.name}{.spec}",
                 "-o wide")


class CommandGen:
    def __init__(self, seed: int, end_port: bool = False):
        self.r = np.random.default_rng(seed)
        # the printers of write verbs, drawn apart so the commands stay those of the seed
        self.out = np.random.default_rng([seed, 1])
        # how a merge or strategic patch is written (YAML, broken JSON), drawn apart too
        self.form = np.random.default_rng([seed, 2])
        # --dry-run on writes, drawn apart too
        self.dry = np.random.default_rng([seed, 3])
        self.end_port = end_port
        self.extra: list[str] = []

    def pick(self, seq):
        return seq[int(self.r.integers(0, len(seq)))]

    def chance(self, p: float) -> bool:
        return bool(self.r.random() < p)

    # ------------------------------------------------------------- fragments
    def selector(self) -> dict:
        k = int(self.r.integers(0, 5))
        if k == 0:
            return {}
        if k == 1:
            return {"matchLabels": {"app": self.pick(APPS + ["nope", "Bad Value!"])}}
        if k == 2:
            op = self.pick(["In", "NotIn", "Exists", "DoesNotExist", "Foo"])
            e = {"key": self.pick(["app", "tier", "bad key"]), "operator": op}
            if op in ("In", "NotIn") or self.chance(0.2):
                e["values"] = [self.pick(APPS) for _ in range(int(self.r.integers(0 if self.chance(0.2) else 1, 3)))]
            return {"matchExpressions": [e]}
        if k == 3:
            return {"matchLabels": {"kubernetes.io/metadata.name": self.pick(["default", "prod"])}}
        return {"matchLabels": {"app": self.pick(APPS)}, "matchExpressions": [
            {"key": "tier", "operator": "DoesNotExist"}]}

    def peer(self) -> dict:
        k = int(self.r.integers(0, 6))
        if k <= 1:
            return {"podSelector": self.selector()}
        if k == 2:
            return {"namespaceSelector": self.selector()}
        if k == 3:
            return {"podSelector": self.selector(), "namespaceSelector": self.selector()}
        if k == 4:
            b = {"cidr": self.pick(["10.244.0.0/16", "10.0.0.0/8", "bad", "10.1.2.3", ""])}
            if self.chance(0.5):
                b["except"] = [self.pick(["10.244.1.0/24", "10.0.0.0/8", "11.0.0.0/16", "x"])]
            return {"ipBlock": b}
        return {}

    def port(self) -> dict:
        p = {}
        if self.chance(0.85):
            p["port"] = self.pick(PORTS)
        proto = self.pick(PROTOCOLS)
        if proto is not None:
            p["protocol"] = proto
        if self.chance(0.1):
            p["endPort"] = self.pick([9000, 80, 70000])
        return p

    def rule(self, key: str) -> dict:
        r = {}
        if self.chance(0.8):
            r[key] = [self.peer() for _ in range(int(self.r.integers(0, 3)))]
        if self.chance(0.7):
            r["ports"] = [self.port() for _ in range(int(self.r.integers(0, 3)))]
        return r

    def spec_fragment(self) -> dict:
        s = {}
        for key, peer in (("ingress", "from"), ("egress", "to")):
            if self.chance(0.5):
                s[key] = None if self.chance(0.15) else [self.rule(peer) for _ in range(int(self.r.integers(0, 3)))]
        if self.chance(0.3):
            s["policyTypes"] = self.pick([["Ingress"], ["Egress"], ["Ingress", "Egress"], ["Foo"],
                                          ["Ingress", "Egress", "Ingress"], [], None])
        if self.chance(0.3):
            s["podSelector"] = self.selector()
        if self.chance(0.05):
            s["bogusField"] = 1
        return s

    def policy(self) -> str:
        if self.extra and self.chance(0.2):
            return self.pick(self.extra)
        return self.pick(APPS + ["nosuch"] if self.chance(0.05) else APPS)

    # -------------------------------------------------------------- commands
    def command(self) -> tuple[str, str]:
        k = int(self.r.integers(0, 100))
        if k < 30:
            return self.json_patch(), ""
        if k < 48:
            return self.merge_patch("merge"), ""
        if k < 63:
            return self.merge_patch("strategic"), ""
        if k < 75:
            return self.label(), ""
        if k < 92:
            return self.apply()
        if k < 96:
            return self.read(), ""
        return f"kubectl delete networkpolicy {self.policy()}", ""

    def json_patch(self) -> str:
        name = self.policy()
        ops = []
        for _ in range(int(self.r.integers(1, 3))):
            k = int(self.r.integers(0, 12))
            if k == 0:
                ops.append({"op": "replace", "path": "/spec/ingress/0/ports/0/port", "value": self.pick(PORTS)})
            elif k == 1:
                ops.append({"op": "replace", "path": "/spec/ingress/0/ports/0/protocol",
                            "value": self.pick(["TCP", "UDP", "SCTP", "ICMP"])})
            elif k == 2:
                ops.append({"op": "add", "path": "/spec/ingress/0/from/-", "value": self.peer()})
            elif k == 3:
                ops.append({"op": "remove", "path": self.pick(["/spec/ingress/0", "/spec/egress",
                                                                "/spec/ingress", "/spec/policyTypes",
                                                                "/spec/ingress/0/from/1", "/spec/foo"])})
            elif k == 4:
                ops.append({"op": "add", "path": "/spec/policyTypes",
                            "value": self.pick([["Ingress"], ["Egress"], ["Ingress", "Egress"], ["Bogus"], "Ingress"])})
            elif k == 5:
                ops.append({"op": "replace", "path": "/spec/podSelector", "value": self.selector()})
            elif k == 6:
                ops.append({"op": "add", "path": "/spec/ingress/-", "value": self.rule("from")})
            elif k == 7:
                ops.append({"op": "test", "path": "/spec/podSelector/matchLabels/app",
                            "value": self.pick([name, "other"])})
            elif k == 8:
                ops.append({"op": "copy", "from": "/spec/ingress/0", "path": "/spec/ingress/-"})
            elif k == 9:
                ops.append({"op": "replace", "path": f"/spec/ingress/{self.pick([1, 5])}/ports",
                            "value": [self.port()]})
            elif k == 10:
                ops.append({"op": "add", "path": "/spec/egress", "value": [self.rule("to")]})
            else:
                ops.append({"op": self.pick(["bogus", "add"]), "path": "/spec/ingress/0/ports/0/endPort",
                            "value": 9600})
        body = json.dumps(ops)
        if self.chance(0.04):
            body = json.dumps(ops[0])  # not an array
        elif self.chance(0.03):
            body = body[:-3]  # not JSON
        return f"kubectl patch networkpolicy {name} --type=json -p {shlex.quote(body)}"

    def merge_patch(self, kind: str) -> str:
        name = self.policy()
        doc: object = {"spec": self.spec_fragment()}
        if self.chance(0.15):
            doc["metadata"] = {"labels": {self.pick(["tier", "team", "bad key"]):
                                          self.pick(["web", "db", None, "v!"])}}
        if self.chance(0.03):
            doc = [1, 2]
        body = json.dumps(doc)
        if self.chance(0.03):
            body = "{spec: {podSelector: {}}}"
        flag = "--type=merge" if kind == "merge" else self.pick(["", "--type=strategic"])
        body = self.written(doc, body)
        return f"kubectl patch networkpolicy {name} {flag} -p {shlex.quote(body)}".replace("  ", " ")

    def written(self, doc, body: str) -> str:
        """One patch in four written otherwise: as YAML (block or flow style, which kubectl
        converts to JSON), with text after the JSON, cut short, with a missing comma, with
        ``NaN`` for a value, or after blank space."""
        if self.form.random() >= 0.25:
            return body
        import yaml
        k = int(self.form.integers(0, 7))
        if k == 0:
            return yaml.safe_dump(doc, sort_keys=False)
        if k == 1:
            return yaml.safe_dump(doc, sort_keys=False, default_flow_style=True).strip()
        if k == 2:
            return body + self.pick_form([" x", "}", " {}", "]"])
        if k == 3:
            return body[:int(self.form.integers(1, len(body)))]
        if k == 4:
            return body.replace(", ", " ", 1)
        if k == 5:
            return body.replace("null", "NaN", 1) if "null" in body else body.replace("1", "1.", 1)
        return "\n  " + body

    def pick_form(self, seq):
        return seq[int(self.form.integers(0, len(seq)))]

    def label(self) -> str:
        name = self.policy()
        parts = []
        for _ in range(int(self.r.integers(1, 3))):
            k = int(self.r.integers(0, 5))
            key = self.pick(["tier", "team", "owner", "bad key"] if k else ["tier"])
            if k == 4:
                parts.append(f"{key}-")
            else:
                parts.append(f"{key}={self.pick(['web', 'db', 'x', 'v!', ''])}")
        ow = " --overwrite" if self.chance(0.4) else ""
        return "kubectl label networkpolicy " + name + " " + " ".join(shlex.quote(p) for p in parts) + ow

    def apply(self) -> tuple[str, str]:
        if self.chance(0.35) or not self.extra:
            name = self.pick(["extra-" + self.pick(["a", "b"]), "deny-all"])
            if name not in self.extra:
                self.extra.append(name)
        else:
            name = self.policy()
        if self.chance(0.4) and name in APPS:
            name = self.pick(APPS)
        spec = {"podSelector": self.selector()}
        spec.update({k: v for k, v in self.spec_fragment().items() if v is not None})
        doc = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
               "metadata": {"name": name}, "spec": spec}
        if self.chance(0.05):
            del doc["kind"]
        if self.chance(0.05):
            doc["metadata"]["namespace"] = "elsewhere"
        if self.chance(0.1):
            doc["metadata"]["labels"] = {"tier": self.pick(["web", "v!"])}
        if self.chance(0.05):
            del spec["podSelector"]
        if self.chance(0.5):
            import yaml
            text = yaml.safe_dump(doc, sort_keys=False)
        else:
            text = json.dumps(doc)
        return "kubectl apply -f -", text

    def read(self) -> str:
        return self.pick(READS).format(app=self.pick(WORKLOAD))

    def sequence(self, n: int) -> list[tuple[str, str]]:
        return [self.printed(*self.command()) for _ in range(n)]

    def printed(self, cmd: str, stdin: str) -> tuple[str, str]:
        """One write in four prints what it wrote (``-o`` yaml, json, jsonpath or name);
        one in eight is a client dry run (kubectl alone makes the object: a patch is
        kubectl's own), one in twenty-five a server dry run."""
        if cmd.split()[1] in ("get", "describe"):
            return cmd, stdin
        if self.out.random() < 0.25:
            cmd += " " + WRITE_OUTPUTS[int(self.out.integers(0, len(WRITE_OUTPUTS)))]
        d = self.dry.random()
        if d < 0.125:
            cmd += " --dry-run=client"
        elif d >= 0.96:
            cmd += " --dry-run=server"
        return cmd, stdin
