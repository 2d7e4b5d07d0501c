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
from types import SimpleNamespace
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


_BARE_POSSESSIVE = re.compile(r"\b([^\W\d_]{3,}[^\W\ds_])s\b")


def spellings(query: str) -> list[str]:
    """The query, and where a word could be a possessive typed without its apostrophe ("Hensels
    lemma"), the query with it ("Hensel's lemma"); "Stokes theorem" keeps its own spelling first."""
    bare = _BARE_POSSESSIVE.sub(r"\1's", query)
    return [query] if bare == query else [query, bare]


def named_keys(bundle: Any, query: str, keys: list[int]) -> list[bool]:
    """For each of ``keys`` (the bundle's documents), whether ``query`` names it (module docstring)."""
    from mathlas.ranking.learned import names_hit

    if not keys:
        return []
    forms = spellings(query.lower())  # "HENSEL'S LEMMA": the possessive is found in lower case
    aliases = bundle.strings("aliases")(keys) if bundle.has_column("aliases") else [None] * len(keys)
    out = []
    for hit, al in zip(bundle.hits(keys), aliases):
        doc = SimpleNamespace(source=hit.source, name=hit.name, heading=hit.heading,
                              aliases=[a for a in (al or "").split(";") if a.strip()])
        out.append(any(names_hit(q, doc) for q in forms))
    return out


class NamedFirst:
    """The ranking stage of the module docstring."""

    name = "named"

    def __call__(self, pool, ctx):
        req = ctx.request
        if len(pool) < 2 or req.mode != "hybrid" or not ctx.plan.bundle_part:
            return pool
        bundle = ctx.bundle
        n = len(bundle)
        if _formal(bundle):
            return pool
        query = ctx.query.text
        if not reads_as_name(query):
            return pool
        rows = [i for i, k in enumerate(pool.keys[:DEPTH].tolist()) if k < n]
        if not rows:
            return pool
        keys = [int(pool.keys[i]) for i in rows]
        members = _members(bundle, keys, getattr(req, "collapse", True))
        flat = sorted({m for ms in members for m in ms})
        named = dict(zip(flat, named_keys(bundle, query, flat)))
        hit_rows = [i for i, ms in zip(rows, members) if any(named[m] for m in ms)]
        if not hit_rows or hit_rows[0] == 0:
            return pool
        j = hit_rows[0]
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
