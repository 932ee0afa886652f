"""Rewrite the ``output`` blocks of the docs with what their ``python`` blocks print.

``python -m tests.docs.update_outputs [FILE.md ...]`` runs every python block that is
followed by an ``output`` block (the same way ``test_docs.py`` does) and, where the printed
text does not match the block (``...`` still matches anything), replaces the block with the
printed text. Review the diff: a changed output is a changed behaviour. Blocks marked
``<!-- doctest: skip/long -->`` are left alone.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.docs.test_docs import DOC_FILES, ROOT, examples_of, matches, parse_blocks, run_example


def update(path: Path) -> int:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    outputs = [b for b in parse_blocks(path, text) if b.lang == "output"]
    todo = []
    with tempfile.TemporaryDirectory() as tmp:
        for ex in examples_of(path, text):                # in order: blocks share the dir
            if ex.kind != "python" or ex.want is None or ex.marked("skip") or ex.marked("long"):
                continue
            r = run_example(ex, Path(tmp))
            if r.returncode != 0:
                print(f"{ex.id}: exited {r.returncode}\n{r.stderr[-2000:]}", file=sys.stderr)
            elif not matches(ex.want, r.stdout):
                todo.append((next(b for b in outputs if b.line > ex.line), r.stdout))
                print(f"{ex.id}: output updated")
    for block, stdout in reversed(todo):                  # bottom-up: line numbers hold
        lines[block.line:block.end] = stdout.rstrip("\n").splitlines()
    if todo:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(todo)


def main(argv: list[str]) -> int:
    paths = [Path(a).resolve() for a in argv] or DOC_FILES
    total = sum(update(p) for p in paths)
    print(f"{total} output block(s) updated under {ROOT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
