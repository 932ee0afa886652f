"""kubectl's output for the workload kinds: the 1.20 API server's table columns for
deployments, replicasets, endpoints and events (``get``, ``-o wide``), and kubectl 1.32's
``describe`` of deployments, replicasets, endpoints, pods and services, written as kubectl
writes them (tab-separated cells through Go's ``text/tabwriter``, padding 2).

Left out: events (none exist on a server without controllers: ``Events: <none>``), volumes,
probes, resources, init containers and the other PodSpec fields the workload does not use.
``describe service`` shows ``Endpoints: <none>`` as kubectl 1.32 does against a 1.20
server (it reads EndpointSlices of ``discovery.k8s.io/v1``, which 1.20 does not serve).
"""
from __future__ import annotations

import time

from netarena_gym.k8s.commands import printers
from netarena_gym.k8s.commands.printers import LAST_APPLIED, format_selector, table

_NEW = ("deployments", "replicasets", "endpoints", "events")


# --------------------------------------------------------------------------- tables
def _containers(spec: dict) -> tuple[str, str]:
    cs = ((spec.get("template") or {}).get("spec") or {}).get("containers") or ()
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def format_endpoints(ep: dict) -> str:
    """printers.formatEndpoints: ``ip:port`` for at most 3, then ``+ N more...``."""
    subsets = ep.get("subsets") or []
    if not subsets:
        return "<none>"
    out, count = [], 0
    for ss in subsets:
        addrs = ss.get("addresses") or []
        for port in ss.get("ports") or [None]:
            for a in addrs:
                if len(out) < 3:
                    out.append(a.get("ip", "") if port is None else f"{a.get('ip', '')}:{port.get('port')}")
                count += 1
    text = ",".join(out)
    return f"{text} + {count - 3} more..." if count > 3 else text


def _columns(resource: str, wide: bool) -> list[str]:
    extra = ["CONTAINERS", "IMAGES", "SELECTOR"] if wide else []
    if resource == "deployments":
        return ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"] + extra
    if resource == "replicasets":
        return ["NAME", "DESIRED", "CURRENT", "READY", "AGE"] + extra
    if resource == "endpoints":
        return ["NAME", "ENDPOINTS", "AGE"]
    return ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]


def _cells(resource: str, o: dict, now: float, wide: bool) -> list[str]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    a = printers.age(o, now)
    if resource == "endpoints":
        return [format_endpoints(o), a]
    if resource == "events":
        return [a, o.get("type", ""), o.get("reason", ""), "", o.get("message", "")]
    extra = []
    if wide:
        names, images = _containers(spec)
        extra = [names, images, format_selector(spec.get("selector"))]
    if resource == "deployments":
        return [f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
                str(st.get("updatedReplicas", 0)), str(st.get("availableReplicas", 0)), a] + extra
    return [str(spec.get("replicas", 1)), str(st.get("replicas", 0)), str(st.get("readyReplicas", 0)),
            a] + extra


def get_table(resource: str, objs: list[dict], now: float, *, wide: bool = False,
              all_namespaces: bool = False, show_labels: bool = False, prefix: bool = False,
              headers: bool = True) -> str:
    if resource not in _NEW:
        return printers.get_table(resource, objs, now, wide=wide, all_namespaces=all_namespaces,
                                  show_labels=show_labels, prefix=prefix, headers=headers)
    cols = _columns(resource, wide)
    if all_namespaces:
        cols = ["NAMESPACE"] + cols
    if show_labels:
        cols = cols + ["LABELS"]
    rows = [cols] if headers else []
    for o in objs:
        md = o.get("metadata") or {}
        name = printers.qualified(resource, md.get("name", "")) if prefix else md.get("name", "")
        row = [name] + _cells(resource, o, now, wide)
        if resource == "events":
            row = _cells(resource, o, now, wide)
        if all_namespaces:
            row = [md.get("namespace", "")] + row
        if show_labels:
            row.append(printers.format_labels(md.get("labels")))
        rows.append(row)
    return table(rows)


# ------------------------------------------------------------------------ tabwriter
def tabwrite(text: str, padding: int = 2) -> str:
    """Go's text/tabwriter (minwidth 0, padchar ' ', no flags) over tab-terminated cells."""
    lines = [line.split("\t") for line in text.split("\n")]
    out: list[str] = []

    def fmt(line0: int, line1: int, widths: list[int]) -> None:
        column = len(widths)
        this = line0
        while this < line1:
            if column >= len(lines[this]) - 1:
                this += 1
                continue
            emit(line0, this, widths)
            line0 = this
            width = 0
            while this < line1 and column < len(lines[this]) - 1:
                width = max(width, len(lines[this][column]) + padding)
                this += 1
            fmt(line0, this, widths + [width])
            line0 = this
        emit(line0, line1, widths)

    def emit(a: int, b: int, widths: list[int]) -> None:
        for cells in lines[a:b]:
            s = ""
            for j, c in enumerate(cells):
                s += c.ljust(widths[j]) if j < len(cells) - 1 and j < len(widths) else c
            out.append(s)

    fmt(0, len(lines), [])
    return "\n".join(out)


# ------------------------------------------------------------------------- describe
def _rfc1123z(ts: str | None) -> str:
    return time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime(printers.parse_ts(ts or "")))


def _multi(title: str, m: dict | None, sep: str = "=", skip=()) -> list[str]:
    items = [(k, v) for k, v in sorted((m or {}).items()) if k not in skip]
    if not items:
        return [f"{title}:\t<none>"]
    lead = title[: len(title) - len(title.lstrip())]
    out = []
    for i, (k, v) in enumerate(items):
        cell = f"{k}{sep}{v}"
        out.append(f"{title}:\t{cell}" if i == 0 else f"{lead}\t{cell}")
    return out


def _tolerations(title: str, tols: list | None) -> list[str]:
    if not tols:
        return [f"{title}:\t<none>"]
    lead = title[: len(title) - len(title.lstrip())]
    out = []
    for i, t in enumerate(sorted(tols, key=lambda t: t.get("key", ""))):
        s = t.get("key", "") + (f"={t['value']}" if t.get("value") else "") + \
            (f":{t['effect']}" if t.get("effect") else "")
        if t.get("operator") == "Exists":
            s += " op=Exists"
        if t.get("tolerationSeconds") is not None:
            s += f" for {t['tolerationSeconds']}s"
        out.append(f"{title}:\t{s}" if i == 0 else f"{lead}\t{s}")
    return out


def _container_lines(c: dict, status: dict | None, space: str) -> list[str]:
    l1, l2, l3 = "  ", "    ", "      "
    out = [f"{l1}{' ' if space else ''}{c.get('name')}:"]
    if status is not None:
        out.append(f"{l2}Container ID:\t{status.get('containerID', '')}")
    out.append(f"{l2}Image:\t{c.get('image', '')}")
    if status is not None:
        out.append(f"{l2}Image ID:\t{status.get('imageID', '')}")
    ports = c.get("ports") or []
    shown = ", ".join(f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}" for p in ports)
    hosts = ", ".join(f"{p.get('hostPort', 0)}/{p.get('protocol', 'TCP')}" for p in ports)
    out.append(f"{l2}{'Ports' if ',' in shown else 'Port'}:\t{shown or '<none>'}")
    out.append(f"{l2}{'Host Ports' if ',' in hosts else 'Host Port'}:\t{hosts or '<none>'}")
    for key, title in (("command", "Command"), ("args", "Args")):
        if c.get(key):
            out.append(f"{l2}{title}:")
            out += [f"{l3}{part}" for x in c[key] for part in str(x).split("\n")]
    if status is not None:
        state = status.get("state") or {}
        if "running" in state:
            out.append(f"{l2}State:\tRunning")
            out.append(f"{l3}Started:\t{_rfc1123z(state['running'].get('startedAt'))}")
        elif "waiting" in state:
            out.append(f"{l2}State:\tWaiting")
            out.append(f"{l3}Reason:\t{state['waiting'].get('reason', '')}")
        else:
            out.append(f"{l2}State:\tWaiting")
        out.append(f"{l2}Ready:\t{'True' if status.get('ready') else 'False'}")
        out.append(f"{l2}Restart Count:\t{status.get('restartCount', 0)}")
    out.append(f"{l2}Environment:\t<none>")
    out.append(f"{l2}Mounts:\t<none>")
    return out


def _pod_template(t: dict) -> list[str]:
    md, spec = t.get("metadata") or {}, t.get("spec") or {}
    out = ["Pod Template:"] + _multi("  Labels", md.get("labels"))
    if md.get("annotations"):
        out += _multi("  Annotations", md.get("annotations"), ": ")
    out.append("  Containers:")
    for c in spec.get("containers") or ():
        out += _container_lines(c, None, "  ")
    out.append("  Volumes:\t<none>")
    out += _multi("  Node-Selectors", spec.get("nodeSelector"))
    out += _tolerations("  Tolerations", spec.get("tolerations"))
    return out


def _head(o: dict, *, namespace: bool = True) -> list[str]:
    md = o.get("metadata") or {}
    return [f"Name:\t{md.get('name', '')}"] + ([f"Namespace:\t{md.get('namespace', '')}"] if namespace else [])


def _annotations(md: dict) -> list[str]:
    return _multi("Annotations", md.get("annotations"), ": ", skip=(LAST_APPLIED,))


def _controller(md: dict) -> list[str]:
    for ref in md.get("ownerReferences") or ():
        if ref.get("controller"):
            return [f"Controlled By:\t{ref.get('kind')}/{ref.get('name')}"]
    return []


def _owned(objs: list[dict], uid: str) -> list[dict]:
    return [o for o in objs if any(r.get("controller") and r.get("uid") == uid
                                   for r in (o.get("metadata") or {}).get("ownerReferences") or ())]


def _selected(selector: dict | None, objs: list[dict]) -> list[dict]:
    want = (selector or {}).get("matchLabels") or {}
    return [o for o in objs if all(((o.get("metadata") or {}).get("labels") or {}).get(k) == v
                                   for k, v in want.items())]


def describe_deployment(d: dict, replicasets: list[dict]) -> str:
    md, spec, st = d.get("metadata") or {}, d.get("spec") or {}, d.get("status") or {}
    out = _head(d) + [f"CreationTimestamp:\t{_rfc1123z(md.get('creationTimestamp'))}"]
    out += _multi("Labels", md.get("labels")) + _annotations(md)
    out.append(f"Selector:\t{format_selector(spec.get('selector'))}")
    out.append(f"Replicas:\t{spec.get('replicas', 1)} desired | {st.get('updatedReplicas', 0)} updated | "
               f"{st.get('replicas', 0)} total | {st.get('availableReplicas', 0)} available | "
               f"{st.get('unavailableReplicas', 0)} unavailable")
    strategy = spec.get("strategy") or {}
    out.append(f"StrategyType:\t{strategy.get('type', '')}")
    out.append(f"MinReadySeconds:\t{spec.get('minReadySeconds', 0)}")
    ru = strategy.get("rollingUpdate")
    if ru is not None:
        out.append(f"RollingUpdateStrategy:\t{ru.get('maxUnavailable')} max unavailable, "
                   f"{ru.get('maxSurge')} max surge")
    out += _pod_template(spec.get("template") or {})
    if st.get("conditions"):
        out += ["Conditions:", "  Type\tStatus\tReason", "  ----\t------\t------"]
        out += [f"  {c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}" for c in st["conditions"]]
    mine = _owned(_selected(spec.get("selector"), replicasets), md.get("uid"))
    new = [r for r in mine if (r.get("spec") or {}).get("template") == spec.get("template")]
    old = [r for r in mine if r not in new]

    def shown(rss):
        return ", ".join(f"{r['metadata']['name']} ({(r.get('status') or {}).get('replicas', 0)}/"
                         f"{(r.get('spec') or {}).get('replicas', 1)} replicas created)" for r in rss) or "<none>"
    out += [f"OldReplicaSets:\t{shown(old)}", f"NewReplicaSet:\t{shown(new[:1])}", "Events:\t<none>"]
    return tabwrite("\n".join(out)) + "\n"


def describe_replicaset(rs: dict, pods: list[dict]) -> str:
    md, spec, st = rs.get("metadata") or {}, rs.get("spec") or {}, rs.get("status") or {}
    out = _head(rs) + [f"Selector:\t{format_selector(spec.get('selector'))}"]
    out += _multi("Labels", md.get("labels")) + _annotations(md) + _controller(md)
    out.append(f"Replicas:\t{st.get('replicas', 0)} current / {spec.get('replicas', 1)} desired")
    phases = [(p.get("status") or {}).get("phase") for p in _owned(_selected(spec.get("selector"), pods),
                                                                    md.get("uid"))]
    out.append(f"Pods Status:\t{phases.count('Running')} Running / {phases.count('Pending')} Waiting / "
               f"{phases.count('Succeeded')} Succeeded / {phases.count('Failed')} Failed")
    out += _pod_template(spec.get("template") or {}) + ["Events:\t<none>"]
    return tabwrite("\n".join(out)) + "\n"


def describe_endpoints(ep: dict) -> str:
    md = ep.get("metadata") or {}
    out = _head(ep) + _multi("Labels", md.get("labels")) + _annotations(md) + ["Subsets:"]
    for ss in ep.get("subsets") or ():
        out.append(f"  Addresses:\t{','.join(a.get('ip', '') for a in ss.get('addresses') or ()) or '<none>'}")
        out.append("  NotReadyAddresses:\t" + (",".join(a.get("ip", "") for a in ss.get("notReadyAddresses") or ())
                                             or "<none>"))
        if ss.get("ports"):
            out += ["  Ports:", "    Name\tPort\tProtocol", "    ----\t----\t--------"]
            out += [f"    {p.get('name') or '<unset>'}\t{p.get('port')}\t{p.get('protocol', 'TCP')}"
                    for p in ss["ports"]]
        out.append("")
    out.append("Events:\t<none>")
    return tabwrite("\n".join(out)) + "\n"


def describe_pod(pod: dict) -> str:
    md, spec, st = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    out = _head(pod)
    if spec.get("priority") is not None:
        out.append(f"Priority:\t{spec['priority']}")
    if spec.get("serviceAccountName"):
        out.append(f"Service Account:\t{spec['serviceAccountName']}")
    node = spec.get("nodeName")
    out.append(f"Node:\t{node}/{st.get('hostIP', '')}" if node else "Node:\t<none>")
    if st.get("startTime"):
        out.append(f"Start Time:\t{_rfc1123z(st['startTime'])}")
    out += _multi("Labels", md.get("labels")) + _annotations(md)
    out += [f"Status:\t{st.get('phase', '')}", f"IP:\t{st.get('podIP', '')}"]
    if st.get("podIPs"):
        out += ["IPs:"] + [f"  IP:\t{x.get('ip', '')}" for x in st["podIPs"]]
    else:
        out.append("IPs:\t<none>")
    out += _controller(md)
    statuses = {s.get("name"): s for s in st.get("containerStatuses") or ()}
    out.append("Containers:")
    for c in spec.get("containers") or ():
        out += _container_lines(c, statuses.get(c.get("name"), None) if statuses else None, "")
    if st.get("conditions"):
        out += ["Conditions:", "  Type\tStatus"]
        out += [f"  {c.get('type')} \t{c.get('status')} " for c in st["conditions"]]
    out += ["Volumes:\t<none>", f"QoS Class:\t{st.get('qosClass', 'BestEffort')}"]
    out += _multi("Node-Selectors", spec.get("nodeSelector"))
    out += _tolerations("Tolerations", spec.get("tolerations")) + ["Events:\t<none>"]
    return tabwrite("\n".join(out)) + "\n"


def describe_service(svc: dict) -> str:
    md, spec = svc.get("metadata") or {}, svc.get("spec") or {}
    out = _head(svc) + _multi("Labels", md.get("labels")) + _annotations(md)
    sel = spec.get("selector")
    out.append("Selector:\t" + (",".join(f"{k}={v}" for k, v in sorted(sel.items())) if sel else ""))
    out.append(f"Type:\t{spec.get('type', '')}")
    if spec.get("ipFamilyPolicy"):
        out.append(f"IP Family Policy:\t{spec['ipFamilyPolicy']}")
    out.append(f"IP Families:\t{','.join(spec.get('ipFamilies') or ()) or '<none>'}")
    out.append(f"IP:\t{spec.get('clusterIP', '')}")
    if spec.get("clusterIPs"):
        out.append(f"IPs:\t{','.join(spec['clusterIPs'])}")
    for p in spec.get("ports") or ():
        name, proto = p.get("name") or "<unset>", p.get("protocol", "TCP")
        out.append(f"Port:\t{name}\t{p.get('port')}/{proto}")
        out.append(f"TargetPort:\t{p.get('targetPort')}/{proto}")
        if p.get("nodePort"):
            out.append(f"NodePort:\t{name}\t{p['nodePort']}/{proto}")
        out.append("Endpoints:\t<none>")
    if spec.get("sessionAffinity"):
        out.append(f"Session Affinity:\t{spec['sessionAffinity']}")
    if spec.get("externalTrafficPolicy"):
        out.append(f"External Traffic Policy:\t{spec['externalTrafficPolicy']}")
    out.append("Events:\t<none>")
    return tabwrite("\n".join(out)) + "\n"
