"""A query that names a theorem puts a statement of that name first.

"Hensel's lemma", "Hensel lemma", "the Stone-Weierstrass theorem": a person who types a result's name
wants the result. The learned stage mostly puts it first, but it reads a Stacks statement's label words
as a name like any other ("hensel" is the label of *complete local rings are henselian*), and BM25 or
the encoder may prefer a longer entry that mentions the name more often. ``NamedFirst`` is the rule
that settles it: when the query reads as a name and the first row is not named by it, the best-ranked
row among the first ``DEPTH`` that is takes first place; the others keep their order behind it.

"Named" is ``mathlas.ranking.learned.names_hit``: the query is the document's name, heading or one of
its aliases, up to case, accents, possessives, hyphens and the words that say what kind of result it
is ("theorem", "lemma"...), or the same with a possessive typed without its apostrophe ("Hensels
lemma"); Stacks' and the HoTT book's names are their labels' words, so there only
aliases count. A row also counts as named when a statement of the same fact (its group,
``mathlas.groups``: the copies shown as "also in") is: Metamath's ``pnt`` answers "prime number
theorem" through its alias, and so does the PlanetMath entry of that name folded under it.

It runs on hybrid answers of informal bundles only (a formal bundle's names are declaration names,
``mathlas.ranking.names.NameMatch``; ``mode="lexical"`` and ``"dense"`` are each channel alone), after
``Collapse`` (so that a copy folded under the first row counts for it) and before the stages that
place rows on purpose. Its place is marked ``named`` (1 on the row it moved). Only short queries are
read (at most ``MAX_WORDS`` words): a statement is not a name.
"""
from __future__ import annotations

import re
import threading
import weakref
from typing import Any

import numpy as np

DEPTH = 20
MAX_WORDS = 8
MAX_COPIES = 8  # of a row's copies, the first (in key order) read for names


def reads_as_name(query: str) -> bool:
    """Whether ``query`` could be a result's name at all (``names_hit``'s own test, done once)."""
    from mathlas.ranking.learned import NAME_NOISE, _POSSESSIVE, core, words

    query = query.lower()
    ws = words(query)
    q = core(ws)
    if not q or len(ws) > MAX_WORDS or "$" in query or "`" in query:
        return False
    return len(q) > 1 or bool(set(ws) & (NAME_NOISE - {"the", "a", "an", "of"})) or bool(_POSSESSIVE.search(query))


_BARE_POSSESSIVE = re.compile(r"\b([^\W\d_]{2,}[^\W\ds_])s\b(?=\s+[^\W\d_])")  # a word before another


def spellings(query: str) -> list[str]:
    """The query, and where a word could be a possessive typed without its apostrophe ("Hensels
    lemma", "itos lemma": a word ending in one s, before another word), the query with it ("Hensel's
    lemma"); "Stokes theorem" keeps its own spelling first, and "Banach spaces" has no other."""
    bare = _BARE_POSSESSIVE.sub(r"\1's", query)
    return [query] if bare == query else [query, bare]


def query_cores(query: str) -> frozenset:
    """The core words (``mathlas.ranking.learned.core``) of the names ``query`` may be, one tuple per
    spelling (``spellings``); empty when it reads as no name. ``names_hit``'s reading of a query, made
    once for every document it is held against."""
    from mathlas.ranking.learned import NAME_NOISE, _POSSESSIVE, core, words

    out = set()
    for q in spellings(query.lower()):  # "HENSEL'S LEMMA": the possessive is found in lower case
        ws = words(q)
        c = core(ws)
        # one word names something only as a result's name: "Zorn's lemma", not "group"
        if c and (len(c) > 1 or set(ws) & (NAME_NOISE - {"the", "a", "an", "of"}) or _POSSESSIVE.search(q)):
            out.add(c)
    return frozenset(out)


# Per bundle, the core words of each document's names (name, heading, aliases) a query was held
# against: a name query's candidates are mostly those of earlier ones. Cleared past DOC_CORES_KEPT.
DOC_CORES_KEPT = 65536
_DOC_CORES: weakref.WeakKeyDictionary[Any, dict[int, frozenset]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def doc_cores(bundle: Any, keys: list[int]) -> list[frozenset]:
    """For each of ``keys``, the core words of its name, heading and aliases (Stacks' and the HoTT
    book's aliases only: their names are their labels' words)."""
    from mathlas.ranking.learned import LABEL_NAMED, core, words

    with _LOCK:
        kept = _DOC_CORES.setdefault(bundle, {})
        missing = sorted({k for k in keys if k not in kept})
    if missing:
        aliases = bundle.strings("aliases")(missing) if bundle.has_column("aliases") else [None] * len(missing)
        made = {}
        for key, hit, al in zip(missing, bundle.hits(missing), aliases):
            names = [hit.name or "", hit.heading or ""] if hit.source not in LABEL_NAMED else []
            names += (al or "").split(";")
            made[key] = frozenset(c for c in (core(words(n)) for n in names if n.strip()) if c)
        with _LOCK:
            if len(kept) + len(made) > DOC_CORES_KEPT:
                kept.clear()
            kept.update(made)
        return [kept.get(k) or made[k] for k in keys]
    with _LOCK:
        return [kept[k] for k in keys]


def named_keys(bundle: Any, query: str, keys: list[int]) -> list[bool]:
    """For each of ``keys`` (the bundle's documents), whether ``query`` names it (module docstring)."""
    cores = query_cores(query)
    if not cores or not keys:
        return [False] * len(keys)
    return [bool(c & cores) for c in doc_cores(bundle, keys)]


class NamedFirst:
    """The ranking stage of the module docstring."""

    name = "named"

    def __call__(self, pool, ctx):
        req = ctx.request
        if len(pool) < 2 or req.mode != "hybrid" or not ctx.plan.bundle_part:
            return pool
        bundle = ctx.bundle
        n = len(bundle)
        query = ctx.query.text
        if len(query) > 200 or _formal(bundle):
            return pool
        cores = query_cores(query) if reads_as_name(query) else frozenset()
        if not cores:
            return pool
        collapse = getattr(req, "collapse", True)
        # the rows in order, each with its copies; the first named one wins (mostly the first row)
        for i, key in enumerate(pool.keys[:DEPTH].tolist()):
            if key >= n:
                continue
            members = _members(bundle, [key], collapse)[0]
            if any(c & cores for c in doc_cores(bundle, members)):
                return pool if i == 0 else self._first(pool, i)
        return pool

    def _first(self, pool, j: int):
        order = np.r_[j, np.arange(j), np.arange(j + 1, len(pool))].astype(np.int64)
        out = pool.take(order)
        scores = out.scores.copy()
        scores[0] = max(float(scores[0]), float(pool.scores[0]))  # the scores stay in order
        marks = np.zeros(len(out), dtype=np.int64)
        marks[0] = 1
        return out.rescored(scores).marked(self.name, marks)


def _formal(bundle: Any) -> bool:
    """A formal bundle: Lean declarations (a ``module`` column, or ids under ``lean:``)."""
    return bundle.has_column("module") or (bundle.strings("id")([0])[0] or "").startswith("lean:")


def _members(bundle: Any, keys: list[int], collapse: bool) -> list[list[int]]:
    """Each key with the other statements of its fact where answers are collapsed (one rank per
    theorem), else the key alone."""
    if not collapse:
        return [[k] for k in keys]
    from mathlas.groups import groups_of

    groups = groups_of(bundle)
    return [[k, *groups.group(k)[:MAX_COPIES]] for k in keys]
