"""``kubectl get`` and ``kubectl describe`` of the simulated kubectl (client 1.32 against a
1.20 API server, whose server-side tables give the columns): tables, ``-o wide``,
``--show-labels``, ``-A``, ``-o name|yaml|json``, ``-o jsonpath=`` and ``-o custom-columns=``
(:mod:`~netarena_gym.k8s.commands.jsonpath`), and ``get all`` (the ``all`` category: pods,
services, deployments and replicasets; the daemonsets, statefulsets, jobs, cronjobs and
autoscalers it also covers do not exist here). ``--field-selector`` (the field labels
kube-apiserver 1.20 selects on). Left out: ``--sort-by``, go-templates and ``-o jsonpath-file``."""
from __future__ import annotations

from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.k8s.commands import jsonpath, printers, printers_workloads
from netarena_gym.k8s.commands.cmdline import Invocation
from netarena_gym.k8s.commands.kubectl_common import SelectorRejected, err, no_resources
from netarena_gym.k8s.state import not_found

# ------------------------------------------------------------------------------- get
_OUTPUTS = ("yaml", "json", "name", "wide")
_ALLOWED_FORMATS = ("custom-columns,custom-columns-file,go-template,go-template-file,json,"
                    "jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml")
_UNSIMULATED_FORMATS = ("go-template", "template", "jsonpath-as-json", "jsonpath-file",
                        "custom-columns-file", "go-template-file", "templatefile")
_SHORT_NAME_WARNING = {"ev": 'Warning: short name "ev" could also match lower priority resource '
                             "events.events.k8s.io\n"}


PRINTED_MAX = 1024
_PRINTED: dict = {}  # (id(object), format) -> (object, text)


def _printed(obj: dict, out_fmt: str) -> str:
    """``-o yaml|json`` of one stored object, kept per object (the store replaces
    objects and never changes one in place)."""
    key = (id(obj), out_fmt)
    hit = _PRINTED.get(key)
    if hit is None or hit[0] is not obj:
        if len(_PRINTED) >= PRINTED_MAX:
            _PRINTED.clear()
        hit = _PRINTED[key] = (obj, printers.to_yaml(obj) if out_fmt == "yaml"
                               else printers.to_json(obj))
    return hit[1]


def _format(out_fmt: str) -> tuple[str, str] | CommandResult:
    """(format, argument) of ``-o``, or the error kubectl prints."""
    name, eq, arg = out_fmt.partition("=")
    if not out_fmt or out_fmt in _OUTPUTS:
        return out_fmt, ""
    if name in ("jsonpath", "custom-columns") and eq:
        if not arg:
            what = "template format specified but no template given" if name == "jsonpath" \
                else "custom-columns format specified but no custom columns given"
            return err(f"error: {what}", INVALID)
        return name, arg
    if name in _UNSIMULATED_FORMATS:
        return err(f"netarena: kubectl -o {name} is not simulated (use -o yaml, -o json, -o name, "
                   "-o wide, -o jsonpath= or -o custom-columns=)", INVALID)
    return err(f'error: unable to match a printer suitable for the output format "{out_fmt}", '
               f"allowed formats are: {_ALLOWED_FORMATS}", INVALID)


def get(k, inv: Invocation, stdin: str) -> CommandResult:
    fmt = _format(str(inv.flags.get("output", "")))
    if isinstance(fmt, CommandResult):
        return fmt
    out_fmt, arg = fmt
    if not inv.args:
        return err("You must specify the type of resource to get. Use \"kubectl api-resources\" "
                   "for a complete list of supported resources.\n\n"
                   "error: Required resource not specified.\n"
                   "Use \"kubectl explain <resource>\" for a detailed description of that resource "
                   "(e.g. kubectl explain pods).\nSee 'kubectl get -h' for help and examples", INVALID)
    targets = k.targets(inv)
    if any(a == "all" for _, n, a in targets if n is not None) and len(targets) > 1:
        return err("error: you must specify only one resource", INVALID)
    warn = "".join(dict.fromkeys(_SHORT_NAME_WARNING[a] for _, _, a in targets
                                 if a in _SHORT_NAME_WARNING))
    all_ns = bool(inv.flags.get("all-namespaces"))
    ns = None if all_ns else k.ns(inv)
    selector = inv.flags.get("selector")
    field_selector = inv.flags.get("field-selector")
    named = any(n is not None for _, n, _ in targets)
    if named and (selector or field_selector):
        return err("error: name cannot be provided when a selector is specified", INVALID)
    if out_fmt == "custom-columns":
        try:
            columns = jsonpath.parse_columns(arg)
        except jsonpath.JSONPathError as e:
            return err(f"error: {e}", INVALID)
    elif out_fmt == "jsonpath":
        try:
            template = jsonpath.parse(arg)
        except jsonpath.JSONPathError as e:
            return err(f"error: error parsing jsonpath {arg}, {e}", INVALID)
    groups: dict[str, list[dict]] = {}
    order: list[str] = []
    errors: list[str] = []
    for r, name, _ in targets:
        if r not in groups:
            groups[r] = []
            order.append(r)
        if name is None:
            try:
                groups[r].extend(k.list(r, ns, selector, field_selector))
            except SelectorRejected as e:
                errors.append(f"Error from server (BadRequest): {e}")
        else:
            obj = k.store.find(r, ns or k.namespace, name)
            if obj is None:
                errors.append(not_found(r, name).kubectl_text())
            else:
                groups[r].append(obj)
    items = [o for r in order for o in groups[r]]
    err_text = warn + "".join(e + "\n" for e in errors)
    status = 1 if errors else 0
    kind = ERROR if errors else OK
    single = named and len(targets) == 1 and len(items) == 1
    if out_fmt in ("yaml", "json", "jsonpath"):
        if not items and named:
            return CommandResult(err_text, status, kind)
        doc = items[0] if single else printers.as_list(items)
        if out_fmt == "jsonpath":
            try:
                text = jsonpath.render_parsed(template, doc)
            except jsonpath.JSONPathError as e:
                return err(f"{warn}error: error executing jsonpath {jsonpath.go_quote(arg)}: Error "
                           f"executing template: {e}. Printing more information for debugging the template:\n"
                           f"\ttemplate was:\n\t\t{arg}\n\tobject given to jsonpath engine was:"
                           "\n\t\t(netarena: not shown)\n")
        elif single:
            text = _printed(doc, out_fmt)
        else:
            texts = [_printed(o, out_fmt) for o in items]
            text = printers.list_json(texts) if out_fmt == "json" else printers.list_yaml(texts)
        return CommandResult(text + err_text, status, kind)
    if out_fmt == "name":
        text = "".join(printers.qualified(r, o["metadata"]["name"]) + "\n"
                       for r in order for o in groups[r])
        return CommandResult(text + err_text, status, kind)
    if out_fmt == "custom-columns":
        if not items and errors:
            return CommandResult(err_text, status, kind)
        text = jsonpath.custom_columns(columns, items, headers=not inv.flags.get("no-headers"))
        return CommandResult(text + err_text, status, kind)
    blocks = []
    prefix = len(order) > 1 or any("/" in a for a in inv.args[:1])
    for r in (r for r in order if groups[r]):
        blocks.append(printers_workloads.get_table(
            r, groups[r], k.store.now, wide=out_fmt == "wide", all_namespaces=all_ns,
            show_labels=bool(inv.flags.get("show-labels")), prefix=prefix,
            headers=not inv.flags.get("no-headers")))
    text = "\n".join(blocks)
    if not items and not errors:
        return CommandResult(warn + no_resources(ns), 0, OK)
    return CommandResult(text + err_text, status, kind)


# -------------------------------------------------------------------------- describe
def describe(k, inv: Invocation, stdin: str) -> CommandResult:
    if "field-selector" in inv.flags:  # describe has -l, not --field-selector
        return err("error: unknown flag: --field-selector\nSee 'kubectl describe --help' for usage.",
                   INVALID)
    if not inv.args:
        return err("You must specify the type of resource to describe. Use \"kubectl "
                    "api-resources\" for a complete list of supported resources.", INVALID)
    targets = k.targets(inv)
    all_ns = bool(inv.flags.get("all-namespaces"))
    ns = None if all_ns else k.ns(inv)
    texts, matched, errors = [], [], []
    for r, name, _ in targets:
        if name is None:
            objs = k.list(r, ns, inv.flags.get("selector"))
        else:
            obj = k.store.find(r, ns or k.namespace, name)
            if obj is not None:
                objs = [obj]
            else:  # kubectl describe falls back to a prefix match, each printed "%s\n"
                found = [o for o in k.store.list(r, ns or k.namespace)
                         if o["metadata"]["name"].startswith(name)]
                if not found:
                    errors.append(not_found(r, name).kubectl_text())
                matched += [_describe_one(k, r, o) + "\n" for o in found]
                continue
        for o in objs:
            texts.append(_describe_one(k, r, o))
    if not texts and not matched and not errors:
        return CommandResult(no_resources(ns), 0, OK)
    return CommandResult("\n\n".join(texts) + "".join(matched) + "".join(e + "\n" for e in errors),
                         1 if errors else 0, ERROR if errors else OK)


def _describe_one(k, r: str, o: dict) -> str:
    ns = (o.get("metadata") or {}).get("namespace")
    if r == "networkpolicies":
        return printers.describe_policy(o)
    if r == "pods":
        return printers_workloads.describe_pod(o)
    if r == "services":
        return printers_workloads.describe_service(o)
    if r == "deployments":
        return printers_workloads.describe_deployment(o, k.store.list("replicasets", ns))
    if r == "replicasets":
        return printers_workloads.describe_replicaset(o, k.store.list("pods", ns))
    if r == "endpoints":
        return printers_workloads.describe_endpoints(o)
    return printers.describe_namespace(o)
