"""identify_sequence: find an integer sequence in the OEIS, offline, from the official bulk files.

The data is the user's copy of ``stripped.gz`` and ``names.gz`` (https://oeis.org), in
``$MATHLAS_OEIS_DIR`` or ``<data_dir()>/oeis/`` (``mathlas data pull oeis`` downloads them). The
first lookup builds a memory-mapped index beside them (``index.py`` describes it) and rebuilds it
when the files change; builds of concurrent processes take turns on a file lock, so one builds and
the others wait and reuse it. Without the files the tool says so and how to get them; it never
invents a match. Importing this package is light: numpy loads with the first lookup.

::

    <oeis dir>/
        stripped.gz  names.gz      the data, as published
        index-v1/                  the index (stamp.json last), rebuilt when the data changes
        .install.lock              held by pulls and index builds (filelock)
        .tmp-*  .old-*             work in progress; cleaned by the next lock holder

When the OEIS directory is not writable the index lives in
``<data_dir()>/oeis-index/<hash of the directory's path>/`` instead.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mathlas.checks import integer
from mathlas.errors import UsageError

if TYPE_CHECKING:
    from .index import OeisIndex

MAX_TERMS = 1000        # a query longer than any OEIS entry is a mistake, not a search
MAX_DIGITS = 1000       # per term; stripped.gz lines hold no term anywhere near this long
MAX_RESULTS = 1000
NOT_AVAILABLE = ("OEIS data not available: run `mathlas data pull oeis` or set MATHLAS_OEIS_DIR to a "
                 "directory holding stripped.gz and names.gz from https://oeis.org")
_INT = re.compile(r"\s*[-+]?\d+\s*")


def oeis_dir() -> Path:
    """Where the OEIS files are read from: ``$MATHLAS_OEIS_DIR``, else ``<data_dir()>/oeis``."""
    env = os.environ.get("MATHLAS_OEIS_DIR")
    if env:
        return Path(env).expanduser()
    from mathlas.paths import data_dir

    return data_dir() / "oeis"


def index_home(data: Path) -> Path:
    """Where the index of ``data`` lives: beside the data, or in the user's data directory when
    the data directory is read-only."""
    if os.access(data, os.W_OK):
        return data
    from mathlas.paths import data_dir

    key = hashlib.sha256(str(data.resolve()).encode()).hexdigest()[:16]
    return data_dir() / "oeis-index" / key


# ------------------------------------------------------------------------------ results

@dataclass
class SequenceMatch:
    """One OEIS sequence holding the (possibly transformed) query contiguously from ``offset``
    (0-based, in the stored terms); ``terms`` are all the terms stored for it."""

    a_number: str
    name: str
    offset: int
    terms: list[int]
    url: str
    transform: str | None = None


@dataclass
class SequenceResult:
    """Matches ranked by A-number (exact matches; else those of the transforms, simplest first)."""

    query: list[int]
    data_available: bool
    matches: list[SequenceMatch]
    transform: str | None
    message: str
    more: bool = False
    transforms_tried: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------ open / build

_lock = threading.Lock()
_open: dict[str, tuple[tuple, OeisIndex]] = {}


def open_index(data: Path | None = None, *, quiet: bool = False) -> OeisIndex:
    """The index of the OEIS files in ``data`` (default ``oeis_dir()``), built first if missing or
    stale. Shared by every call of this process; reopened when the files change."""
    from mathlas.releases.staging import TMP_PREFIX, data_lock, replace_dir, talk

    from . import index as ix

    data = data or oeis_dir()
    key = str(data.resolve())
    sig = ix.data_signature(data)
    with _lock:
        cached = _open.get(key)
        if cached is not None and cached[0] == sig:
            return cached[1]
        home = index_home(data)
        target = home / ix.INDEX_DIR
        if not ix.stamp_matches(target, data):
            with data_lock(home, quiet=quiet):
                if not ix.stamp_matches(target, data):  # another process may have built it meanwhile
                    staged = ix.staging_dir(home, TMP_PREFIX)
                    try:
                        ix.build(data, staged, talk=lambda m: talk(m, quiet))
                        replace_dir(staged, target)
                    finally:
                        if staged.exists():
                            import shutil
                            shutil.rmtree(staged, ignore_errors=True)
        idx = ix.OeisIndex(target)
        _open[key] = (ix.data_signature(data), idx)
        return idx


# ------------------------------------------------------------------------------ input

def _parse_terms(terms: Any) -> list[int]:
    if isinstance(terms, str):
        terms = [t for t in re.split(r"[\s,;]+", terms.strip()) if t]
    if not isinstance(terms, (list, tuple)):
        raise UsageError(f"terms must be a list of integers, e.g. [1, 1, 2, 3, 5, 8], got {type(terms).__name__}")
    if len(terms) < 2:
        raise UsageError(f"give at least 2 terms (got {len(terms)}); one number matches too many sequences")
    if len(terms) > MAX_TERMS:
        raise UsageError(f"give at most {MAX_TERMS} terms (got {len(terms)})")
    out: list[int] = []
    for i, t in enumerate(terms, start=1):  # counted as people count them: the first term is term 1
        which = f"term {i} of {len(terms)}"
        if isinstance(t, bool) or not isinstance(t, (int, str)) or isinstance(t, str) and not _INT.fullmatch(t):
            raise UsageError(f"{which} is {t!r}: terms must be integers (or decimal integer strings)")
        if isinstance(t, str) and len(t.strip().lstrip("+-")) > MAX_DIGITS:
            raise UsageError(f"{which} has more than {MAX_DIGITS} digits")
        v = int(t)
        if v.bit_length() > 3322:  # about MAX_DIGITS decimal digits
            raise UsageError(f"{which} has more than {MAX_DIGITS} digits")
        out.append(v)
    return out


def _parse_max_results(max_results: Any) -> int:
    return integer(max_results, "max_results", 1, MAX_RESULTS)


# ------------------------------------------------------------------------------ transforms

def transformed_queries(q: list[int]) -> list[tuple[str, list[int]]]:
    """The transformed queries tried when the exact lookup finds nothing, simplest first.

    Each is (name, terms to look up); a match means the OEIS sequence holds those terms. Sign:
    ``negate``, ``alternate signs`` (multiply term i by (-1)^i), ``alternate signs from -``;
    factor: ``divide by g`` (g = gcd of the terms); shift: ``subtract c`` / ``add c`` for the two
    shifts that move the least term to 0 and to 1 (where most OEIS entries start), then c = ±1, ±2;
    ``first differences`` (the query is the partial sums of an entry) and ``partial sums`` (the
    query is the differences of an entry). Transforms that leave fewer than 2 terms, all zeros or
    the query itself are skipped: they would only match trivially.
    """
    out: list[tuple[str, list[int]]] = []
    out.append(("negate", [-t for t in q]))
    alt = [t if i % 2 == 0 else -t for i, t in enumerate(q)]
    out.append(("alternate signs", alt))
    out.append(("alternate signs from -", [-t for t in alt]))
    g = math.gcd(*q)
    if g > 1:
        out.append((f"divide by {g}", [t // g for t in q]))
        out.append((f"divide by -{g}", [-(t // g) for t in q]))
    lo = min(q)
    for c in dict.fromkeys([lo, lo - 1, 1, -1, 2, -2]):
        if c:
            out.append((f"subtract {c}" if c > 0 else f"add {-c}", [t - c for t in q]))
    out.append(("first differences", [b - a for a, b in zip(q, q[1:])]))
    sums, s = [], 0
    for t in q:
        s += t
        sums.append(s)
    out.append(("partial sums", sums))
    seen = {tuple(q)}
    kept = []
    for name, terms in out:
        key = tuple(terms)
        if len(terms) < 2 or key in seen or not any(terms):
            continue
        seen.add(key)
        kept.append((name, terms))
    return kept


# ------------------------------------------------------------------------------ the tool

def _match(idx: OeisIndex, seq: int, offset: int, transform: str | None) -> SequenceMatch:
    from .index import to_ints

    a = f"A{int(idx.anum[seq]):06d}"
    terms = to_ints(idx.terms(seq)) or []
    return SequenceMatch(a_number=a, name=idx.name(seq), offset=offset, terms=terms,
                         url=f"https://oeis.org/{a}", transform=transform)


def identify_sequence(terms: list[int | str], max_results: int = 10, transforms: bool = True) -> SequenceResult:
    """OEIS sequences containing the given terms contiguously, from your local copy of the OEIS files
    (no files: data_available is false, with how to get them).

    Args:
        terms: strings for huge values.
        max_results: most matches returned.
        transforms: when nothing matches exactly, try signs, gcd, shift, differences, sums.
    """
    q = _parse_terms(terms)
    limit = _parse_max_results(max_results)
    if not isinstance(transforms, bool):
        raise UsageError(f"transforms must be true or false, got {transforms!r}")
    data = oeis_dir()
    if not (data / "stripped.gz").is_file():
        return SequenceResult(query=q, data_available=False, matches=[], transform=None,
                              message=f"{NOT_AVAILABLE} (looked in {data})")
    idx = open_index(data)
    hits, more = idx.find(q, limit)
    if hits:
        matches = [_match(idx, h.seq, h.offset, None) for h in hits]
        n = f"{len(matches)}{'+' if more else ''}"
        return SequenceResult(query=q, data_available=True, matches=matches, transform=None, more=more,
                              message=f"{n} OEIS sequence(s) contain these terms"
                                      + ("; more exist: raise max_results" if more else ""))
    if not transforms:
        return SequenceResult(query=q, data_available=True, matches=[], transform=None,
                              message=f"no OEIS sequence contains these terms ({len(idx):,} searched)")
    matches: list[SequenceMatch] = []
    tried: list[str] = []
    seen: set[str] = set()
    for name, tq in transformed_queries(q):
        tried.append(name)
        room = limit - len(matches)
        if room <= 0:
            more = True
            break
        found, extra = idx.find(tq, room + len(seen))
        fresh = [h for h in found if f"A{int(idx.anum[h.seq]):06d}" not in seen]
        more = more or extra or len(fresh) > room
        for h in fresh[:room]:
            m = _match(idx, h.seq, h.offset, name)
            seen.add(m.a_number)
            matches.append(m)
    if not matches:
        return SequenceResult(query=q, data_available=True, matches=[], transform=None, transforms_tried=tried,
                              message=f"no OEIS sequence contains these terms, nor any transform of them "
                                      f"({', '.join(tried)}; {len(idx):,} sequences searched)")
    first = matches[0].transform
    used = list(dict.fromkeys(m.transform for m in matches))
    return SequenceResult(query=q, data_available=True, matches=matches, transform=first, more=more,
                          transforms_tried=tried,
                          message=f"no exact match; found after transforming the terms ({'; '.join(used)}): "
                                  "each match's transform says what was applied to your terms")


__all__ = ["identify_sequence", "SequenceResult", "SequenceMatch", "oeis_dir", "open_index"]
