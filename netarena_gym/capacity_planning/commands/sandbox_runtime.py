"""The restricted runtime agent code runs in, inside the sandbox worker's child process
(see :mod:`sandbox_worker`): the Python-level guards, the namespace the code starts with,
and the tracebacks it is shown.

Part of the worker (loaded next to :mod:`sandbox_worker`, inside the sandbox too): standard
library and networkx only, nothing from netarena_gym.

**Guards** (a second line only; the OS containment of :mod:`sandbox_bwrap` is the first):
restricted builtins (no ``open``/``eval``/``exec``/``compile``/``globals``...), an import
allow-list (:data:`ALLOWED_MODULES`) served from preloaded modules through read-only proxies
that never hand out other modules, and an AST check that refuses ``_``-prefixed and
frame/code attributes.

**Namespaces** (what the code finds already bound, besides those builtins):

* ``"default"`` (levels 1-4): nothing. The code imports what it uses from the allow-list
  (``import networkx as nx``).
* ``"upstream"`` (``level="compat"``): upstream NetArena's evaluator namespace (behavioural
  spec, section 3.2): ``nx`` (networkx), ``json``, ``copy`` and ``G``, the master graph (a
  separate copy of the base graph: mutating it changes neither the graph passed to
  ``process_graph`` nor the grading). Upstream also binds its six ``solid_step_*``
  ground-truth helpers; they are left out here (the grader holds the ground truth, and agent
  code calling them gets a ``NameError``). Upstream strips ``import`` lines from the code
  before it runs (``sandbox.upstream_source``, applied env-side).

**Tracebacks** (:func:`agent_traceback`) show the agent's own frames only (``File
"<agent>", line N``, with the line's source), then the exception; library and worker frames
are folded into a count, and no host, worker or project path appears anywhere in the text.
"""
from __future__ import annotations

import ast
import builtins
import copy
import json
import re
import sys
import traceback
import types

ALLOWED_MODULES = ("networkx", "math", "itertools", "functools", "collections", "heapq",
                   "bisect", "operator", "json", "copy", "re", "string", "statistics",
                   "random", "typing")
BANNED_ATTRS = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "cr_frame", "cr_code", "cr_await",
    "ag_frame", "ag_code", "ag_await", "f_back", "f_globals", "f_locals", "f_builtins",
    "f_code", "f_trace", "tb_frame", "tb_next", "co_code", "co_consts", "func_globals",
    "func_code", "mro"})
SAFE_BUILTINS = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",
    "classmethod", "complex", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hash", "hex", "int", "isinstance", "issubclass", "iter", "len", "list", "map",
    "max", "min", "next", "object", "oct", "ord", "pow", "print", "property", "range", "repr",
    "reversed", "round", "set", "slice", "sorted", "staticmethod", "str", "sum", "super",
    "tuple", "type", "zip", "__build_class__", "None", "True", "False", "NotImplemented",
    "Ellipsis", "ArithmeticError", "AssertionError", "AttributeError", "BaseException",
    "Exception", "IndexError", "KeyError", "LookupError", "NameError", "NotImplementedError",
    "OverflowError", "RecursionError", "RuntimeError", "StopIteration", "TypeError",
    "ValueError", "ZeroDivisionError", "MemoryError")


# ------------------------------------------------------- restricted runtime
class SandboxViolation(Exception):
    pass


def _allowed(modname: str) -> bool:
    return any(modname == m or modname.startswith(m + ".") for m in ALLOWED_MODULES)


class ModuleProxy:
    """A read-only view of an allowed module that never hands out other modules."""
    __slots__ = ("_module",)

    def __init__(self, module):
        object.__setattr__(self, "_module", module)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(f"'{name}' is not available in the sandbox")
        return _wrap(getattr(object.__getattribute__(self, "_module"), name))

    def __setattr__(self, name, value):
        raise AttributeError("modules are read-only in the sandbox")

    def __repr__(self):
        return f"<module {object.__getattribute__(self, '_module').__name__!r} (sandboxed)>"


def _wrap(v):
    if isinstance(v, types.ModuleType):
        if not _allowed(v.__name__):
            raise AttributeError(f"module '{v.__name__}' is not available in the sandbox")
        return ModuleProxy(v)
    return v


def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level:
        raise ImportError("relative imports are not available in the sandbox")
    if not _allowed(name):
        raise ImportError(f"import of '{name}' is not allowed in the sandbox (allowed: "
                          f"{', '.join(ALLOWED_MODULES)})")
    target = name if fromlist else name.split(".")[0]
    mod = sys.modules.get(target)
    if mod is None:
        raise ImportError(f"module '{target}' is not available in the sandbox")
    return ModuleProxy(mod)


def _safe_getattr(obj, name, *default):
    if not isinstance(name, str) or name.startswith("_") or name in BANNED_ATTRS:
        raise AttributeError(f"attribute {name!r} is not available in the sandbox")
    return _wrap(getattr(obj, name, *default)) if default else _wrap(getattr(obj, name))


def _safe_hasattr(obj, name):
    try:
        _safe_getattr(obj, name)
        return True
    except AttributeError:
        return False


def check_source(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_") or node.attr in BANNED_ATTRS:
                raise SandboxViolation(f"line {node.lineno}: attribute '{node.attr}' is not "
                                       "available in the sandbox")
        elif isinstance(node, ast.Name):
            if node.id.startswith("__") and node.id != "__name__":
                raise SandboxViolation(f"line {node.lineno}: name '{node.id}' is not "
                                       "available in the sandbox")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for m in mods:
                if not _allowed(m):
                    raise SandboxViolation(f"line {node.lineno}: import of '{m}' is not allowed"
                                           f" in the sandbox (allowed: {', '.join(ALLOWED_MODULES)})")


def restricted_globals(stdout) -> dict:
    b = {name: getattr(builtins, name) for name in SAFE_BUILTINS}
    b["__import__"] = _guarded_import
    b["getattr"] = _safe_getattr
    b["hasattr"] = _safe_hasattr

    def _print(*args, **kw):
        kw["file"] = stdout
        print(*args, **kw)
    b["print"] = _print
    return {"__builtins__": b, "__name__": "__agent__"}



def upstream_namespace(master, guard: bool) -> dict:
    """The names upstream's evaluator binds before agent code runs (see module doc)."""
    import networkx
    mods = {"nx": networkx, "json": json, "copy": copy}
    out = {k: (ModuleProxy(m) if guard else m) for k, m in mods.items()}
    out["G"] = master
    return out


# ------------------------------------------------------------------ tracebacks
_ABS_PATH = re.compile(r"(?<![\w<>.])/(?:[\w.+-]+/)+")


def scrub_paths(text: str) -> str:
    """``text`` with the directory part of every absolute path removed."""
    return _ABS_PATH.sub("", text)


def agent_traceback(e: BaseException, source: str = "") -> str:
    """``e`` as the agent sees it: its own frames (``<agent>``, at most 6), a count of the
    library frames below the last one, and the exception; no path anywhere."""
    tb = traceback.extract_tb(e.__traceback__)
    frames = [fr for fr in tb if fr.filename == "<agent>"]
    src = source.splitlines()
    text = ""
    if frames:
        text = "Traceback (most recent call last):\n"
        for fr in frames[:1] + frames[1:][-5:]:
            text += f'  File "<agent>", line {fr.lineno}, in {fr.name}\n'
            if fr.lineno and 0 < fr.lineno <= len(src) and src[fr.lineno - 1].strip():
                text += f"    {src[fr.lineno - 1].strip()}\n"
        below = len(tb) - 1 - max(i for i, fr in enumerate(tb) if fr.filename == "<agent>")
        if below:
            text += f"  ({below} frame{'s' if below != 1 else ''} in library code)\n"
    text += "".join(traceback.format_exception_only(type(e), e))
    return scrub_paths(text)
