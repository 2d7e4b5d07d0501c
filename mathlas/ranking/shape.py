"""A query that is a Lean statement finds the declarations that state it.

``a + b = b + a`` asks for ``add_comm``; ``‖x + y‖ ≤ ‖x‖ + ‖y‖`` for ``norm_add_le``;
``∑ i in range (n+1), f i = ∑ i in range n, f i + f n`` for ``Finset.sum_range_succ``. Words cannot
find these (BM25 drops the symbols, and the encoder reads a formula as noise), and a Lean user types
them as often as names. This module reads each declaration's signature (the ``signature`` column of a
formal bundle) as tokens and keeps a **shape** of its statement: the tokens with the bound variables
renamed by first appearance (``#1 + #2 = #2 + #1``), namespaces dropped from constants
(``Finset.range`` -> ``range``), ASCII spellings folded (``<=`` -> ``≤``, ``in`` -> ``∈``, ``=>`` ->
``↦``), coercion arrows and type ascriptions dropped (``(n : ℝ)`` -> ``n``, ``fun x : 𝕜 ↦`` -> ``fun x ↦``),
binders' types left out, and notations read as the functions they stand for (``√x``, ``#s``, ``n !``,
``(p * q).degree``: ``notations``). A query is read the same way, and a declaration whose shape
equals the query's is what it asks for, up to the names of its variables.

Each declaration has up to three shapes (``statement_shapes``):

- ``S``: its statement, the type after the binders, with a leading ``∀ x y : G,`` taken off;
- ``A``: the same with its hypotheses as arrows (``(hp : p.Prime) : 2 ≤ p`` -> ``p.Prime → 2 ≤ p``:
  a binder whose name starts with ``h`` is read as a hypothesis, and so is an explicit binder whose
  name the statement never uses, ``(pp : p.Prime)``);
- ``C``: the conclusion alone, after the statement's last top-level ``→`` (where it has one);

each with its parentheses and without those a person leaves out (``redundant_parens``: around a
whole side, one token, or a big operator's term, ``(∑ x ∈ range n, f x) + f n``; never those that
group an operation inside another, so ``a ^ (m * n)`` is not ``a ^ m * n``). A query matches through its shape as typed, and with the sides of a top-level ``=``,
``↔`` or ``≠`` swapped, or ``≥`` / ``>`` read as ``≤`` / ``<``, or a function applied by its full
name with its receiver first, as its dot notation reads (``Polynomial.eval x (p + q)`` as ``(p +
q).eval x``: ``ShapeIndex.receivers``, read from the functions' own signatures); and, looser still, with the operands
of ``+``, ``*``, ``∧``, ``∨``, ``∩``, ``∪``, ``⊓``, ``⊔`` in one order (``lean_text.commuted``: ``exp x ≥ 1
+ x`` finds ``x + 1 ≤ Real.exp x``; kept as a third shape of each kind where it differs). ``ShapeMatch``
(a ranking stage) puts the matching declarations first: those whose statement it is before those whose
conclusion it is, with parentheses before without, those through the operands' order after all of
them (and only where they leave the total within ``MAX_SHARED``), each with the declarations that ask fewest hypotheses first, then
those in a namespace the query names (``Nat.gcd``), the most used first (PageRank). A shape that more
than ``MAX_SHARED`` declarations share (``a = b``) says too little and places nothing.

The index is built once per bundle (about 41 s for Mathlib's 288k declarations on one core of this
project's machine), kept in memory (sorted 64-bit hashes of the shapes beside their rows, 17 bytes a
shape, and one byte a declaration for its hypotheses) and in the data directory's cache, where the
next process reads it back.
"""
from __future__ import annotations

import hashlib
import re
import threading
import weakref
import zipfile
from typing import Any

import numpy as np

from mathlas.ranking.lean_text import (CAST, HYPOTHESIS, OPEN, OPERATORS, RELATIONS, SHORT, binder_names, bound,
                                       bound_renamed, canonical, commuted, grouped, instance_conditions, is_name,
                                       receiver_position, redundant_parens, split_binders, strip_forall, tokens,
                                       top_level)

Bundle = Any

MAX_SHARED = 200      # a shape this many declarations share places nothing (it says too little)
TOP_SLOTS = 10        # at most this many declarations placed first
MIN_TOKENS = 3        # a query's shape needs this many tokens and a relation or an operator
MAX_QUERY_CHARS = 600
STRONG_TOKENS = 5     # a statement found by its shape is an exact answer (``shape_first``) from this many tokens

_SEP = "\x1f"
_MODIFIERS = re.compile(r"^(?:@\[[^\]]*\]\s*)*(?:(?:private|protected|noncomputable|nonrec)\s+)*")
MIN_TERM_TOKENS = 5  # a query with an operator but no relation (UniqueDiffOn 𝕜 (s ∩ t)) needs this many tokens
MAX_WORDS = 1  # a query with more words that no statement uses as a constant is prose, not a statement


def shape(toks: list[str], variable, parens: bool = True, commute: bool = False) -> str:
    """The shape of a token list: variables (``variable(token)``) renamed ``#1, #2, …`` by first
    appearance (dot notation read as the application it is: ``p.Prime`` -> ``Prime #1``), constants by their
    last component (``Finset.range`` -> ``range``); with the parentheses Lean's grammar needs
    (``redundant_parens``: those it makes redundant left out, so ``(a * b) * c`` is ``a * b * c``), or
    with none when ``parens`` is False (a looser match: ``a ^ (m * n)`` and ``a ^ m * n`` look alike; nor the
    casts of terms, ``cast (m + n)``, which a person may leave out); with ``commute``, the operands of
    ``+``, ``*``, ``∧``… in one order (``lean_text.commuted``: ``1 + x`` is ``x + 1``, another looser match)."""
    names: dict[str, str] = {}
    out = []
    toks = bound_renamed(toks)
    if commute:
        toks = commuted(redundant_parens(toks), variable)
    for t in (redundant_parens(toks) if parens else [t for t in toks if t not in ("(", ")", CAST)]):
        if is_name(t):
            head, _, rest = t.partition(".")
            if variable(head):
                v = names.setdefault(head, f"#{len(names) + 1}")
                if rest and "." not in rest:  # dot notation: p.Prime is Prime p
                    out += [rest, v]
                    continue
                t = v + ("." + rest if rest else "")
            else:
                t = t.rsplit(".", 1)[-1]
        out.append(t)
    return " ".join(out)


def _hash(kind: str, s: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"{kind}{_SEP}{s}".encode(), digest_size=8).digest(), "little")


def _variable_in(names: set[str]):
    """Whether a name's head is a variable: bound (``names``), one letter, or a hypothesis' name."""
    return lambda head: head in names or bool(SHORT.fullmatch(head) or HYPOTHESIS.fullmatch(head))


def statement_shapes(signature: str) -> tuple[list[tuple[str, str]], set[str], int, int]:
    """A declaration's shapes, ``[(kind, shape), …]`` (``S``, ``A``, ``C``, each with and without
    the parentheses a person leaves out; module docstring), the constants its statement names (last
    components), how many hypotheses it has (binders read as hypotheses, and arrows) and how many
    conditions it asks as instances (``[CharP R 2]``), which no typed statement shows."""
    return _statement_shapes(tokens(signature))


def _statement_shapes(toks: list[str]) -> tuple[list[tuple[str, str]], set[str], int, int]:
    binders, stmt = split_binders(toks)
    if not stmt:
        return [], set(), 0, 0
    names, hyps = bound(binders, stmt)
    stmt = strip_forall(stmt, names)
    names |= binder_names(stmt)
    stmt = canonical(stmt)
    hyps = [canonical(h) for h in hyps]

    variable = _variable_in(names)
    out = []
    arrows = top_level(stmt, {"→"})
    parts = [("S", stmt)]
    if hyps:  # as a person types them: (∀ x, x ∈ s ↔ x ∈ t) → s = t
        parts.append(("A", [t for h in hyps for t in (*grouped(h), "→")] + stmt))
    if arrows:
        parts.append(("C", stmt[arrows[-1] + 1:]))
    for kind, part in parts:
        for parens in (True, False):
            out.append((kind + ("" if parens else "-"), shape(part, variable, parens)))
        either = shape(part, variable, commute=True)
        if either != out[-2][1]:   # kept only where it differs: ``rows_with_either`` looks in both
            out.append((kind + "~", either))
    constants = {t.rsplit(".", 1)[-1] for t in stmt if is_name(t) and not variable(t.partition(".")[0])}
    return out, constants, len(hyps) + len(arrows), instance_conditions(binders)


def query_shapes(query: str, constants, receivers=None) -> list[tuple[int, str]]:
    """The shapes a query is looked up by, ``[(tier, shape), …]``: tier 0 as typed with parentheses,
    1 without, 2 with the operands of ``+``, ``*``, ``∧``… in one order (``lean_text.commuted``), each
    also with a top-level ``=`` / ``↔`` / ``≠`` swapped or ``≥`` / ``>`` turned round;
    empty when the query is not a statement (no relation or operator, too few tokens, too long)."""
    if len(query) > MAX_QUERY_CHARS:
        return []
    # a pasted declaration: its attributes and modifiers, and its proof after ":=", are not the statement
    text = _MODIFIERS.sub("", query.strip().strip("`$")).split(":=", 1)[0]
    out = _query_shapes(tokens(text), constants)
    if receivers and out:   # a function applied by its full name: also as its dot notation reads
        read = tokens(text, receivers.get)
        if read != tokens(text):
            out += [x for x in _query_shapes(read, constants) if x not in out]
            out.sort(key=lambda x: x[0])
    return out


def _query_shapes(toks: list[str], constants) -> list[tuple[int, str]]:
    if toks[:1] in (["theorem"], ["lemma"], ["example"]):
        toks = toks[2:] if toks[:1] != ["example"] else toks[1:]
    names: set[str] = set()
    hyps: list[list[str]] = []
    if toks and toks[0] in OPEN:   # a pasted signature: its binders (hypotheses among them) then ``:``
        binders, stmt = split_binders(toks)
        if stmt:
            bound_names, hyps = bound(binders, stmt)
            names |= bound_names
            toks = stmt
    if toks[:1] == [":"]:
        toks = toks[1:]
    toks = strip_forall(toks, names)
    if hyps:   # as the declaration's own shape with its hypotheses as arrows
        toks = [t for h in hyps for t in (*grouped(canonical(h)), "→")] + toks
    names |= binder_names(toks)
    if len(toks) < MIN_TOKENS or not any(t in OPERATORS for t in toks):
        return []

    known = _variable_in(names)

    # a name the bundle never uses as a constant is a variable (xs): but words no statement uses
    # ("offside", "soccer") make the query prose; a dotted name (Nat.Prime) is a constant's
    # (the types of ascriptions and binders, which canonical leaves out, are not words: ((a + b : ℕ) : ℝ))
    unknown = {t for t in canonical(toks) if is_name(t) and "." not in t and not known(t) and t not in constants}
    if len(unknown) > MAX_WORDS:
        return []
    if RELATIONS.isdisjoint(toks) and "→" not in toks and (unknown or len(toks) < MIN_TERM_TOKENS):
        return []  # "π-system" is a word: a term without a relation needs more, all of it known

    def variable(head: str) -> bool:
        return known(head) or head in unknown

    toks = canonical(toks)
    variants = [toks]
    arrows = top_level(toks, {"→"})
    start = arrows[-1] + 1 if arrows else 0
    last = toks[start:]
    rel = top_level(last, RELATIONS)
    if len(rel) == 1 and last[rel[0]] in ("=", "↔", "≠"):  # a = b asked as b = a
        i = rel[0]
        variants.append(toks[:start] + last[i + 1:] + [last[i]] + last[:i])
    out: list[tuple[int, str]] = []
    for tier, parens in ((0, True), (1, False)):
        for v in variants:
            s = shape(v, variable, parens)
            if (tier, s) not in out:
                out.append((tier, s))
    for v in variants:   # tier 2: the operands of + * ∧ … in either order
        s = shape(v, variable, commute=True)
        if (2, s) not in out:
            out.append((2, s))
    return out


class ShapeIndex:
    """Every declaration's shapes (``statement_shapes``) as sorted 64-bit hashes beside their rows
    and kinds, each row's number of hypotheses (``hyps``: of two declarations that state the same, the
    one that asks less comes first), the constants the statements name (to tell a query's
    variables from constants), and, given the declarations' names and kinds, the functions whose
    dot notation's receiver is not their first explicit argument (``receivers``)."""

    KINDS = ("S", "A", "C", "S-", "A-", "C-", "S~", "A~", "C~")

    def __init__(self, signatures=(), names=(), kinds=()):
        hashes: list[int] = []
        rows: list[int] = []
        kinds_of: list[int] = []
        constants: set[str] = set()
        code = {k: i for i, k in enumerate(self.KINDS)}
        signatures = list(signatures)
        self.receivers = receivers(signatures, names, kinds)
        self.hyps = np.zeros(len(signatures), dtype=np.uint8)
        self.conditions = np.zeros(len(signatures), dtype=np.uint8)
        for row, sig in enumerate(signatures):
            if not sig:
                continue
            got, names_used, n_hyps, n_conditions = statement_shapes(sig)
            self.hyps[row] = min(n_hyps, 255)
            self.conditions[row] = min(n_conditions, 255)
            constants |= names_used
            for kind, s in got:
                hashes.append(_hash(kind.rstrip("-"), s))
                rows.append(row)
                kinds_of.append(code[kind])
        h = np.asarray(hashes, dtype=np.uint64)
        order = np.argsort(h, kind="stable")
        self.hashes = h[order]
        self.rows = np.asarray(rows, dtype=np.int64)[order]
        self.kinds = np.asarray(kinds_of, dtype=np.int8)[order]
        self.constants = frozenset(constants)

    _KEPT: weakref.WeakKeyDictionary[Any, ShapeIndex] = weakref.WeakKeyDictionary()
    _LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
    _LOCK = threading.Lock()   # guards _LOCKS only: a bundle's index is built under its own lock

    @classmethod
    def of(cls, bundle: Bundle) -> ShapeIndex | None:
        """The bundle's index, built on first use and kept while the bundle lives; None for a bundle
        without signatures (an informal bundle)."""
        if not bundle.has_column("signature"):
            return None
        got = cls._KEPT.get(bundle)
        if got is not None:
            return got
        with cls._LOCK:
            lock = cls._LOCKS.setdefault(bundle, threading.Lock())
        with lock:   # another bundle's build does not hold this one's queries
            got = cls._KEPT.get(bundle)
            if got is None:
                path = _cache_file(bundle)
                got = cls.load(path) if path is not None else None
                if got is None:
                    import logging
                    import time

                    log = logging.getLogger(__name__)
                    started = time.monotonic()
                    log.info("reading the statements of %s for search by statement (once; kept for the next "
                             "search)", bundle.label)
                    ids = [(i or "").removeprefix("lean:") for i in bundle.table.column("id").to_pylist()]
                    kinds = bundle.table.column("kind").to_pylist() if bundle.has_column("kind") else ()
                    got = cls(bundle.table.column("signature").to_pylist(), ids, kinds)
                    if path is not None:
                        got.save(path)
                    log.info("%s: %s statement shapes in %.1f s", bundle.label, f"{len(got.hashes):,}",
                             time.monotonic() - started)
                cls._KEPT[bundle] = got
            return got

    def save(self, path) -> None:
        """The index as a cache file (``mathlas.paths.save_cache``: written atomically; a read-only
        data directory leaves none)."""
        import io

        from mathlas.paths import save_cache

        words = "\n".join(sorted(self.constants)).encode("utf-8")
        receivers = "\n".join(f"{k}\t{v}" for k, v in sorted(self.receivers.items())).encode("utf-8")
        buf = io.BytesIO()
        np.savez(buf, hashes=self.hashes, rows=self.rows, kinds=self.kinds, hyps=self.hyps, conditions=self.conditions,
                 constants=np.frombuffer(words, dtype=np.uint8), count=np.asarray([len(self.hashes)]),
                 receivers=np.frombuffer(receivers, dtype=np.uint8))
        save_cache(path, buf.getvalue())

    @classmethod
    def load(cls, path) -> ShapeIndex | None:
        """The index kept in ``path`` by ``save``; None when there is none or it does not read whole."""
        try:
            with np.load(path, allow_pickle=False) as z:
                hashes, rows, kinds, hyps, conditions = z["hashes"], z["rows"], z["kinds"], z["hyps"], z["conditions"]
                words = z["constants"].tobytes().decode("utf-8")
                count = int(z["count"][0])
                receivers = z["receivers"].tobytes().decode("utf-8")
        except (OSError, ValueError, KeyError, UnicodeDecodeError, IndexError, zipfile.BadZipFile, EOFError):
            return None
        if not len(hashes) == len(rows) == len(kinds) == count or hashes.dtype != np.uint64:
            return None
        index = cls()
        index.hashes, index.rows, index.kinds, index.hyps, index.conditions = (hashes, rows.astype(np.int64), kinds,
                                                                             hyps, conditions)
        index.constants = frozenset(words.split("\n")) if words else frozenset()
        index.receivers = {k: int(v) for k, _, v in (line.partition("\t") for line in receivers.split("\n") if line)}
        return index

    def rows_with(self, kind: str, shape: str) -> np.ndarray:
        """The rows whose shape of ``kind`` (``KINDS``: ``"S"``, ``"A-"``…) is ``shape``."""
        h = np.uint64(_hash(kind.rstrip("-"), shape))
        lo, hi = np.searchsorted(self.hashes, h, "left"), np.searchsorted(self.hashes, h, "right")
        return self.rows[lo:hi][self.kinds[lo:hi] == self.KINDS.index(kind)]

    def rows_with_either(self, kind: str, shape: str) -> np.ndarray:
        """The rows whose shape of ``kind`` (``"S"``, ``"A"``, ``"C"``) with the operands of ``+ * ∧ …``
        in one order is ``shape``: kept as ``kind~`` where it differs from the shape with parentheses."""
        return np.concatenate([self.rows_with(kind + "~", shape), self.rows_with(kind, shape)])

    def find(self, query: str) -> list[list[int]]:
        """The declarations whose shapes match the query, in tiers, best first: the query's statement
        as a declaration's statement (with hypotheses as arrows or not), then as its conclusion;
        each tier with parentheses before without; then the same with the operands of ``+ * ∧ …``
        in either order, where the others leave room (``MAX_SHARED``). A row is in its best tier only."""
        shapes = query_shapes(query, self.constants, self.receivers)
        if not shapes:
            return []
        tiers: list[list[int]] = [[] for _ in range(6)]
        seen: set[int] = set()
        found, either = [], []
        for tier, s in shapes:
            for kind in ("S", "A", "C"):
                if tier == 2:
                    either.append((4 + (kind == "C"), self.rows_with_either(kind, s)))
                else:
                    found.append(((0 if kind != "C" else 2) + tier, self.rows_with(kind + ("-" if tier else ""), s)))
        total = len({int(r) for _, rows in found for r in rows})
        if total > MAX_SHARED:
            return []
        if len({int(r) for _, rows in found + either for r in rows}) <= MAX_SHARED:
            found += either
        elif total == 0:
            return []
        for t, rows in sorted(found, key=lambda x: x[0]):
            for r in rows.tolist():
                if r not in seen:
                    seen.add(r)
                    tiers[t].append(r)
        return [t for t in tiers if t]


_FUNCTION_KINDS = frozenset({"def", "definition", "abbrev"})


def receivers(signatures: list, names: list[str], kinds) -> dict[str, int]:
    """The functions (``def``, ``abbrev``) whose dot notation puts its receiver elsewhere than their
    first explicit argument, by full name: ``{"Polynomial.eval": 1, …}`` (``lean_text.receiver_position``)."""
    out = {}
    for name, kind, sig in zip(names, kinds, signatures):
        if sig and kind in _FUNCTION_KINDS and "." in name:
            at = receiver_position(name, sig)
            if at:
                out[name] = at
    return out


CACHE_KIND = "shapes"   # under the data directory's cache/: each formal bundle's shape index


def _cache_file(bundle: Bundle):
    """Where a bundle's shape index is kept between processes (``mathlas.paths.bundle_cache_file``:
    named by the bundle, its table's checksums and the source of this module and of the token
    reading it uses, ``mathlas.ranking.lean_text``)."""
    import sys

    from mathlas.bundle import META, META_ARROW
    from mathlas.paths import bundle_cache_file

    reader = sys.modules[tokens.__module__].__file__   # mathlas.ranking.lean_text, loaded with this module
    return bundle_cache_file(CACHE_KIND, bundle, (META, META_ARROW), [__file__, reader], ".npz")


class ShapeMatch:
    """A ranking stage (``mathlas.ranking.stages``): a query that is a Lean statement puts the
    declarations that state it first (``ShapeIndex.find``: the statement's own before those whose
    conclusion it is; within each, those with fewest hypotheses first, then those in a namespace the
    query names, each the most used first by the ``pagerank`` column, else in key order; deprecated
    ones last), up to ``TOP_SLOTS``; the rest of the pool follows unchanged. Each placed row is marked
    ``shape`` with its place. Only documents the request's filters and weights allow are placed;
    nothing is placed on a bundle without signatures, for a query that is not a statement, or when
    more than ``MAX_SHARED`` declarations share its shape."""

    name = "shape"

    def __call__(self, pool, ctx):
        plan = ctx.plan
        if not plan.bundle_part or not ctx.bundle.has_column("signature"):
            return pool   # an informal bundle: no statement to read, and the query need not be read either
        index = ShapeIndex.of(ctx.bundle) if may_be_statement(ctx.request.query) else None
        if index is None:
            return pool
        tiers = index.find(ctx.request.query)
        if not tiers:
            return pool
        from mathlas.ranking.names import by_pagerank

        spaces = query_namespaces(ctx.request.query)
        placed: list[int] = []
        for tier in tiers:
            ok = plan.allowed(np.asarray(tier, dtype=np.int64)).tolist()
            allowed = [k for k, good in zip(tier, ok) if good]
            # those that ask fewest hypotheses first, then those in a namespace the query names
            # (Nat.gcd) before others, each the most used first (PageRank: mul_assoc before
            # IsMulCentral.left_assoc, which the ranking put first)
            ordered = by_pagerank(ctx.bundle, allowed)
            outside = _outside(ctx.bundle, ordered, spaces)
            fields = _fields(ctx.bundle, ordered)
            ordered = sorted(ordered, key=lambda k: (int(index.hyps[k]) if k < len(index.hyps) else 0,
                                                     k in fields, k in outside))
            placed += _deprecated_last(ctx.bundle, ordered)
            if ctx.request.collapse:   # one rank per fact: an alias Collapse folded is not placed again
                placed = _one_per_group(ctx.bundle, placed)
            if len(placed) >= TOP_SLOTS:
                break
        if not placed:
            return pool
        return pool.placed_first(placed[:TOP_SLOTS], self.name)


def _fields(bundle: Bundle, keys: list[int]) -> set[int]:
    """Those of ``keys`` that are a structure's or class's fields (``InvOneClass.inv_one``, the axiom a
    class states): the lemma that restates it for every instance (``inv_one``) comes before it."""
    if not keys or not bundle.has_column("kind"):
        return set()
    return {k for k, kind in zip(keys, bundle.strings("kind")(keys)) if kind == "field"}


def _one_per_group(bundle: Bundle, keys: list[int]) -> list[int]:
    """``keys`` without those whose group (``mathlas.groups``: an alias and its target, a generated
    twin…) already has an earlier key among them."""
    from mathlas.groups import groups_of

    groups = groups_of(bundle)
    seen: set[int] = set()
    out = []
    for k in keys:
        if k in seen:
            continue
        out.append(k)
        seen.add(k)
        seen.update(groups.group(k))
    return out


def query_namespaces(query: str) -> set[str]:
    """The namespaces a query's qualified constants name (``Nat.gcd a b`` -> ``{"Nat"}``,
    ``Finset.card (Finset.range n)`` -> ``{"Finset"}``); a variable's dot notation (``p.Prime``) names none."""
    out = set()
    for t in tokens(query):
        head, dot, rest = t.rpartition(".")
        if dot and head and is_name(head) and head[:1].isupper() and not SHORT.fullmatch(head.partition(".")[0]):
            out.add(head)
    return out


def _outside(bundle: Bundle, keys: list[int], spaces: set[str]) -> set[int]:
    """Those of ``keys`` whose declaration stands in a namespace that is none of ``spaces`` (none when
    the query names no namespace): for ``Nat.gcd a b * Nat.lcm a b = a * b``, ``PNat.gcd_mul_lcm`` is
    outside, ``gcd_mul_lcm`` (the root namespace) and ``Nat.…`` are not."""
    if not spaces or not keys:
        return set()
    ids = bundle.strings("id")(keys)
    out = set()
    for k, i in zip(keys, ids):
        name = (i or "").removeprefix("lean:")
        space = name.rpartition(".")[0]
        if space and not any(space == ns or space.startswith(ns + ".") for ns in spaces):
            out.add(k)
    return out


def _deprecated_last(bundle: Bundle, keys: list[int]) -> list[int]:
    """``keys`` with the deprecated declarations (the ``deprecated`` column) after the others, each
    part in its order: a deprecated name states what its replacement states."""
    if len(keys) < 2 or not bundle.has_column("deprecated"):
        return keys
    old = bundle.strings("deprecated")(keys)
    return [k for k, d in zip(keys, old) if not d] + [k for k, d in zip(keys, old) if d]


def is_statement(bundle: Bundle, query: str) -> bool:
    """Whether ``query`` reads as a Lean statement on ``bundle`` (``query_shapes``): then only its
    shape makes an answer ``strong`` (``shape_first``), not words and meaning agreeing on a declaration
    (``n ! > 0`` is not the definition ``Nat.factorial``)."""
    index = ShapeIndex.of(bundle) if may_be_statement(query) else None
    return index is not None and bool(query_shapes(query, index.constants, index.receivers))


def may_be_statement(query: str) -> bool:
    """Whether ``query`` could read as a statement at all (a relation or an operator, ``MIN_TOKENS``
    tokens, not too long), known without the index: words and names never make a bundle read its
    statements (on Mathlib, some 41 s and 14 MB the first time)."""
    if not query or len(query) > MAX_QUERY_CHARS:
        return False
    toks = tokens(query)
    return len(toks) >= MIN_TOKENS and not OPERATORS.isdisjoint(toks)


def shape_first(bundle: Bundle, query: str, key: int) -> bool:
    """Whether the document ``key`` states ``query`` (its statement's shape is the query's, with the
    parentheses Lean needs: ``ShapeIndex.find``'s first tier; never through the match without any,
    where ``a ^ (m * n)`` and ``a ^ m * n`` look alike): an answer found by its statement, not a guess."""
    index = ShapeIndex.of(bundle)
    spaces = query_namespaces(query)
    if index is None or len(spaces) == 1 and _outside(bundle, [key], spaces):
        return False    # a statement about Nat.gcd alone is not answered by PNat's
    for tier, s in query_shapes(query, index.constants, index.receivers):
        if tier or len(s.split()) < STRONG_TOKENS:  # "2 ≤ p": a statement, but one that says little
            continue
        # its statement as asked (one that asks a condition as an instance states something else:
        # CharTwo.add_sq for (a + b) ^ 2 = a ^ 2 + b ^ 2; a hypothesis the query leaves out, b ≠ 0 for
        # a / b * b = a, is what people leave out), or its statement with its hypotheses as arrows
        if key in index.rows_with("S", s).tolist() and not (key < len(index.conditions) and index.conditions[key]):
            return True
        if key in index.rows_with("A", s).tolist():
            return True
    return False
