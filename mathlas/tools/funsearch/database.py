"""The program database: a MAP-Elites archive on disk, one per problem and parameter set.

::

    <data_dir>/funsearch/<problem>/<params>/
        programs.jsonl    every registered program, append-only (fsync'd): hash, score, cell, source
        elites.json       {cells: {cell: elite}, best: elite, programs: n}, rewritten atomically
        .lock             held by every writer (filelock) (and by readers, so they see a finished state)

A program's *cell* is its behaviour: how long it is (non-blank, non-comment lines, bucketed 1-5,
6-15, 16-40, 41-100, >100) times the problem's behaviour statistic in quarters (cap set: how many
distinct priority levels it uses; bin packing: how often it agrees with best fit). Each cell keeps
its best program (a tie keeps the shorter source), so the archive holds short and long, best-fit-like
and unlike programs side by side instead of many copies of one idea; the global best is the best
elite. Scores in different parameter sets (n = 6 vs n = 8) are not comparable, hence one archive each.

A crashed writer leaves at worst a torn last line in ``programs.jsonl`` (skipped when read) and
never a half-written ``elites.json`` (written to a temporary file, fsync'd, renamed).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from collections.abc import Iterator

from mathlas.atomic import atomic_file

LENGTH_BUCKETS = (5, 15, 40, 100)
_SLUG = re.compile(r"[A-Za-z_]+=-?\d+(,[A-Za-z_]+=-?\d+)*")  # params_slug of integer parameters
STAT_BUCKETS = 4


def program_hash(source: str) -> str:
    return hashlib.sha256(source.strip().encode()).hexdigest()[:16]


def code_lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def cell_of(source: str, statistic: float) -> tuple[str, dict[str, int]]:
    """The behaviour cell of a program: (key, {length bucket, statistic bucket})."""
    lines = code_lines(source)
    length = sum(lines > b for b in LENGTH_BUCKETS)
    stat = min(STAT_BUCKETS - 1, max(0, int(statistic * STAT_BUCKETS)))
    return f"len{length}-stat{stat}", {"length_bucket": length, "statistic_bucket": stat, "lines": lines}


def params_slug(params: dict[str, Any]) -> str:
    slug = ",".join(f"{k}={params[k]}" for k in sorted(params))
    return re.sub(r"[^A-Za-z0-9=,._-]", "_", slug) or "default"


class Database:
    """The archive of one problem and parameter set."""

    def __init__(self, root: Path):
        self.root = root
        self.log = root / "programs.jsonl"
        self.elites_file = root / "elites.json"

    @classmethod
    def open(cls, problem: str, params: dict[str, Any], base: Path | None = None) -> Database:
        if base is None:
            from mathlas.paths import data_dir

            base = data_dir()
        return cls(base / "funsearch" / problem / params_slug(params))

    @contextmanager
    def locked(self) -> Iterator[None]:
        from filelock import FileLock

        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(self.root / ".lock", thread_local=False):
            yield

    def _read_state(self) -> dict[str, Any]:
        try:
            state = json.loads(self.elites_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"cells": {}, "best": None, "programs": 0}
        return state

    def _write_state(self, state: dict[str, Any]) -> None:
        with atomic_file(self.elites_file, "w", fsync=True, prefix=".elites-") as f:
            json.dump(state, f, ensure_ascii=False)
        dfd = os.open(self.root, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    def state(self) -> dict[str, Any]:
        """The archive as it is now (cells, best, number of programs registered). Reading an archive
        that does not exist yet creates nothing: no directory for every parameter set asked about."""
        if not self.root.is_dir():
            return {"cells": {}, "best": None, "programs": 0}
        with self.locked():
            return self._read_state()

    @classmethod
    def others(cls, problem: str, params: dict[str, Any], base: Path | None = None) -> list[dict[str, Any]]:
        """The other archives of ``problem`` that hold programs: ``{"params": {...}, "programs": n}``
        each, most programs first. Read without the lock: ``elites.json`` is only ever renamed into
        place, so it is whole or absent."""
        here = cls.open(problem, params, base).root
        found = []
        try:
            roots = sorted(p for p in here.parent.iterdir() if p.is_dir() and p != here)
        except OSError:  # no archive of this problem yet
            return []
        for root in roots:
            if not _SLUG.fullmatch(root.name):
                continue
            try:
                programs = int(json.loads((root / "elites.json").read_text(encoding="utf-8")).get("programs", 0))
            except (OSError, ValueError, AttributeError):
                continue
            if programs:
                them = {k: int(v) for k, v in (pair.split("=") for pair in root.name.split(","))}
                found.append({"params": them, "programs": programs})
        return sorted(found, key=lambda o: -o["programs"])

    def add(self, source: str, score: float, statistic: float, details: dict[str, Any]) -> dict[str, Any]:
        """Record a program the harness scored; returns what changed (new elite, new best, cell)."""
        key, behaviour = cell_of(source, statistic)
        entry = {"hash": program_hash(source), "score": score, "cell": key, "behaviour": behaviour,
                 "lines": behaviour["lines"], "registered_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                 "source": source, "details": details}
        with self.locked():
            state = self._read_state()
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
            state["programs"] = state.get("programs", 0) + 1
            incumbent = state["cells"].get(key)
            new_elite = incumbent is None or (score, -len(source)) > (incumbent["score"], -len(incumbent["source"]))
            if new_elite:
                state["cells"][key] = entry
            best = state.get("best")
            new_best = best is None or (score, -len(source)) > (best["score"], -len(best["source"]))
            if new_best:
                state["best"] = entry
            self._write_state(state)
        return {"hash": entry["hash"], "cell": key, "behaviour": behaviour, "new_elite": new_elite,
                "new_best": new_best, "replaced": incumbent["hash"] if new_elite and incumbent else None}

    def history(self) -> list[dict[str, Any]]:
        """Every registered program, oldest first; a torn last line (a crashed writer) is skipped."""
        out = []
        try:
            with open(self.log, encoding="utf-8") as f:
                for line in f:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        continue
        except FileNotFoundError:
            pass
        return out
