"""A query that names a theorem puts a statement of that name first.

"Hensel's lemma", "Hensel lemma", "the Stone-Weierstrass theorem": a person who types a result's name
wants the result. The learned stage mostly puts it first, but it reads a Stacks statement's label words
as a name like any other ("hensel" is the label of *complete local rings are henselian*), and BM25 or
the encoder may prefer a longer entry that mentions the name more often. ``NamedFirst`` is the rule
that settles it: when the query reads as a name and the first row is not named by it, the best-ranked
row among the first ``DEPTH`` that is takes first place; the others keep their order behind it.

"Named" (``query_cores`` against ``name_cores``): the query is the document's name, heading or one of
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
read (at most ``MAX_WORDS`` words): a statement is not a name. A single word ("group") is named only by
a definition of that name (``defined_word``): it asks what the word means, not for "topological group".
"""
from __future__ import annotations

import itertools
import re
import threading
import weakref
from typing import Any

import numpy as np

from mathlas.ranking.learned import _POSSESSIVE, LABEL_NAMED, NAME_NOISE, core, words
from mathlas.ranking.text import singular

DEPTH = 20
MAX_WORDS = 8
MAX_COPIES = 8  # of a row's copies, the first (in key order) read for names


_KIND = NAME_NOISE - {"the", "a", "an", "of"}  # the words that say what kind of result a name is


def _core(query: str) -> tuple[str, ...] | None:
    """The core words of ``query`` (``mathlas.ranking.learned.core``) when it could be a result's name:
    one word names something only with a kind word or a possessive ("Zorn's lemma", not "group")."""
    query = query.lower()  # "HENSEL'S LEMMA": the possessive is found in lower case
    ws = words(query)
    c = core(ws)
    if c and (len(c) > 1 or set(ws) & _KIND or _POSSESSIVE.search(query)):
        return c
    return None


def name_core(query: str) -> tuple[str, ...] | None:
    """``query``'s core words when it reads as a short name (at most ``MAX_WORDS`` words, no formula
    or code), else None."""
    if "$" in query or "`" in query or len(words(query)) > MAX_WORDS:
        return None
    return _core(query)


DEFINITION_KINDS = frozenset({"definition"})
_ONE_WORD = re.compile(r"[^\W\d_]{3,}")


def defined_word(query: str) -> tuple[str, ...] | None:
    """The core of a one-word query ("group", "sheaf", "ultrafilter") that a definition may be named by;
    None for anything else. A word says what is asked about, not which result: only a definition of
    that name answers it first (``NamedFirst``), not "topological group" or a theorem named so."""
    q = query.strip().lower()
    if not _ONE_WORD.fullmatch(q) or q in _KIND:
        return None
    c = core(words(q))
    return c if len(c) == 1 else None


def reads_as_name(query: str) -> bool:
    """Whether ``query`` could be a result's name at all (``name_core``)."""
    return name_core(query) is not None


_BARE_POSSESSIVE = re.compile(r"\b([^\W\d_]{2,}[^\W\ds_])s\b(?=\s+[^\W\d_])")  # a word before another


def _possessive(m: re.Match) -> str:
    return m.group(1) + "'s"   # what the template r"\1's" writes, without parsing the template each call


MAX_BARE = 3  # words that could be bare possessives, past which only "all of them" is tried


def spellings(query: str) -> list[str]:
    """The query, and where a word could be a possessive typed without its apostrophe ("Hensels
    lemma", "itos lemma": a word ending in one s, before another word), the query with it ("Hensel's
    lemma"): every such word made a possessive first, then each choice of them (up to ``MAX_BARE``
    words), so that "Hilberts basis theorem" also reads as "Hilbert's basis theorem", not only as
    "Hilbert's basi's theorem"; "Stokes theorem" keeps its own spelling first, and "Banach spaces" has
    no other."""
    found = list(_BARE_POSSESSIVE.finditer(query))
    if not found:
        return [query]
    out = [query, _BARE_POSSESSIVE.sub(_possessive, query)]
    if 1 < len(found) <= MAX_BARE:
        for size in range(1, len(found)):
            for chosen in itertools.combinations(found, size):
                text, at = [], 0
                for m in chosen:
                    text += [query[at:m.start()], _possessive(m)]
                    at = m.end()
                out.append("".join(text) + query[at:])
    return out


# two or three words joined by hyphens or dashes, as names of people are ("Artin-Wedderburn", "Erdős–Ko–Rado")
_JOINED = re.compile(r"(?<![^\W\d_])[^\W\d_]{3,40}(?:[-–—][^\W\d_]{3,40}){1,2}(?![^\W\d_])")


def orders(query: str) -> list[str]:
    """The query, and the same with its first hyphen-joined names in each other order: the
    Artin-Wedderburn theorem is PlanetMath's Wedderburn-Artin theorem. Not a prefixed word
    ("semi-simple", ``mathlas.ranking.lexical.PREFIXES``)."""
    from mathlas.ranking.lexical import PREFIXES

    m = _JOINED.search(query)
    if not m:
        return [query]
    parts = re.split("[-–—]", m.group())
    if any(p.lower() in PREFIXES for p in parts):
        return [query]
    return [query] + [query[:m.start()] + "-".join(p) + query[m.end():]
                      for p in itertools.permutations(parts) if list(p) != parts]


def query_cores(query: str) -> frozenset:
    """The core words of the names ``query`` may be, one tuple per spelling (``spellings``) and order
    of its joined names (``orders``); empty when it reads as no name. Made once for every document it
    is held against."""
    return frozenset(c for q0 in orders(query.lower()) for q in spellings(q0) if (c := _core(q)))


def own_names(source: str, name: str, heading: str, aliases) -> list[str]:
    """A document's names: its name and heading, and its aliases (a list, or the column's
    ``;``-separated text), the empty ones left out. Stacks and the HoTT book name a statement by its
    \\label's words ("hensel"), which say what it is about, not what it is called: there only aliases
    count."""
    names = [name or "", heading or ""] if source not in LABEL_NAMED else []
    names += aliases if isinstance(aliases, list) else (aliases or "").split(";")
    return [n for n in names if n and n.strip()]


def name_cores(source: str, name: str, heading: str, aliases) -> frozenset:
    """The core words of a document's names (``own_names``)."""
    return frozenset(c for c in (core(words(n)) for n in own_names(source, name, heading, aliases)) if c)


# Per bundle, the core words of each document's names (name, heading, aliases) a query was held
# against: a name query's candidates are mostly those of earlier ones. Cleared past DOC_CORES_KEPT.
DOC_CORES_KEPT = 65536
_DOC_CORES: weakref.WeakKeyDictionary[Any, dict[int, frozenset]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def doc_cores(bundle: Any, keys: list[int]) -> list[frozenset]:
    """For each of ``keys``, ``name_cores`` of that document (read from the bundle, kept)."""
    with _LOCK:
        kept = _DOC_CORES.setdefault(bundle, {})
        got = {k: kept[k] for k in keys if k in kept}
    missing = sorted(set(keys) - got.keys())
    if missing:
        aliases = bundle.strings("aliases")(missing) if bundle.has_column("aliases") else [None] * len(missing)
        made = {key: name_cores(hit.source, hit.name, hit.heading, al)
                for key, hit, al in zip(missing, bundle.hits(missing), aliases)}
        with _LOCK:
            if len(kept) + len(made) > DOC_CORES_KEPT:
                kept.clear()
            kept.update(made)
        got.update(made)
    return [got[k] for k in keys]


def named_keys(bundle: Any, query: str, keys: list[int]) -> list[bool]:
    """For each of ``keys`` (the bundle's documents), whether ``query`` names it (module docstring); a
    single word names only a definition of that name (``word_cores``)."""
    cores = query_cores(query)
    definitions = not cores
    if definitions:
        cores = word_cores(query)
    if not cores or not keys:
        return [False] * len(keys)
    named = [bool(c & cores) for c in doc_cores(bundle, keys)]
    if definitions:
        kinds = bundle.strings("kind")(keys)
        named = [ok and kind in DEFINITION_KINDS for ok, kind in zip(named, kinds)]
    return named


def named_by_none(bundle: Any, query: str, keys: list[int]) -> bool:
    """Whether ``query`` reads as a result's name of two words or more ("Erdős–Ko–Rado theorem",
    "Green-Tao theorem") and none of ``keys`` (an answer's first hits) is named so, nor a statement
    shown with one as "also in": the hits are other results with names like it (the Erdős–Rado
    theorem, Green's theorem). A name's shape: a kind word ("theorem", "lemma") or a possessive, and
    no formula; the name is what comes up to its kind word ("the compactness theorem for first-order
    logic" names the compactness theorem: one name word, too little to say no hit bears it); its words
    in any order (the Artin-Wedderburn theorem is Wedderburn-Artin's). Informal bundles (a formal
    bundle's names are declarations': ``mathlas.ranking.names``)."""
    ws = words(query.lower())
    kind = next((i for i, w in enumerate(ws) if w in _KIND), None)
    if not reads_as_name(query) or not (kind is not None or _POSSESSIVE.search(query.lower())) or _formal(bundle):
        return False
    cores = query_cores(" ".join(ws[:kind + 1]) if kind is not None else query)
    if not any(len(c) > 1 for c in cores):
        return False
    n = len(bundle)
    keys = [k for k in keys if k < n]
    copies = _copies(bundle)
    keys += [c for k in keys for c in copies(k)]
    wanted = {frozenset(c) for c in cores}
    return bool(keys) and not any(frozenset(c) in wanted for cs in doc_cores(bundle, keys) for c in cs)


def _kind_words(ws: list[str]) -> frozenset:
    """The words of ``ws`` that say what kind of result a name is ("theorem", "lemma")."""
    return frozenset(w for w in ws if w in _KIND)


def kinded_core(query: str) -> tuple[tuple[str, ...], frozenset] | None:
    """(core words, kind words) of a name query that says what kind of result it names ("Kőnig's
    theorem": (("konig",), {"theorem"})); None without a kind word, or when it reads as no name."""
    c = name_core(query)
    kinds = _kind_words(words(query.lower()))
    return (c, kinds) if c and kinds else None


def doc_kinded(bundle: Any, keys: list[int]) -> set:
    """(core words, kind words) of every name of ``keys`` that has a kind word (``own_names``, read
    from the columns: the heading as ``mathlas.headings.describe`` makes it). Read on demand: a name
    query with a kind word reads it for its first named rows only."""
    from mathlas.headings import describe

    aliases = bundle.strings("aliases")(keys) if bundle.has_column("aliases") else [None] * len(keys)
    sources = [bundle.source_names[c] if c >= 0 else "" for c in bundle.source_codes[keys].tolist()]
    out: set = set()
    for doc_id, source, name, title, al in zip(bundle.strings("id")(keys), sources, bundle.strings("name")(keys),
                                               bundle.strings("title")(keys), aliases):
        heading = describe(doc_id, source, "", name or "", title or "").heading
        for ws in map(words, own_names(source, name, heading, al)):
            if kinds := _kind_words(ws):
                out.add((core(ws), kinds))
    return out


def definition_of_other_kind(bundle: Any, query: str, key: int) -> bool:
    """Whether ``query`` reads as the name of a result of some kind ("Vitali covering lemma", "Craig's
    interpolation theorem": a kind word, ``kinded_core``) and the document ``key`` is a definition that is
    not named so, kind word included, and whose text does not say it either (PlanetMath's definition of a
    Vitali covering): a definition of what the name is made of, not the result. PlanetMath files some
    results as definitions ("Euler relation", which says it is also known as Euler's formula): those
    name the result in their text. Informal bundles only (a formal bundle's names are declarations')."""
    kinded = _kinded_of_document(bundle, query, key)
    return (kinded is not None and bundle.strings("kind")([key])[0] in DEFINITION_KINDS
            and kinded not in doc_kinded(bundle, [key]) and not _says(bundle, key, query))


def _kinded_of_document(bundle: Any, query: str, key: int):
    """``kinded_core(query)`` where ``key`` is a document of an informal bundle (None otherwise, or when
    the query has no kind word): what the two rules about a result's name below read."""
    if key >= len(bundle) or _formal(bundle):
        return None
    return kinded_core(query)


def _says(bundle: Any, key: int, query: str) -> bool:
    """Whether the text of ``key`` holds the words of ``query`` in a row ("Euler's relation (also known as
    Euler's formula)": the entry says what it is also called, though its names do not)."""
    ws = words(query.lower())
    text = words((bundle.strings("text")([key])[0] or "").lower())
    n = len(ws)
    return bool(ws) and any(text[i:i + n] == ws for i in range(len(text) - n + 1) if text[i] == ws[0])


# kind words that name the same sort of result: a "lemma" may be called a "theorem" (Zorn's), but not an
# "inequality" (Jordan's lemma and Jordan's inequality are two results), nor an "identity" or "conjecture"
_SORTS = ({"theorem", "theorems", "lemma", "lemmas", "proposition", "corollary", "law", "principle", "criterion",
           "rule"}, {"inequality"}, {"identity", "formula"}, {"conjecture"}, {"property"})


def _sorts(kinds) -> frozenset:
    return frozenset(i for i, sort in enumerate(_SORTS) if sort & set(kinds))


def named_as_another_result(bundle: Any, query: str, key: int) -> bool:
    """Whether ``query`` names a result with a kind word ("Jordan's lemma") and the document ``key`` bears
    that name's core only with a kind word of another sort ("Jordan's inequality"), and its text does not
    say the query's name: two results of one name. Informal bundles only."""
    kinded = _kinded_of_document(bundle, query, key)
    if kinded is None:
        return False
    core_, kinds = kinded
    mine = [k for c, k in doc_kinded(bundle, [key]) if c == core_]
    return bool(mine) and not any(_sorts(k) & _sorts(kinds) for k in mine) and not _says(bundle, key, query)


def word_cores(query: str) -> frozenset:
    """The names a one-word query may be (``defined_word``), as typed and in the singular ("groups":
    group); empty for anything else."""
    word = defined_word(query)
    if word is None:
        return frozenset()
    return frozenset({word, (singular(word[0]),)})


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
        definitions = not cores
        if definitions:  # one word: the definition of that name ("group"), not a result about it
            cores = word_cores(query)
        if not cores:
            return pool
        copies = _copies(bundle) if getattr(req, "collapse", True) else None
        # the rows in order, each with its copies; the first named one wins (mostly the first row):
        # the first row's names read alone, the others' in one call
        rows = [(i, key) for i, key in enumerate(pool.keys[:DEPTH].tolist()) if key < n]
        named_as = None if definitions else kinded_core(query)
        for batch in (rows[:1], rows[1:]):
            members = [_with_copies(key, copies) for _, key in batch]
            read = doc_cores(bundle, [m for ms in members for m in ms])
            kinds = bundle.strings("kind")([key for _, key in batch]) if definitions else None
            at = 0
            for j, ((i, _), ms) in enumerate(zip(batch, members)):
                if (kinds is None or kinds[j] in DEFINITION_KINDS) and any(c & cores for c in read[at:at + len(ms)]):
                    if named_as is not None:  # "Kőnig's theorem": a row named so, kind word too, before "Kőnig's lemma"
                        i = self._kind_too(bundle, named_as, rows[rows.index((i, batch[j][1])):], copies, i)
                    return pool if i == 0 else self._first(pool, i)
                at += len(ms)
        return pool

    @staticmethod
    def _kind_too(bundle, named_as, rows, copies, first: int) -> int:
        """The row to put first, from the first named one on (``rows``): the first whose name (or a
        copy's) has the query's kind words too ("Kőnig's theorem" names the PlanetMath entry König's
        theorem, not Kőnig's lemma, whose name only shares the core), else the first named (``first``)."""
        for i, key in rows:
            if named_as in doc_kinded(bundle, _with_copies(key, copies)):
                return i
        return first

    def _first(self, pool, j: int):
        order = np.r_[j, np.arange(j), np.arange(j + 1, len(pool))].astype(np.int64)
        out = pool.take(order)
        scores = out.scores.copy()
        scores[0] = max(float(scores[0]), float(pool.scores[0]))  # the scores stay in order
        marks = np.zeros(len(out), dtype=np.int64)
        marks[0] = 1
        return out.rescored(scores).marked(self.name, marks)


def _with_copies(key: int, copies) -> list[int]:
    """``key`` and the first ``MAX_COPIES`` of its copies (``copies``: ``_copies``; None: none read)."""
    return [key, *copies(key)[:MAX_COPIES]] if copies is not None else [key]


def _formal(bundle: Any) -> bool:
    """A formal bundle: Lean declarations (a ``module`` column, or ids under ``lean:``)."""
    return bundle.has_column("module") or (bundle.strings("id")([0])[0] or "").startswith("lean:")


def _copies(bundle: Any):
    """``copies(key)``: the other statements of the key's fact (``mathlas.groups``: its "also in")."""
    from mathlas.groups import groups_of

    return groups_of(bundle).group
