"""The files of a run: ``run.json`` (the spec), ``episodes.jsonl`` (one record per episode,
appended and flushed as each finishes) and ``summary.json``.

Resuming reads the records already there, drops a torn last line left by a killed run, and
skips the jobs whose key is present. A directory holding a run of another configuration is
refused rather than mixed into."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

from netarena_gym.eval.spec import EvalSpec
from netarena_gym.eval.validate import out_dir

RECORDS = "episodes.jsonl"
SUMMARY = "summary.json"
META = "run.json"


class RunMismatch(ValueError):
    pass


class RunStore:
    """``out`` is a directory; a path ending in ``.jsonl`` is taken as the records file
    itself (the first CLI's ``--out FILE``), with the summary and spec beside it."""

    def __init__(self, out: str | os.PathLike):
        p = Path(out)
        if p.suffix == ".jsonl":
            self.dir = p.parent
            self.records_path = p
            self.summary_path = p.with_suffix(".summary.json")
            self.meta_path = p.with_suffix(".run.json")
        else:
            self.dir = p
            self.records_path = p / RECORDS
            self.summary_path = p / SUMMARY
            self.meta_path = p / META
        self._fh = None

    # ------------------------------------------------------------------ open
    def open(self, spec: EvalSpec, *, overwrite: bool = False) -> dict[str, dict]:
        """Prepare for writing; returns the finished records by key (empty when fresh).
        Creates the directory only when its parent exists (``UsageError`` otherwise)."""
        out_dir(self.dir)
        if overwrite:
            for f in (self.records_path, self.summary_path, self.meta_path):
                if f.exists():
                    f.unlink()
        done: dict[str, dict] = {}
        if self.meta_path.exists() and self.records_path.exists():
            old = read_spec(self.meta_path)
            if old.identity() != spec.identity():
                diff = {k: (old.identity()[k], v) for k, v in spec.identity().items()
                        if old.identity().get(k) != v}
                raise RunMismatch(f"{self.dir} holds a run of another configuration "
                                  f"({diff}); use another --out or --overwrite")
            done = {r["key"]: r for r in self._read_and_repair()}
        elif self.records_path.exists() and self.records_path.stat().st_size:
            raise RunMismatch(f"{self.records_path} exists and has no {self.meta_path.name} "
                              "beside it, so it is not a run of netarena-gym eval; use "
                              "another --out (or --overwrite to replace it)")
        meta = spec.to_dict()
        if "api_key" in meta["agent_options"]:  # never write a secret to disk
            meta["agent_options"] = {**meta["agent_options"], "api_key": "(redacted)"}
        self.meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True))
        self._fh = open(self.records_path, "a", encoding="utf-8")
        return done

    def _read_and_repair(self) -> list[dict]:
        """Read every record; truncate a torn last line (a killed run's) so appends stay
        well-formed. Anything else that is not a record refuses the directory."""
        try:
            records, good_bytes = scan_records(self.records_path)
        except ValueError as e:
            raise RunMismatch(f"{e}; use another --out or --overwrite") from None
        if good_bytes != self.records_path.stat().st_size:
            with open(self.records_path, "r+b") as f:
                f.truncate(good_bytes)
        return records

    # ----------------------------------------------------------------- write
    def append(self, record: dict) -> None:
        self._fh.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._fh.flush()

    def write_summary(self, summary: dict) -> None:
        tmp = self.summary_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(summary, indent=1))
        os.replace(tmp, self.summary_path)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


#: the fields every episode record has, with their types (what summaries read)
RECORD_FIELDS = {"key": str, "env": str, "correct": bool, "safe": bool, "safe_compat": bool,
                 "steps": int, "agent_seconds": (int, float)}


def check_record(rec, where: str) -> dict:
    """``rec`` if it is an episode record of ``netarena-gym eval``; ValueError naming
    ``where`` and the first missing or mistyped field otherwise."""
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: not an episode record of netarena-gym eval (a JSON "
                         f"{type(rec).__name__}, not an object)")
    for k, t in RECORD_FIELDS.items():
        v = rec.get(k)
        if not isinstance(v, t) or (t in (int, (int, float)) and isinstance(v, bool)):
            raise ValueError(f"{where}: not an episode record of netarena-gym eval "
                             f"({k!r} is {'missing' if k not in rec else repr(v)})")
    if rec["key"].count("|") < 2:
        raise ValueError(f"{where}: not an episode record of netarena-gym eval (key "
                         f"{rec['key']!r} is not ENV|LEVEL|SEED)")
    return rec


def scan_records(path: Path) -> tuple[list[dict], int]:
    """``(records, bytes they take)`` of a records file: a torn last line (no newline, or
    cut JSON) ends the scan; any other line that is not a record raises ValueError."""
    with open(path, "rb") as f:
        lines = f.readlines()
    out, good = [], 0
    for n, line in enumerate(lines, 1):
        last = n == len(lines)
        if not line.endswith(b"\n"):
            break
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            if last:
                break
            raise ValueError(f"{path}:{n}: not a JSON record") from None
        out.append(check_record(rec, f"{path}:{n}"))
        good += len(line)
    return out, good


def iter_records(path: str | os.PathLike) -> Iterator[dict]:
    """The complete records of a run directory (or records file); a torn tail is skipped,
    and a line that is not an episode record raises ValueError naming it."""
    p = Path(path)
    if p.is_dir():
        p = p / RECORDS
    yield from scan_records(p)[0]


def read_spec(path: str | os.PathLike) -> EvalSpec:
    """The :class:`EvalSpec` a ``run.json`` holds; :class:`RunMismatch` naming the file when
    it is not one (not JSON, not an object, a missing or unknown key, a bad value)."""
    p = Path(path)
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(d, dict):
            raise TypeError(f"a JSON {type(d).__name__}, not an object")
        return EvalSpec.from_dict(d)
    except (ValueError, TypeError, AttributeError, RecursionError) as e:
        raise RunMismatch(f"{p}: not a run.json of netarena-gym eval ({e}); use another "
                          "--out or --overwrite") from None


def load_run(path: str | os.PathLike) -> tuple[dict, list[dict]]:
    """``(summary or {}, records)`` of a run directory. Where ``run.json`` is there, only
    the records of its jobs are returned: a run resumed with fewer episodes or levels keeps
    the earlier records in ``episodes.jsonl``, but its summary (and so a report) counts
    only the episodes of the run as it now is."""
    p = Path(path)
    store = RunStore(p)
    summary = json.loads(store.summary_path.read_text()) if store.summary_path.exists() else {}
    if not isinstance(summary, dict):
        raise ValueError(f"{store.summary_path}: not a run summary (a JSON "
                         f"{type(summary).__name__}, not an object)")
    records = list(iter_records(store.records_path))
    if store.meta_path.exists():
        wanted = {j.key for j in read_spec(store.meta_path).jobs()}
        records = [r for r in records if r["key"] in wanted]
    return summary, records
