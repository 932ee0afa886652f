"""The simulated ``kubectl`` (client 1.32 against the in-memory API server of
:mod:`netarena_gym.k8s.state`): ``get``, ``describe``, ``patch`` (json, merge, strategic),
``label``, ``apply -f -`` and ``delete``, with kubectl's output, error texts and exit
statuses. Each verb is a function of (store, invocation, stdin) -> CommandResult.

``apply -f -`` reads its manifest from the action's ``stdin`` (the text interface passes
``{"command": "kubectl apply -f -", "stdin": "<yaml or json>"}``).
"""
from __future__ import annotations

import json

from netarena_gym.shell.parser import ERROR, INVALID, OK, REFUSED, TIMEOUT, CommandResult
from netarena_gym.k8s.commands import printers
from netarena_gym.k8s.commands.allowlist import apply_refusal
from netarena_gym.k8s.commands.cmdline import (
    OTHER_RESOURCES, Invocation, UsageError, parse, resolve, resource_args)
from netarena_gym.k8s.state_patches import (
    PatchFailed, clone, PatchMalformed, go_value, json_patch, merge_patch, strategic_merge_patch,
    three_way_patch)
from netarena_gym.k8s.grader import select_pods
from netarena_gym.k8s.commands.schema import validate_manifest
from netarena_gym.k8s.state import ApiError, Store, compact, not_found
from netarena_gym.k8s.state_validation import DecodeError, Invalid, label_value_errors
from netarena_gym.k8s.workload import yaml_module

LAST_APPLIED = printers.LAST_APPLIED
REJECTED = "The request is invalid: the server rejected our request due to an error in our request"
_OUTPUTS = ("yaml", "json", "name", "wide")
_ALLOWED_FORMATS = ("custom-columns,custom-columns-file,go-template,go-template-file,json,"
                    "jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml")


def _ok(text: str) -> CommandResult:
    return CommandResult(text, 0, OK)


def _err(text: str, kind: str = ERROR) -> CommandResult:
    return CommandResult(text if text.endswith("\n") else text + "\n", 1, kind)


class Kubectl:
    """Runs kubectl argv against a :class:`Store` with ``namespace`` as the kubeconfig's."""

    def __init__(self, store: Store, namespace: str):
        self.store = store
        self.namespace = namespace

    def run(self, argv: list[str], stdin: str = "") -> CommandResult:
        try:
            inv = parse(argv[1:])
        except UsageError as e:
            verb = next((a for a in argv[1:] if not a.startswith("-")), "")
            return _err(f"error: {e}\nSee 'kubectl {verb + ' ' if verb else ''}--help' for usage.",
                        INVALID)
        if inv.flags.get("help"):
            return _ok(f"kubectl {inv.verb or ''}: see the Kubernetes documentation; this "
                       "environment simulates get, describe, patch, label, apply and delete.\n")
        if inv.verb is None:
            return _err("error: a command is required (get, describe, patch, label, apply, delete)",
                        INVALID)
        handler = _VERBS.get(inv.verb)
        if handler is None:
            if inv.verb in ("version", "api-resources", "api-versions", "explain",
                            "cluster-info", "config", "auth", "diff", "events", "top", "logs"):
                return _err(f"netarena: kubectl {inv.verb} is not simulated", INVALID)
            return _err(f'error: unknown command "{inv.verb}" for "kubectl"\n\n'
                        "Did you mean this?\n\tget\n\nRun 'kubectl --help' for usage.", INVALID)
        if inv.flags.get("watch"):
            return CommandResult("netarena: command timed out (kubectl --watch never ends)\n",
                                 124, TIMEOUT)
        try:
            return handler(self, inv, stdin)
        except UsageError as e:
            return _err(f"error: {e}", INVALID)
        except _NotSimulated as e:
            return _err(f"netarena: kubectl {inv.verb} {e} is not simulated (simulated: "
                        "networkpolicies, pods, services, namespaces)", INVALID)

    # ------------------------------------------------------------------ helpers
    def ns(self, inv: Invocation) -> str:
        return str(inv.flags.get("namespace", self.namespace))

    def _targets(self, inv: Invocation, args: list[str] | None = None):
        """[(resource, name|None, alias)] or raises UsageError."""
        out = []
        for alias, name in resource_args(inv.args if args is None else args):
            r = resolve(alias)
            if r is None:
                if alias.lower() in OTHER_RESOURCES or alias.lower() == "all":
                    if alias.lower() == "all":
                        out += [("pods", name, "pods"), ("services", name, "services")]
                        continue
                    raise _NotSimulated(alias)
                raise UsageError(f'the server doesn\'t have a resource type "{alias}"')
            out.append((r, name, alias))
        return out

    def _named(self, inv: Invocation, targets, ns: str) -> list[tuple[str, str]]:
        """[(resource, name)]: the names given, or every object ``--all``/``-l`` selects."""
        out = []
        for r, name, _ in targets:
            if name is not None:
                out.append((r, name))
            elif inv.flags.get("all") or inv.flags.get("selector"):
                out += [(r, o["metadata"]["name"]) for o in self._list(r, ns, inv.flags.get("selector"))]
            else:
                raise UsageError("resource(s) were provided, but no name was specified")
        return out

    def _list(self, resource: str, ns: str | None, selector: str | None) -> list[dict]:
        objs = self.store.list(resource, ns)
        if selector:
            sel = parse_selector(selector)
            objs = [o for o in objs if _matches(sel, (o.get("metadata") or {}).get("labels") or {})]
        return objs


class _NotSimulated(Exception):
    pass


# ------------------------------------------------------------------- label selectors
def parse_selector(text: str) -> dict:
    """A kubectl ``-l`` selector (``a=b,c!=d,e in (x,y),!f,g``) as a LabelSelector dict with
    an extra ``notEqual`` list."""
    sel = {"matchLabels": {}, "matchExpressions": []}
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for p in (x.strip() for x in parts):
        if not p:
            raise UsageError(f"unable to parse requirement: found '', expected: identifier")
        low = p.split()
        if len(low) >= 2 and low[1] in ("in", "notin"):
            vals = p.split("(", 1)[1].rstrip(")").split(",") if "(" in p else []
            sel["matchExpressions"].append({"key": low[0], "operator": "In" if low[1] == "in" else "NotIn",
                                            "values": [v.strip() for v in vals if v.strip()]})
        elif "!=" in p:
            k, v = p.split("!=", 1)
            sel["matchExpressions"].append({"key": k.strip(), "operator": "NotIn", "values": [v.strip()]})
        elif "==" in p or "=" in p:
            k, v = p.split("==", 1) if "==" in p else p.split("=", 1)
            sel["matchLabels"][k.strip()] = v.strip()
        elif p.startswith("!"):
            sel["matchExpressions"].append({"key": p[1:].strip(), "operator": "DoesNotExist"})
        else:
            sel["matchExpressions"].append({"key": p, "operator": "Exists"})
    return sel


def _matches(sel: dict, labels: dict) -> bool:
    index = {(k, v): 1 for k, v in labels.items()}
    keys = {k: 1 for k in labels}
    return bool(select_pods(sel, 1, index, keys))


# ------------------------------------------------------------------------------- get
def _get(k: Kubectl, inv: Invocation, stdin: str) -> CommandResult:
    out_fmt = str(inv.flags.get("output", ""))
    if out_fmt and out_fmt not in _OUTPUTS:
        if out_fmt.split("=", 1)[0] in ("jsonpath", "custom-columns", "go-template", "template",
                                        "jsonpath-as-json", "jsonpath-file", "custom-columns-file",
                                        "go-template-file", "templatefile"):
            return _err(f"netarena: kubectl -o {out_fmt.split('=', 1)[0]} is not simulated "
                        "(use -o yaml, -o json, -o name or -o wide)", INVALID)
        return _err(f'error: unable to match a printer suitable for the output format "{out_fmt}", '
                    f"allowed formats are: {_ALLOWED_FORMATS}", INVALID)
    if not inv.args:
        return _err("You must specify the type of resource to get. Use \"kubectl api-resources\" "
                    "for a complete list of supported resources.\n\n"
                    "error: Required resource not specified.\n"
                    "Use \"kubectl explain <resource>\" for a detailed description of that resource "
                    "(e.g. kubectl explain pods).\nSee 'kubectl get -h' for help and examples", INVALID)
    targets = k._targets(inv)
    all_ns = bool(inv.flags.get("all-namespaces"))
    ns = None if all_ns else k.ns(inv)
    selector = inv.flags.get("selector")
    named = any(n is not None for _, n, _ in targets)
    if named and selector:
        return _err("error: name cannot be provided when a selector is specified", INVALID)
    groups: dict[str, list[dict]] = {}
    order: list[str] = []
    errors: list[str] = []
    for r, name, _ in targets:
        if r not in groups:
            groups[r] = []
            order.append(r)
        if name is None:
            groups[r].extend(k._list(r, ns, selector))
        else:
            obj = k.store.find(r, ns or k.namespace, name)
            if obj is None:
                errors.append(not_found(r, name).kubectl_text())
            else:
                groups[r].append(obj)
    items = [o for r in order for o in groups[r]]
    err_text = "".join(e + "\n" for e in errors)
    status = 1 if errors else 0
    kind = ERROR if errors else OK
    if out_fmt in ("yaml", "json"):
        if not items and not named:
            return CommandResult(_no_resources(ns) if out_fmt == "" else
                                 (printers.to_yaml if out_fmt == "yaml" else printers.to_json)(
                                     printers.as_list([])), 0, OK)
        single = named and len(targets) == 1 and len(items) == 1
        doc = items[0] if single else printers.as_list(items)
        text = printers.to_yaml(doc) if out_fmt == "yaml" else printers.to_json(doc)
        if not items:
            text = ""
        return CommandResult(text + err_text, status, kind)
    if out_fmt == "name":
        text = "".join(printers.qualified(r, o["metadata"]["name"]) + "\n"
                       for r in order for o in groups[r])
        return CommandResult(text + err_text, status, kind)
    blocks = []
    prefix = len(order) > 1 or any("/" in a for a in inv.args[:1])
    for r in order:
        if groups[r]:
            blocks.append(printers.get_table(r, groups[r], k.store.now, wide=out_fmt == "wide",
                                             all_namespaces=all_ns,
                                             show_labels=bool(inv.flags.get("show-labels")),
                                             prefix=prefix,
                                             headers=not inv.flags.get("no-headers")))
    text = "\n".join(blocks)
    if not items and not errors:
        return CommandResult(_no_resources(ns), 0, OK)
    return CommandResult(text + err_text, status, kind)


def _no_resources(ns: str | None) -> str:
    return "No resources found\n" if ns is None else f"No resources found in {ns} namespace.\n"


# -------------------------------------------------------------------------- describe
def _describe(k: Kubectl, inv: Invocation, stdin: str) -> CommandResult:
    if not inv.args:
        return _err("You must specify the type of resource to describe. Use \"kubectl "
                    "api-resources\" for a complete list of supported resources.", INVALID)
    targets = k._targets(inv)
    all_ns = bool(inv.flags.get("all-namespaces"))
    ns = None if all_ns else k.ns(inv)
    texts, errors = [], []
    for r, name, _ in targets:
        if name is None:
            objs = k._list(r, ns, inv.flags.get("selector"))
        else:
            obj = k.store.find(r, ns or k.namespace, name)
            if obj is not None:
                objs = [obj]
            else:  # kubectl describe falls back to a prefix match
                objs = [o for o in k.store.list(r, ns or k.namespace)
                        if o["metadata"]["name"].startswith(name)]
                if not objs:
                    errors.append(not_found(r, name).kubectl_text())
        for o in objs:
            texts.append(_describe_one(k, r, o))
    if not texts and not errors:
        return CommandResult(_no_resources(ns), 0, OK)
    return CommandResult("\n\n".join(texts) + "".join(e + "\n" for e in errors),
                         1 if errors else 0, ERROR if errors else OK)


def _describe_one(k: Kubectl, r: str, o: dict) -> str:
    if r == "networkpolicies":
        return printers.describe_policy(o)
    if r == "pods":
        return printers.describe_pod(o)
    if r == "services":
        spec = o.get("spec") or {}
        sel = spec.get("selector")
        eps = []
        if sel:
            for p in k._list("pods", o["metadata"].get("namespace"), ",".join(
                    f"{a}={b}" for a, b in sorted(sel.items()))):
                ip = (p.get("status") or {}).get("podIP")
                tp = (spec.get("ports") or [{}])[0].get("targetPort")
                if ip:
                    eps.append(f"{ip}:{tp}")
        return printers.describe_service(o, ",".join(eps) or "<none>")
    return printers.describe_namespace(o)


# ----------------------------------------------------------------------------- patch
def _load_json(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        ch = text[e.pos] if e.pos < len(text) else ""
        what = ("looking for beginning of object key string" if "property name" in e.msg
                else "looking for beginning of value")
        raise ValueError(f"invalid character '{ch}' {what}" if ch else
                         "unexpected end of JSON input") from None


def _patch(k: Kubectl, inv: Invocation, stdin: str) -> CommandResult:
    ptype = str(inv.flags.get("type", "strategic"))
    if ptype not in ("json", "merge", "strategic"):
        return _err(f'error: --type must be one of [json merge strategic], not "{ptype}"', INVALID)
    if "patch-file" in inv.flags:
        return _err(f"error: unable to read patch file: open {inv.flags['patch-file']}: "
                    "no such file or directory", INVALID)
    text = str(inv.flags.get("patch", ""))
    if not text:
        return _err("error: must specify --patch or --patch-file containing the contents of the patch",
                    INVALID)
    if ptype == "json":  # kubectl converts a JSON patch from YAML before anything else
        try:
            _load_json(text)
        except ValueError:
            yaml = yaml_module()
            try:
                check_yaml_budget(text)
                text = json.dumps(_jsonable(yaml.safe_load(text)))
            except ValueError as e:
                return _err(f"error: {e}", INVALID)
            except yaml.YAMLError as e:
                return _err(f'error: unable to parse "{_go_quote(text)}": yaml: {_yaml_problem(e)}',
                            INVALID)
    targets = k._targets(inv)
    if not targets or any(n is None for _, n, _ in targets):
        return _err("error: resource(s) were provided, but no name was specified", INVALID)
    ns = k.ns(inv)
    out, errors = [], []
    for r, name, _ in targets:
        res = _patch_one(k, r, ns, name, ptype, text)
        (out if res.status == 0 else errors).append(res.output)
    return CommandResult("".join(out) + "".join(errors), 1 if errors else 0,
                         ERROR if errors else OK)


def _patch_one(k: Kubectl, r: str, ns: str, name: str, ptype: str, text: str) -> CommandResult:
    st = k.store
    cur = st.find(r, ns, name)
    if cur is None:
        return _err(not_found(r, name).kubectl_text())
    if r != "networkpolicies":
        return _err(f"netarena: patching {r} is not simulated", INVALID)
    try:
        patch = _load_json(text)
    except ValueError as e:
        if ptype == "merge":
            return _err("Error from server: Invalid JSON Patch")
        if ptype == "json":
            return _err(REJECTED)
        return _err(f"Error from server (BadRequest): {e}")
    try:
        if ptype == "json":
            result = json_patch(cur, patch)
        elif ptype == "merge":
            if not isinstance(patch, dict):
                return _err(f'The request is invalid: patch: Invalid value: "{compact(patch)}": '
                            "couldn't get version/kind; json parse error: json: cannot unmarshal "
                            f"{'array' if isinstance(patch, list) else 'number'} into Go value of type "
                            'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
                            '"json:\\"kind,omitempty\\"" }')
            result = merge_patch(cur, patch)
        else:
            result = strategic_merge_patch(cur, patch)
    except PatchMalformed as e:
        return _err(f"Error from server (BadRequest): {e}")
    except PatchFailed:
        return _err(REJECTED)
    try:
        obj, changed = st.update_policy(ns, name, result)
    except DecodeError as e:
        shown = go_value(patch) if ptype != "json" else compact(result)
        return _err(f'The request is invalid: patch: Invalid value: "{_go_quote(shown)}": {e}')
    except Invalid as e:
        return _err(str(e))
    except ApiError as e:
        return _err(e.kubectl_text())
    q = printers.qualified(r, name)
    return _ok(f"{q} patched\n" if changed else f"{q} patched (no change)\n")


def _yaml_problem(e) -> str:
    """go-yaml's wording for the common PyYAML parse errors (``line N: ...``)."""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    mark = getattr(e, "problem_mark", None)
    for py, go in (("expected ',' or '}'", "did not find expected ',' or '}'"),
                   ("expected ',' or ']'", "did not find expected ',' or ']'"),
                   ("expected the node content", "did not find expected node content"),
                   ("could not find expected ':'", "could not find expected ':'"),
                   ("expected <block end>", "did not find expected key")):
        if problem.startswith(py):
            problem = go
            break
    line = (mark.line + 1) if mark is not None else 1
    return f"line {line}: {problem}"


def _go_quote(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


# ----------------------------------------------------------------------------- label
def _label(k: Kubectl, inv: Invocation, stdin: str) -> CommandResult:
    res_args, adds, removes = [], {}, []
    for a in inv.args:
        if "=" in a:
            key, _, val = a.partition("=")
            errs = label_value_errors(val)
            if errs:
                return _err(f'error: invalid label value: "{a}": {errs[0]}', INVALID)
            adds[key] = val
        elif a.endswith("-") and res_args:
            removes.append(a[:-1])
        else:
            res_args.append(a)
    if not adds and not removes:
        return _err("error: at least one label update is required", INVALID)
    if set(adds) & set(removes):
        return _err("error: can not both modify and remove a label in the same command", INVALID)
    targets = k._targets(inv, res_args)
    ns = k.ns(inv)
    objs, errors = [], []
    for r, name in k._named(inv, targets, ns):
        o = k.store.find(r, ns, name)
        if o is None:
            errors.append(not_found(r, name).kubectl_text() + "\n")
        else:
            objs.append((r, o))
    out = []
    overwrite = inv.flags.get("overwrite") not in (None, False, "false")
    for r, o in objs:
        name = o["metadata"]["name"]
        old = dict(o["metadata"].get("labels") or {})
        for key in removes:
            if key not in old:
                out.append(f'label "{key}" not found.\n')
        if not overwrite:
            bad = [f"'{key}' already has a value ({old[key]}), and --overwrite is false"
                   for key, v in adds.items() if key in old and old[key] != v]
            if bad:
                errors.append("error: " + bad[0] + "\n")
                continue
        new = dict(old)
        new.update(adds)
        for key in removes:
            new.pop(key, None)
        old_json = compact(o)
        tmp = clone(o)
        tmp["metadata"]["labels"] = new
        new_json = compact(tmp)
        msg = "not labeled"
        if old_json != new_json:
            msg = "labeled"
            if not overwrite and len(new_json) < len(old_json):
                msg = "unlabeled"
        try:
            k.store.set_labels(r, ns, name, new)
        except Invalid as e:
            errors.append(str(e) + "\n")
            continue
        out.append(f"{printers.qualified(r, name)} {msg}\n")
    return CommandResult("".join(out) + "".join(errors), 1 if errors else 0,
                         ERROR if errors else OK)


# ----------------------------------------------------------------------------- apply
MAX_MANIFEST_BYTES = 256 * 1024
MAX_YAML_EVENTS = 50_000
MAX_DEPTH = 64


def check_yaml_budget(text: str) -> None:
    """Refuse YAML that could expand or nest without bound, before anything is built: the
    event stream (linear in the input) has no aliases, at most MAX_YAML_EVENTS events and
    nests at most MAX_DEPTH deep. Raises ValueError (syntax errors are left to the loader)."""
    yaml = yaml_module()
    if len(text.encode("utf-8", "surrogatepass")) > MAX_MANIFEST_BYTES:
        raise ValueError(f"netarena: manifest larger than {MAX_MANIFEST_BYTES} bytes")
    depth = 0
    try:
        for n, ev in enumerate(yaml.parse(text, Loader=yaml.SafeLoader)):
            if n > MAX_YAML_EVENTS:
                raise ValueError("netarena: manifest has too many YAML nodes")
            if isinstance(ev, yaml.AliasEvent):
                raise ValueError("netarena: YAML aliases (*name) are not allowed in manifests")
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise ValueError("netarena: manifest nests too deep")
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return  # the loader reports the syntax error in its own words


def _json_stream(text: str) -> list:
    """Every value of a JSON stream (``{...}{...}`` or one per line), as kubectl decodes it."""
    dec, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        try:
            v, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise ValueError(f"error parsing STDIN: invalid character at offset {e.pos}") from None
        out.append(v)


def _depth_ok(v, limit: int = MAX_DEPTH) -> bool:
    stack = [(v, 0)]
    while stack:
        x, d = stack.pop()
        if d > limit:
            return False
        if isinstance(x, dict):
            stack.extend((y, d + 1) for y in x.values())
        elif isinstance(x, list):
            stack.extend((y, d + 1) for y in x)
    return True


def parse_manifests(text: str) -> list:
    """Every document of a YAML (``---``) or JSON stream, strictly (kubectl's decoder applies
    each of them, so each one is returned to be checked); ``List`` items are flattened.
    Raises ValueError on anything undecodable or over the size, depth and alias budget."""
    text = text or ""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_MANIFEST_BYTES:
        raise ValueError(f"netarena: manifest larger than {MAX_MANIFEST_BYTES} bytes")
    if text.lstrip()[:1] in ("{", "["):
        docs = _json_stream(text)
    else:
        check_yaml_budget(text)
        yaml = yaml_module()
        try:
            docs = list(yaml.safe_load_all(text))
        except yaml.YAMLError as e:
            raise ValueError(f"error parsing STDIN: error converting YAML to JSON: yaml: {_yaml_problem(e)}") from None
    out = []
    for d in docs:
        if not _depth_ok(d):
            raise ValueError("netarena: manifest nests too deep")
        if isinstance(d, dict) and d.get("kind") == "List":
            items = d.get("items") or []
            out.extend(items if isinstance(items, list) else [items])
        elif d is not None:
            out.append(d)
    return [_jsonable(d) for d in out]


def _jsonable(v):
    """YAML scalars that JSON lacks (dates) become strings, as kubectl's YAML-to-JSON does."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return str(v)


def last_applied(doc: dict, ns: str) -> str:
    """The ``last-applied-configuration`` annotation kubectl writes for ``doc``."""
    d = clone(doc)
    md = d.setdefault("metadata", {})
    if not isinstance(md, dict):
        md = d["metadata"] = {}
    ann = dict(md.get("annotations") or {})
    ann.pop(LAST_APPLIED, None)
    md["annotations"] = ann
    md["namespace"] = ns
    return compact(d) + "\n"


def _apply(k: Kubectl, inv: Invocation, stdin: str) -> CommandResult:
    fn = inv.flags.get("filename")
    if fn is None:
        return _err("error: must specify one of -f and -k", INVALID)
    if fn != "-":
        return _err(f'error: the path "{fn}" does not exist', INVALID)
    try:
        docs = parse_manifests(stdin)
    except ValueError as e:
        return _err(f"error: {e}", INVALID)
    if not docs:
        return _err("error: no objects passed to apply", INVALID)
    why = apply_refusal(docs, k.ns(inv))
    if why:
        return CommandResult(f"netarena: command refused: {why}\n", 126, REFUSED)
    ns = k.ns(inv)
    out, errors = [], []
    for d in docs:
        if not isinstance(d, dict):
            return _err('error: error validating "STDIN": error validating data: invalid object to '
                        "validate; if you choose to ignore these errors, turn validation off with "
                        "--validate=false", INVALID)
        missing = [f"{f} not set" for f in ("apiVersion", "kind") if not d.get(f)]
        if missing:
            shown = missing[0] if len(missing) == 1 else "[" + ", ".join(missing) + "]"
            return _err('error: error validating "STDIN": error validating data: '
                        + shown + "; if you choose to ignore these errors, turn "
                        "validation off with --validate=false", INVALID)
        if inv.flags.get("validate") not in ("false", "ignore"):
            errs = validate_manifest(d, end_port=k.store.end_port)
            if errs:
                body = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
                return _err(f'error: error validating "STDIN": error validating data: {body}; if '
                            "you choose to ignore these errors, turn validation off with "
                            "--validate=false", INVALID)
    for d in docs:
        md = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
        dns = md.get("namespace")
        if dns and dns != ns and "namespace" in inv.flags:
            return _err(f'error: the namespace from the provided object "{dns}" does not match the '
                        f"namespace \"{ns}\". You must pass '--namespace={dns}' to perform this "
                        "operation.", INVALID)
    for d in docs:
        res = _apply_one(k, d, ns)
        (out if res.status == 0 else errors).append(res.output)
    return CommandResult("".join(out) + "".join(errors), 1 if errors else 0,
                         ERROR if errors else OK)


def _apply_one(k: Kubectl, doc: dict, ns: str) -> CommandResult:
    st = k.store
    md = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = md.get("name")
    if not name:
        return _err("error: error when retrieving current configuration of:\nResource: "
                    '"networking.k8s.io/v1, Resource=networkpolicies", GroupVersionKind: '
                    '"networking.k8s.io/v1, Kind=NetworkPolicy"\nName: "", Namespace: '
                    f'"{ns}"\nfrom server for: "STDIN": resource name may not be empty')
    applied = last_applied(doc, ns)
    modified = clone(doc)
    mmd = modified.setdefault("metadata", {})
    mmd["annotations"] = {**(mmd.get("annotations") or {}), LAST_APPLIED: applied}
    mmd["namespace"] = ns
    q = printers.qualified("networkpolicies", name)
    cur = st.find("networkpolicies", ns, name)
    if cur is None:
        try:
            st.create_policy(ns, modified)
        except Invalid as e:
            return _err(str(e))
        except ApiError as e:
            return _err(f'Error from server ({e.reason}): error when creating "STDIN": {e}')
        return _ok(f"{q} created\n")
    original = None
    raw = (cur["metadata"].get("annotations") or {}).get(LAST_APPLIED)
    warn = ""
    if raw:
        try:
            original = json.loads(raw)
        except json.JSONDecodeError:
            original = None
    else:
        warn = (f"Warning: resource networkpolicies/{name} is missing the {LAST_APPLIED} "
                "annotation which is required by kubectl apply. kubectl apply should only be used "
                "on resources created declaratively by either kubectl create --save-config or "
                "kubectl apply. The missing annotation will be patched automatically.\n")
    patch = three_way_patch(original, modified, cur)
    if not patch:
        return _ok(f"{warn}{q} unchanged\n")
    result = strategic_merge_patch(cur, patch)
    try:
        st.update_policy(ns, name, result)
    except DecodeError as e:
        return _err(f'{warn}The request is invalid: patch: Invalid value: "{_go_quote(go_value(patch))}": {e}')
    except Invalid as e:
        return _err(warn + str(e))
    except ApiError as e:
        return _err(warn + f'Error from server ({e.reason}): error when applying patch to "STDIN": {e}')
    return _ok(f"{warn}{q} configured\n")


# ---------------------------------------------------------------------------- delete
def _delete(k: Kubectl, inv: Invocation, stdin: str) -> CommandResult:
    if not inv.args:
        return _err("error: You must provide one or more resources by argument or filename.\n"
                    "Example resource specifications include:\n   '-f rsrc.yaml'\n"
                    "   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'", INVALID)
    targets = k._targets(inv)
    ns = k.ns(inv)
    out, errors = [], []
    for r, n in k._named(inv, targets, ns):
        try:
            k.store.delete(r, ns, n)
        except ApiError as e:
            errors.append(e.kubectl_text() + "\n")
            continue
        out.append(f'{printers.SINGULAR[r]}{"" if r != "networkpolicies" else ".networking.k8s.io"}'
                   f' "{n}" deleted\n')
    return CommandResult("".join(out) + "".join(errors), 1 if errors else 0,
                         ERROR if errors else OK)


_VERBS = {"get": _get, "describe": _describe, "patch": _patch, "label": _label, "apply": _apply,
          "delete": _delete}
