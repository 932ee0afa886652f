"""``-o`` on kubectl's write verbs (kubectl 1.32 against kube-apiserver 1.20): ``patch``,
``label`` and ``apply`` print the objects they wrote in yaml, json or ``jsonpath=``;
``delete`` prints names only (``-o name`` is :func:`~.kubectl_common.as_names`).

kubectl makes a write verb's printer only when it prints an object it wrote, so a format
it cannot print fails after the write; apply prints several objects as one ``List``.
A client dry run prints what kubectl made locally: ``patch`` the patched object,
``apply`` the object it would create (the manifest with its annotation and namespace) or
the live one it got. Left out: ``-o go-template=``, ``template``, ``jsonpath-as-json`` and
the ``-file`` formats, refused as not simulated before anything is written.
"""
from __future__ import annotations

import functools

from netarena_gym.k8s.commands import jsonpath, printers
from netarena_gym.k8s.commands.cmdline import Invocation, resolve
from netarena_gym.k8s.commands.kubectl_common import DONE_LINE, as_names, dry_run_mode, err
from netarena_gym.shell.parser import ERROR, INVALID, CommandResult

__all__ = ["WRITE_FORMATS", "as_objects", "run_printing", "written_printer"]


def run_printing(k, inv: Invocation, stdin: str, out_fmt: str) -> CommandResult:
    """Write verb ``inv`` with ``-o out_fmt``, run by kubectl ``k``
    (:class:`~.kubectl.Kubectl`)."""
    bare = Invocation(inv.verb, inv.args,
                      {f: v for f, v in inv.flags.items() if f != "output"}, inv.raw_flags)
    if out_fmt == "name":
        return as_names(k.run_invocation(bare, stdin))
    if inv.verb == "delete":
        return err(f"error: unexpected -o output mode: {out_fmt}. We only support '-o name'",
                   INVALID)
    show = written_printer(out_fmt)
    mode = dry_run_mode(inv)
    if show is None:
        return err(f"netarena: kubectl {inv.verb} -o {out_fmt.partition('=')[0]} is not "
                   "simulated (use -o yaml, -o json, -o name or -o jsonpath=)", INVALID)
    k.local_objects.clear()

    def written(kind: str, name: str, created: bool) -> dict | None:
        """The object printed as ``kind.group/name``: the one a client dry run made
        locally, else the stored one (one a server dry run created has no
        resourceVersion, as the server answers it)."""
        if mode == "client" and f"{kind}/{name}" in k.local_objects:
            return k.local_objects[f"{kind}/{name}"]
        r = resolve(kind)
        obj = None if r is None else k.store.find(r, k.ns(bare), name)
        if obj is not None and created and mode == "server":
            obj = {**obj, "metadata": {f: v for f, v in obj["metadata"].items()
                                       if f != "resourceVersion"}}
        if obj is not None and inv.verb == "label" and not obj["metadata"].get("labels"):
            # kubectl label sends the labels it made (at least an empty map): the server
            # answers with that empty map, which it does not store
            obj = {**obj, "metadata": {**obj["metadata"], "labels": {}}}
        return obj

    return k.run_invocation(bare, stdin, lambda res: as_objects(res, show, written,
                                                                inv.verb == "apply"))


# the formats kubectl 1.32 prints a written object in (its error lists them so)
WRITE_FORMATS = ("go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,"
                 "name,template,templatefile,yaml")
_TEMPLATES = ("jsonpath", "go-template", "template")


def written_printer(out_fmt: str):
    """How a write verb (patch, label, apply) prints an object it wrote under ``-o
    out_fmt`` (not ``name``): a function of the object; a string, kubectl's error for the
    format, which it meets only when printing (so after each write); or None, a format
    kubectl has that is not simulated."""
    name, eq, arg = out_fmt.partition("=")
    if out_fmt == "yaml":
        return printers.to_yaml
    if out_fmt == "json":
        return _json
    if name in _TEMPLATES and not arg:
        return "template format specified but no template given"
    if name == "jsonpath":
        try:
            template = jsonpath.parse(arg)
        except jsonpath.JSONPathError as e:
            return f"error parsing jsonpath {arg}, {e}"
        return functools.partial(jsonpath.render_parsed, template)
    if name in WRITE_FORMATS.split(","):
        return None
    return (f'unable to match a printer suitable for the output format "{out_fmt}", '
            f"allowed formats are: {WRITE_FORMATS}")


def _json(obj: dict) -> str:
    """``-o json`` of a written object, or of apply's ``List`` of several: kubectl writes
    that list's keys unsorted (kind, apiVersion, metadata, items)."""
    if obj.get("kind") != "List" or obj.get("metadata") != {}:
        return printers.to_json(obj)
    items = ",\n".join("        " + printers.to_json(o).rstrip("\n").replace("\n", "\n        ")
                        for o in obj["items"])
    return ('{\n    "kind": "List",\n    "apiVersion": "v1",\n    "metadata": {},\n'
            f'    "items": [\n{items}\n    ]\n}}\n')


def as_objects(res: CommandResult, show, find, as_list: bool = False) -> CommandResult:
    """A write verb's output under ``-o yaml|json|jsonpath=``: each object it wrote
    (``find(kind.group, name, created)``: the stored object, or None) printed by
    ``show(obj)`` in place of its action line, one straight after another as kubectl's
    printers write them; other lines (warnings, errors) stay. ``as_list`` (apply): several
    objects are printed once, as a ``List``. A ``show`` that is an error (see
    :func:`written_printer`) is met after the write, once per object printed: one is
    kubectl's ``error: ...``, several are its lines without the prefix."""
    out, objs, at = [], [], None
    for line in res.output.splitlines(keepends=True):
        m = DONE_LINE.match(line.rstrip("\n"))
        obj = find(m.group(1), m.group(2), line.startswith("created", m.end(2) + 1)) \
            if m else None
        if obj is None:
            out.append(line)
        else:
            at = len(out) if at is None else at
            objs.append(obj)
            if not as_list:
                out.append(obj)
    if not objs:
        return res
    if as_list:
        out.insert(at, objs[0] if len(objs) == 1 else
                   {"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {}})
    if isinstance(show, str):
        failed = sum(isinstance(x, dict) for x in out)
        text = "".join(x for x in out if not isinstance(x, dict))
        return CommandResult(text + (f"error: {show}\n" if failed == 1 else f"{show}\n" * failed),
                             1, ERROR)
    return CommandResult("".join(show(x) if isinstance(x, dict) else x for x in out),
                         res.status, res.kind)
