"""The examples in README.md and docs/**/*.md run, print what the docs show, and their links
resolve.

What is collected (in document order, one test each):

* every fenced ``python`` block: run with this interpreter in a temporary directory (one per
  document, shared by its blocks in order, so a later block may use an earlier one's files;
  under pytest-xdist a document's examples are one ``xdist_group``, so they keep that order
  on one worker);
  if the next fenced block is an ``output`` block, stdout must match it;
* every ``netarena-gym ...`` command line of a ``bash``/``console``/``sh`` block (``\\``
  continuations joined; ``$ `` prompts stripped; other programs such as ``pip`` are not
  run): run with bash in the same directory; in a ``console`` block the lines after a
  ``$ `` command up to the next one are its expected stdout.

Expected output is compared with :mod:`doctest`'s checker and its ``ELLIPSIS`` option
(``...`` matches anything, e.g. timings), trailing spaces ignored.

HTML comments on the lines just before a block qualify it:
``<!-- doctest: skip REASON -->`` (needs a real backend, a GPU or a server: never run here),
``<!-- doctest: long REASON -->`` (minutes of CPU: run only with ``NETARENA_DOCS_LONG=1``),
``<!-- doctest: needs MOD[,MOD...] EXTRA -->`` (skipped, with the install hint, where an
optional extra is not installed).
"""
from __future__ import annotations

import doctest
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINKED_FILES = DOC_FILES + [ROOT / "ARCHITECTURE.md", ROOT / "SECURITY.md"]
FENCE = re.compile(r"^(`{3,})([\w-]*)\s*$")
MARKER = re.compile(r"^<!--\s*doctest:\s*(skip|long|needs)\b\s*(.*?)\s*-->\s*$")
SHELL_LANGS = {"bash", "sh", "console", "shell"}
TIMEOUT = {"normal": 600, "long": 3600}
LONG = os.environ.get("NETARENA_DOCS_LONG") == "1"


@dataclass
class Block:
    path: Path
    line: int            # 1-based line of the opening fence
    lang: str
    text: str
    markers: list[tuple[str, str]]
    end: int = 0         # 0-based index of the closing fence


@dataclass
class Example:
    path: Path
    line: int
    kind: str            # "python" or "command"
    source: str
    want: str | None
    markers: list[tuple[str, str]]

    def marked(self, kind: str) -> list[str]:
        return [text for k, text in self.markers if k == kind]

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def parse_blocks(path: Path, text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, with the doctest marker just before each."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2).lower(), i
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            j += 1
        markers, k = [], start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        while k >= 0 and (mm := MARKER.match(lines[k].strip())):
            markers.insert(0, (mm.group(1), mm.group(2)))
            k -= 1
        blocks.append(Block(path, start + 1, lang, "\n".join(lines[start + 1:j]), markers, j))
        i = j + 1
    return blocks


def join_continuations(text: str) -> list[tuple[int, str]]:
    """Logical shell lines ``(offset, line)``: trailing-backslash continuations joined."""
    out, buf, first = [], "", 0
    for n, raw in enumerate(text.splitlines()):
        if not buf:
            first = n
        if raw.rstrip().endswith("\\"):
            buf += raw.rstrip()[:-1] + " "
            continue
        out.append((first, buf + raw))
        buf = ""
    if buf:
        out.append((first, buf))
    return out


def is_netarena_command(line: str) -> bool:
    """``netarena-gym ...``, possibly after ``VAR=value`` assignments."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return False
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words.pop(0)
    return bool(words) and words[0] == "netarena-gym"


def examples_of(path: Path, text: str) -> list[Example]:
    blocks, found = parse_blocks(path, text), []
    for n, b in enumerate(blocks):
        if b.lang == "python":
            nxt = blocks[n + 1] if n + 1 < len(blocks) else None
            want = None
            if nxt is not None and nxt.lang == "output":
                between = text.splitlines()[b.end + 1:nxt.line - 1]
                if all(not s.strip() for s in between):
                    want = nxt.text
            found.append(Example(path, b.line, "python", b.text, want, b.markers))
        elif b.lang in SHELL_LANGS:
            logical = join_continuations(b.text)
            for idx, (off, line) in enumerate(logical):
                prompt = line.startswith("$ ")
                cmd = line[2:] if prompt else line
                if b.lang == "console" and not prompt:
                    continue
                if not is_netarena_command(cmd) and "&&" in cmd:     # pip install ... && netarena-gym ...
                    cmd = " && ".join(p.strip() for p in cmd.split("&&") if is_netarena_command(p))
                if not is_netarena_command(cmd):
                    continue
                want = None
                if b.lang == "console":
                    rest = []
                    for _, later in logical[idx + 1:]:
                        if later.startswith("$ "):
                            break
                        rest.append(later)
                    want = "\n".join(rest)
                found.append(Example(path, b.line + 1 + off, "command", cmd.strip(), want,
                                     b.markers))
    return found


def all_examples() -> list[Example]:
    return [e for p in DOC_FILES for e in examples_of(p, p.read_text(encoding="utf-8"))]


def matches(want: str, got: str) -> bool:
    norm = lambda s: "\n".join(x.rstrip() for x in s.strip("\n").splitlines()) + "\n"  # noqa: E731
    return doctest.OutputChecker().check_output(norm(want), norm(got), doctest.ELLIPSIS)


def run_example(ex: Example, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("NETARENA_K8S_DATA", None)
    timeout = TIMEOUT["long" if ex.marked("long") else "normal"]
    if ex.kind == "python":
        argv = [sys.executable, "-c", ex.source]
    else:
        prelude = f'netarena-gym() {{ {shlex.quote(sys.executable)} -m netarena_gym.cli "$@"; }}\n'
        argv = ["bash", "-c", "set -o pipefail\n" + prelude + ex.source]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


EXAMPLES = all_examples()


def marks_of(ex: Example):
    # a document's examples share its directory and run in order: on one xdist worker
    marks = [pytest.mark.xdist_group(f"doc:{ex.path.relative_to(ROOT)}")]
    marks += [pytest.mark.skip(reason=f"doc block marked skip: {r}") for r in ex.marked("skip")]
    for reason in ex.marked("long"):
        marks += [pytest.mark.slow, pytest.mark.skipif(
            not LONG, reason=f"long doc example ({reason}): set NETARENA_DOCS_LONG=1")]
    if ex.kind == "command" and "netarena-gym train" in ex.source:
        marks.append(pytest.mark.slow)                  # a smoke training run: about a minute
    for need in ex.marked("needs"):
        mods, _, extra = need.partition(" ")
        missing = [m for m in mods.split(",") if importlib.util.find_spec(m) is None]
        marks.append(pytest.mark.skipif(bool(missing), reason=(
            f"doc example needs {', '.join(missing)}: pip install -e \".[{extra.strip()}]\"")))
    return marks


@pytest.fixture(scope="session")
def doc_dirs(tmp_path_factory):
    return {p: tmp_path_factory.mktemp(p.stem) for p in DOC_FILES}


@pytest.mark.parametrize("ex", [pytest.param(e, id=e.id, marks=marks_of(e)) for e in EXAMPLES])
def test_doc_example_runs_and_prints_what_the_doc_shows(ex, doc_dirs):
    r = run_example(ex, doc_dirs[ex.path])
    assert r.returncode == 0, (f"{ex.id} exited {r.returncode}\n--- stdout\n{r.stdout[-3000:]}"
                               f"\n--- stderr\n{r.stderr[-3000:]}")
    if ex.want is not None:
        assert matches(ex.want, r.stdout), (f"{ex.id}: output differs from the doc\n--- doc\n"
                                            f"{ex.want}\n--- printed\n{r.stdout}")


# ----------------------------------------------------------------------------- the harness


def test_parser_collects_python_commands_outputs_and_markers(tmp_path):
    text = ("x\n```python\nprint(1)\n```\n\n```output\n1\n```\n"
            "<!-- doctest: skip needs a GPU -->\n```bash\npip install x\n"
            "netarena-gym eval --env E \\\n    --level 1   # note\n```\n"
            "```console\n$ netarena-gym list\nNetArena-Routing-v0\n...\n$ ls\nfoo\n```\n"
            "```\nnetarena-gym not-collected\n```\n"
            "<!-- doctest: needs torch,trl train -->\n<!-- doctest: long 4 min -->\n"
            "```bash\npip install -e . && netarena-gym train ppo\n```\n")
    exs = examples_of(tmp_path / "a.md", text)
    assert [(e.kind, e.line) for e in exs] == [("python", 2), ("command", 12), ("command", 16),
                                               ("command", 28)]
    assert exs[0].want == "1" and exs[0].markers == []
    assert exs[1].source == "netarena-gym eval --env E      --level 1   # note"
    assert exs[1].markers == [("skip", "needs a GPU")] and exs[1].want is None
    assert exs[2].want == "NetArena-Routing-v0\n..."
    assert exs[3].source == "netarena-gym train ppo"
    assert exs[3].markers == [("needs", "torch,trl train"), ("long", "4 min")]


def test_output_check_uses_ellipsis_and_is_strict_otherwise():
    assert matches("a\n... s\nc", "a\n0.31 s\nc\n")
    assert not matches("3 mismatches", "8 mismatches")


def test_skip_markers_are_few_and_say_why():
    marked = [e for e in EXAMPLES if e.marked("skip")]
    assert all(all(e.marked("skip")) for e in marked)
    assert len(marked) <= len(EXAMPLES) // 3, [e.id for e in marked]


# ----------------------------------------------------------------------------- links

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced blocks and inline code."""
    out, fence = [], None
    for line in text.splitlines():
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if line.strip() == fence:
                fence = None
            continue
        out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens."""
    h = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", h).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for line in prose(path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        result.add(s if s not in seen else f"{s}-{seen[s]}")
        seen[s] = seen.get(s, 0) + 1
    return result


def test_slug_follows_github():
    assert slug("PPO (`netarena-gym train ppo`)") == "ppo-netarena-gym-train-ppo"
    assert slug("Routing on real Mininet (`backend=\"mininet\"`)") == \
        "routing-on-real-mininet-backendmininet"


@pytest.mark.parametrize("path", LINKED_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_and_anchors_resolve(path):
    broken = []
    for target in LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists() or ROOT not in dest.parents and dest != ROOT:
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


DOC_REF = re.compile(r"\b((?:docs/[\w./-]+|[A-Z]+)\.md)(?:#([\w-]+))?")


def test_doc_references_in_code_point_to_real_files_and_sections():
    """``docs/training.md#install`` in a message or docstring names a page and heading that exist."""
    broken = []
    sources = [p for d in ("netarena_gym", "tests", "training", "benchmarks", "envs", ".ci")
               for p in (ROOT / d).rglob("*") if p.suffix in {".py", ".sh", ""} and p.is_file()]
    for src in sources + [ROOT / "pyproject.toml"]:
        try:
            text = src.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for name, anchor in DOC_REF.findall(text):
            dest = ROOT / name
            where = f"{src.relative_to(ROOT)}: {name}{'#' + anchor if anchor else ''}"
            if not dest.is_file():
                if name.startswith("docs/"):
                    broken.append(f"{where}: no such file")
            elif anchor and anchor not in anchors(dest):
                broken.append(f"{where}: no such heading")
    assert not broken, "\n".join(broken)
