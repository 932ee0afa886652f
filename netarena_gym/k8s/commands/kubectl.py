"""The simulated ``kubectl`` (client 1.32 against the in-memory API server of
:mod:`netarena_gym.k8s.state`): ``get``, ``describe``, ``patch`` (json, merge, strategic),
``label``, ``apply -f -`` and ``delete``, with kubectl's output, error texts and exit
statuses. Each verb is a function of (store, invocation, stdin) -> CommandResult.

``apply -f -`` reads its manifest from the action's ``stdin`` (the text interface passes
``{"command": "kubectl apply -f -", "stdin": "<yaml or json>"}``); it is
:mod:`netarena_gym.k8s.commands.kubectl_apply`. What ``patch -p`` sends and what the server
reads of it is :mod:`netarena_gym.k8s.commands.kubectl_patch_body`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from netarena_gym.shell.parser import ERROR, INVALID, OK, TIMEOUT, CommandResult
from netarena_gym.k8s.commands import printers
from netarena_gym.k8s.commands.cmdline import (
    OTHER_RESOURCES, Invocation, UsageError, parse, resolve, resource_args)
from netarena_gym.k8s.state_patches import (
    PatchFailed, clone, PatchMalformed, go_value, json_patch, merge_patch)
from netarena_gym.k8s.state_strategic import StrategicError, StrategicPanic, strategic_merge_patch
from netarena_gym.k8s.commands.kubectl_common import (
    DRY_VERBS, NotSimulated, SelectorRejected, dry_run_mode, err, fields_match,
    invalid_status_message, list_rejection, ok, parse_field_selector, run_dry)
from netarena_gym.k8s.commands.kubectl_print import run_printing
from netarena_gym.k8s.commands.go_json import syntax_error
from netarena_gym.k8s.commands.kubectl_patch_body import (
    GoSyntaxError, bad_yaml_escape, client_json, json_prefixed, load_json, server_patch)
from netarena_gym.k8s.commands.kubectl_patch_client import (
    ClientPatchError, client_patch, printed_name, same_object)
from netarena_gym.k8s.commands.labelsel import (
    SelectorError, label_selector_matches, parse_label_selector)
from netarena_gym.k8s.commands.kubectl_apply import apply
from netarena_gym.k8s.commands.kubectl_get import describe, get
from netarena_gym.k8s.commands.kubectl_manifests import (  # noqa: F401 (re-exported)
    last_applied, parse_manifests)
from netarena_gym.k8s.state import ApiError, Store, compact, not_found
from netarena_gym.k8s.state_validation import DecodeError, Invalid, label_value_errors

LAST_APPLIED = printers.LAST_APPLIED
ALL_CATEGORY = ("pods", "services", "deployments", "replicasets")
REJECTED = "The request is invalid: the server rejected our request due to an error in our request"
#: the end of a ``kubectl delete`` that waits for an object its finalizers keep (a real
#: backend kills it when the command line's budget is spent)
FINALIZER_WAIT = ("netarena: command timed out: kubectl delete waits until the object is "
                  "gone, and its finalizers keep it (killed)\n")
#: what kubectl says when the server's handler panics (a strategic merge the library cannot
#: do) and resets the request's HTTP/2 stream
RESET_STREAM = "Unable to connect to the server: stream error: stream ID 5; INTERNAL_ERROR; received from peer"
_OUTPUTS = ("yaml", "json", "name", "wide")
_ALLOWED_FORMATS = ("custom-columns,custom-columns-file,go-template,go-template-file,json,"
                    "jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml")


class Kubectl:
    """Runs kubectl argv against a :class:`Store` with ``namespace`` as the kubeconfig's."""

    def __init__(self, store: Store, namespace: str):
        self.store = store
        self.namespace = namespace
        #: the objects a client dry run made locally, by ``kind.group/name`` as printed
        #: (what ``-o yaml|json|jsonpath=`` prints; emptied before each printing verb)
        self.local_objects: dict[str, dict] = {}

    def run(self, argv: list[str], stdin: str = "") -> CommandResult:
        try:
            inv = parse(argv[1:])
        except UsageError as e:
            verb = next((a for a in argv[1:] if not a.startswith("-")), "")
            return err(f"error: {e}\nSee 'kubectl {verb + ' ' if verb else ''}--help' for usage.",
                        INVALID)
        if inv.flags.get("help"):
            return ok(f"kubectl {inv.verb or ''}: see the Kubernetes documentation; this "
                       "environment simulates get, describe, patch, label, apply and delete.\n")
        if inv.verb is None:
            return err("error: a command is required (get, describe, patch, label, apply, delete)",
                        INVALID)
        handler = _VERBS.get(inv.verb)
        if handler is None:
            if inv.verb in ("version", "api-resources", "api-versions", "explain",
                            "cluster-info", "config", "auth", "diff", "events", "top", "logs"):
                return err(f"netarena: kubectl {inv.verb} is not simulated", INVALID)
            return err(f'error: unknown command "{inv.verb}" for "kubectl"\n\n'
                        "Did you mean this?\n\tget\n\nRun 'kubectl --help' for usage.", INVALID)
        if inv.flags.get("watch"):
            return CommandResult("netarena: command timed out (kubectl --watch never ends)\n",
                                 124, TIMEOUT)
        try:
            out_fmt = inv.flags.get("output")
            if inv.verb in DRY_VERBS and out_fmt is not None:
                return run_printing(self, inv, stdin, str(out_fmt))
            return self.run_invocation(inv, stdin)
        except UsageError as e:
            return err(f"error: {e}", INVALID)
        except SelectorRejected as e:  # delete/label -l: the list the verb makes first
            return err(f"Error from server (BadRequest): {e}")
        except NotSimulated as e:
            return err(f"netarena: kubectl {inv.verb} {e} is not simulated (simulated: "
                        "networkpolicies, pods, services, namespaces, deployments, replicasets, endpoints, events)", INVALID)

    def run_invocation(self, inv: Invocation, stdin: str, after=None) -> CommandResult:
        """A parsed invocation of a verb (dry runs applied); raises what :meth:`run` turns
        into kubectl's errors. ``after(result)`` makes the output while what the verb wrote
        is stored (a dry run's too)."""
        handler = _VERBS[inv.verb]
        if inv.verb in DRY_VERBS:
            mode = dry_run_mode(inv)
            if not isinstance(mode, str):
                return mode
            if mode != "none":
                if inv.verb == "delete" and mode == "client":
                    return _delete(self, inv, stdin, client_dry_run=True)
                return run_dry(self.store, inv.verb, mode, lambda: handler(self, inv, stdin),
                               after)
        res = handler(self, inv, stdin)
        return res if after is None else after(res)

    # ------------------------------------------------------------------ helpers
    def ns(self, inv: Invocation) -> str:
        return str(inv.flags.get("namespace", self.namespace))

    def targets(self, inv: Invocation, args: list[str] | None = None):
        """[(resource, name|None, alias)] or raises UsageError."""
        out = []
        for alias, name in resource_args(inv.args if args is None else args):
            r = resolve(alias)
            if r is None:
                if alias.lower() in OTHER_RESOURCES or alias.lower() == "all":
                    if alias.lower() == "all":  # the "all" category that exists here
                        out += [(r, name, "all") for r in ALL_CATEGORY]
                        continue
                    raise NotSimulated(alias)
                raise UsageError(f'the server doesn\'t have a resource type "{alias}"')
            out.append((r, name, alias))
        return out

    def named(self, inv: Invocation, targets, ns: str) -> list[tuple[str, str]]:
        """[(resource, name)]: the names given, or every object ``--all``/``-l`` selects."""
        out = []
        for r, name, _ in targets:
            if name is not None:
                out.append((r, name))
            elif inv.flags.get("all") or inv.flags.get("selector"):
                out += [(r, o["metadata"]["name"]) for o in self.list(r, ns, inv.flags.get("selector"))]
            else:
                raise UsageError("resource(s) were provided, but no name was specified")
        return out

    def list(self, resource: str, ns: str | None, selector: str | None,
             field_selector: str | None = None) -> list[dict]:
        """The objects a list request returns (``field_selector``: ``--field-selector``; a
        bad selector raises :class:`SelectorRejected`)."""
        if selector:
            try:
                reqs = parse_label_selector(selector)
            except SelectorError as e:
                raise list_rejection(resource, selector, (field_selector or "").strip(), str(e)) \
                    from None
        terms = parse_field_selector(resource, field_selector, selector or "") \
            if field_selector else None
        objs = self.store.list(resource, ns)
        if selector:
            objs = [o for o in objs
                    if label_selector_matches(reqs, (o.get("metadata") or {}).get("labels") or {})]
        if terms:
            objs = [o for o in objs if fields_match(terms, o)]
        return objs


# ----------------------------------------------------------------------------- patch
def _patch(k: Kubectl, inv: Invocation, stdin: str) -> CommandResult:
    ptype = str(inv.flags.get("type", "strategic"))
    if ptype not in ("json", "merge", "strategic"):
        return err(f'error: --type must be one of [json merge strategic], not "{ptype}"', INVALID)
    if "field-selector" in inv.flags:
        return err("error: unknown flag: --field-selector\nSee 'kubectl patch --help' for usage.",
                   INVALID)
    if "patch-file" in inv.flags:
        return err(f"error: unable to read patch file: open {inv.flags['patch-file']}: "
                    "no such file or directory", INVALID)
    text = str(inv.flags.get("patch", ""))
    if not text:
        return err("error: must specify --patch or --patch-file containing the contents of the patch",
                    INVALID)
    text = client_json(text)
    if isinstance(text, CommandResult):
        return text
    targets = k.targets(inv)
    if not targets or any(n is None for _, n, _ in targets):
        return err("error: resource(s) were provided, but no name was specified", INVALID)
    ns = k.ns(inv)
    local = dry_run_mode(inv) == "client"
    out, errors, among = [], [], []
    for r, name, _ in targets:
        res = (_client_patch_one(k, r, ns, name, ptype, text) if local
               else _patch_one(k, r, ns, name, ptype, text, among=among))
        if res.status == 2:  # kubectl crashed
            return CommandResult("".join(out) + res.output, 2, ERROR)
        (out if res.status == 0 else errors).append(res.output)
        if res.status and len(among) < len(errors):
            among.append(res.output)
    # several errors print one a line (MultipleErrors): an Invalid one as its status message
    shown = among if len(errors) > 1 else errors
    return CommandResult("".join(out) + "".join(shown), 1 if errors else 0,
                         ERROR if errors else OK)


@dataclass(frozen=True)
class JsonPatchPlan:
    """``kubectl patch networkpolicy NAME --type=json -p TEXT`` with everything that
    does not depend on the store done once: the namespace, the name and the parsed patch
    (shared between runs; :func:`json_patch` never changes it). ``spec_only``: every
    operation's paths lie under ``/spec``, so the outcome depends on the policy's spec,
    labels and annotations alone; such outcomes are kept in ``outcomes``."""
    namespace: str
    name: str
    text: str
    patch: list
    spec_only: bool = False
    outcomes: dict = field(default_factory=dict, compare=False, repr=False)


_PLAN_FLAGS = frozenset({"type", "patch", "namespace"})


def plan_json_patch(inv: Invocation, namespace: str) -> JsonPatchPlan | None:
    """The plan of ``inv`` when it is a JSON patch of one named NetworkPolicy with no
    other flag and a patch that is valid JSON (kubectl's path for it is then
    :func:`run_json_patch`'s), else None."""
    if inv.verb != "patch" or not set(inv.flags) <= _PLAN_FLAGS or inv.flags.get("type") != "json":
        return None
    text = inv.flags.get("patch")
    if not isinstance(text, str) or not text or syntax_error(text) is not None \
            or (bad_yaml_escape(text) and not json_prefixed(text)):
        return None
    try:
        patch = load_json(text)
        targets = resource_args(inv.args)
    except (ValueError, UsageError):
        return None
    if len(targets) != 1 or targets[0][1] is None or resolve(targets[0][0]) != "networkpolicies":
        return None
    return JsonPatchPlan(str(inv.flags.get("namespace", namespace)), targets[0][1], text, patch,
                         _under_spec(patch))


def _under_spec(patch) -> bool:
    return isinstance(patch, list) and all(
        isinstance(op, dict) and all(isinstance(p, str) and (p == "/spec" or p.startswith("/spec/"))
                                     for p in (op.get("path"), op.get("from", "/spec")))
        for op in patch)


PLAN_OUTCOMES = 64  # policy states whose outcome one plan keeps


def run_json_patch(k: Kubectl, plan: JsonPatchPlan) -> CommandResult:
    """What ``kubectl patch`` answers for the invocation ``plan`` was made from. A patch
    under ``/spec`` has one outcome per (spec, labels, annotations) of the policy (stored
    specs are never changed in place): a success or a rejected patch is remembered and
    replayed (the new spec stored as :meth:`Store.update_policy` stored it)."""
    st = k.store
    cur = st.find("networkpolicies", plan.namespace, plan.name)
    if cur is None or not plan.spec_only:
        return _json_patch_result(k, plan)
    md, spec = cur["metadata"], cur["spec"]
    key = (id(spec), _items(md.get("labels")), _items(md.get("annotations")), st.end_port)
    hit = plan.outcomes.get(key)
    if hit is not None and hit[0] is spec:
        if hit[2] is not None:
            st.set_policy_spec(plan.namespace, plan.name, hit[2], True)
        return CommandResult(hit[1].output, hit[1].status, hit[1].kind)
    res = _json_patch_result(k, plan)
    if res.status == 0 or res.output == REJECTED + "\n":
        after = st.find("networkpolicies", plan.namespace, plan.name)
        if len(plan.outcomes) >= PLAN_OUTCOMES:
            plan.outcomes.clear()
        plan.outcomes[key] = (spec, CommandResult(res.output, res.status, res.kind),
                              None if after is cur else after["spec"])
    return res


def _items(d):
    return tuple(d.items()) if d else None


def _json_patch_result(k: Kubectl, plan: JsonPatchPlan) -> CommandResult:
    res = _patch_one(k, "networkpolicies", plan.namespace, plan.name, "json", plan.text,
                     plan.patch)
    return CommandResult(res.output, 1 if res.status else 0, ERROR if res.status else OK)


def _client_patch_one(k: Kubectl, r: str, ns: str, name: str, ptype: str,
                      text: str) -> CommandResult:
    """One object's ``--dry-run=client`` patch: got from the server, patched by kubectl
    (:mod:`~netarena_gym.k8s.commands.kubectl_patch_client`)."""
    cur = k.store.find(r, ns, name)
    if cur is None:
        return err(not_found(r, name).kubectl_text())
    if r != "networkpolicies":
        return err(f"netarena: patching {r} is not simulated", INVALID)
    try:
        result = client_patch(cur, ptype, text)
    except ClientPatchError as e:
        return CommandResult(str(e), 2, ERROR) if e.status == 2 else err(f"error: {e}")
    same = " (no change)" if same_object(cur, result) else ""
    shown = printed_name(result)
    k.local_objects[shown] = result
    return ok(f"{shown} patched{same}\n")


def _patch_one(k: Kubectl, r: str, ns: str, name: str, ptype: str, text: str,
               parsed=None, among: list | None = None) -> CommandResult:
    """One object's patch; ``among``: where an Invalid answer's text among several errors
    goes (see :func:`_patch`)."""
    st = k.store
    cur = st.find(r, ns, name)
    if cur is None:
        return err(not_found(r, name).kubectl_text())
    if r != "networkpolicies":
        return err(f"netarena: patching {r} is not simulated", INVALID)
    try:
        patch = server_patch(text, ptype) if parsed is None else parsed
    except GoSyntaxError as e:
        if ptype == "merge":
            return err("Error from server: Invalid JSON Patch")
        return err(f"Error from server (BadRequest): {e}")
    except ValueError as e:  # the simulator's own refusal (nesting)
        return err(f"error: {e}", INVALID)
    if patch is None and ptype != "merge":
        patch = [] if ptype == "json" else {}  # null decodes to no operations, no fields
    try:
        if ptype == "json":
            result = json_patch(cur, patch)
        elif ptype == "merge":
            if not isinstance(patch, (dict, list)):  # evanphx/json-patch: errBadJSONPatch
                return err("Error from server: Invalid JSON Patch")
            if not isinstance(patch, dict):
                return err(f'The request is invalid: patch: Invalid value: "{compact(patch)}": '
                            "couldn't get version/kind; json parse error: json: cannot unmarshal "
                            "array into Go value of type "
                            'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
                            '"json:\\"kind,omitempty\\"" }')
            result = merge_patch(cur, patch)
        else:
            result = strategic_merge_patch(cur, patch)
    except PatchMalformed as e:
        return err(f"Error from server (BadRequest): {e}")
    except PatchFailed:
        return err(REJECTED)
    except StrategicError as e:
        return err(f"Error from server{' (BadRequest)' if e.bad_request else ''}: {e}")
    except StrategicPanic:
        return err(RESET_STREAM)
    # a JSON or merge patch's result is decoded from its JSON (json-iterator, through the
    # codec), a strategic one's from the patched map (FromUnstructured, which takes 80.0 for
    # 80 and ignores kind and apiVersion): the invalid value shown is that JSON or that map
    shown = go_value(patch) if ptype == "strategic" else compact(result)
    if ptype != "strategic":
        why = json_decode_problem(result, floats=ptype == "merge")
        if why:
            return err(f'The request is invalid: patch: Invalid value: "{_go_quote(shown)}": {why}')
    try:
        obj, changed = st.update_policy(ns, name, result)
    except DecodeError as e:
        return err(f'The request is invalid: patch: Invalid value: "{_go_quote(shown)}": {e}')
    except Invalid as e:
        if among is not None:
            among.append(f"Error from server (Invalid): {invalid_status_message(e.name, e.errors)}\n")
        return err(str(e))
    except ApiError as e:
        return err(e.kubectl_text())
    q = printers.qualified(r, name)
    return ok(f"{q} patched\n" if changed else f"{q} patched (no change)\n")


_SCHEME = 'in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"'


def json_decode_problem(obj, *, floats: bool) -> str | None:
    """What decoding a patched NetworkPolicy from its JSON refuses that decoding it from a
    map takes: another kind or apiVersion (the codec) and, with ``floats`` (a merge patch,
    sent as typed; kubectl re-encodes a JSON patch from YAML, which makes 80.0 80), a port
    written as a number with a fraction such as 80.0 (IntOrString's json.Unmarshal into
    int32). The message is the error's core: json-iterator's field path and byte context
    are left out."""
    if not isinstance(obj, dict):
        return None
    kind, version = obj.get("kind"), obj.get("apiVersion")
    if isinstance(kind, str) and isinstance(version, str) and kind and version \
            and (kind, version) != ("NetworkPolicy", "networking.k8s.io/v1"):
        return f'no kind "{kind}" is registered for version "{version}" {_SCHEME}'
    spec = obj.get("spec") if floats else None
    for key in ("ingress", "egress"):
        rules = spec.get(key) if isinstance(spec, dict) else None
        for r in rules if isinstance(rules, list) else ():
            ports = r.get("ports") if isinstance(r, dict) else None
            for p in ports if isinstance(ports, list) else ():
                v = p.get("port") if isinstance(p, dict) else None
                if isinstance(v, float):
                    return f"json: cannot unmarshal number {v!r} into Go value of type int32"
    return None


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
                return err(f'error: invalid label value: "{a}": {errs[0]}', INVALID)
            adds[key] = val
        elif a.endswith("-") and res_args:
            removes.append(a[:-1])
        else:
            res_args.append(a)
    if not adds and not removes:
        return err("error: at least one label update is required", INVALID)
    if set(adds) & set(removes):
        return err("error: can not both modify and remove a label in the same command", INVALID)
    targets = k.targets(inv, res_args)
    ns = k.ns(inv)
    objs, errors = [], []
    for r, name in k.named(inv, targets, ns):
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
        for key in removes:  # said on the way to the server (a client dry run says nothing)
            if key not in old and dry_run_mode(inv) != "client":
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
            k.store.set_labels(r, ns, name, new, client=dry_run_mode(inv) == "client")
        except Invalid as e:
            errors.append(str(e) + "\n")
            continue
        out.append(f"{printers.qualified(r, name)} {msg}\n")
    return CommandResult("".join(out) + "".join(errors), 1 if errors else 0,
                         ERROR if errors else OK)


# ---------------------------------------------------------------------------- delete
def _delete(k: Kubectl, inv: Invocation, stdin: str, client_dry_run: bool = False) -> CommandResult:
    """``client_dry_run``: ``--dry-run=client``, which sends no delete (nor a get for the
    names given: each prints as deleted, found or not)."""
    if not inv.args:
        return err("error: You must provide one or more resources by argument or filename.\n"
                    "Example resource specifications include:\n   '-f rsrc.yaml'\n"
                    "   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'", INVALID)
    targets = k.targets(inv)
    ns = k.ns(inv)
    out, errors = [], []
    names = k.named(inv, targets, ns)
    if not names and (inv.flags.get("all") or inv.flags.get("selector")):
        return ok("No resources found\n")
    kept = False
    for r, n in names:
        try:
            if not client_dry_run:
                kept |= not k.store.delete(r, ns, n)
        except ApiError as e:
            errors.append(e.kubectl_text() + "\n")
            continue
        out.append(f'{printers.SINGULAR[r]}{"" if r != "networkpolicies" else ".networking.k8s.io"}'
                   f' "{n}" deleted{" (dry run)" if client_dry_run else ""}\n')
    if kept and inv.flags.get("wait") in (None, True, "true"):
        # kubectl waits until the objects are gone (--wait=true, no --timeout): finalizers
        # that nothing removes keep one, so it waits until it is killed
        return CommandResult("".join(out) + "".join(errors) + FINALIZER_WAIT, 124, TIMEOUT)
    return CommandResult("".join(out) + "".join(errors), 1 if errors else 0,
                         ERROR if errors else OK)


_VERBS = {"get": get, "describe": describe, "patch": _patch, "label": _label, "apply": apply,
          "delete": _delete}
