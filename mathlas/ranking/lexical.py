"""Lexical channel: tantivy BM25 over name, title and retrieval text (``name = "lexical"``; its
``rank(query, depth, filters)`` is the channel protocol of ``mathlas.ranking``, ``search`` the plain
index search).

The index is opened through a private *shadow directory* of symlinks, because tantivy's
``Index.open`` creates lock files next to the index: the bundle itself is never written to, and a
read-only bundle (installed system-wide, on a read-only mount) opens fine.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mathlas.bundle import (BM25_DIR, DEFAULT_LEXICAL_BOOSTS, LEXICAL_FIELDS, LEXICAL_IDENTIFIERS,
                            LEXICAL_SYMBOLS, lexical_words)
from mathlas.errors import BundleCorruptError
from mathlas.ranking.filters import Filters
from mathlas.ranking.candidates import Ranking

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.ranking.query import Query

# A 20,000-character query is legal; BM25 over its first words is what a user can expect.
MAX_QUERY_TERMS = 256
# Paper filters exist only as a mask (the BM25 index holds no paper fields). Two exact ways to apply
# one before the top-k cut, priced per query: restrict the query to the mask's runs of consecutive
# keys with range queries on the ``key`` fast field (each range scans that column: ~5 ms per range
# per 10^6 documents), or collect a deeper BM25 list and drop what the mask refuses, deepening
# until k survive (~0.85 us per collected hit). Measured with tantivy 0.27 on a 10^6-document index.
RANGE_COST_PER_DOC = 5e-9
DEEP_COST_PER_HIT = 0.85e-6
_WORD = re.compile(r"\w+", re.UNICODE)
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)  # tantivy's simple tokenizer: runs of alphanumerics
# Prefixes a word is written with or without a hyphen ("quasi-coherent" / "quasicoherent", "semi-simple" /
# "semisimple", "non-negative" / "nonnegative"): the index reads the hyphenated form as two words, so a
# query that writes the other form missed every document (``LexicalChannel.spellings``).
PREFIXES = ("quasi", "semi", "non", "pseudo", "multi", "anti", "sub", "super", "hyper", "co", "bi", "pre", "poly",
            "para", "ultra", "infra", "inter", "intra", "counter", "un")
_PREFIXED = re.compile(r"(%s)([a-z]{4,})" % "|".join(sorted(PREFIXES, key=len, reverse=True)))
# the other spelling is searched too only where the documents write it more often than the query's
SPELLINGS_KEPT = 4096


def query_terms(query: str, identifiers: str = "split", limit: int | None = MAX_QUERY_TERMS) -> list[str]:
    """Lower-cased words of a query as the index sees them (identifiers split, syntax dropped), the
    first ``limit`` of them (None: all).

    With ``identifiers="tokenizer"`` the words are the tokenizer's own (``two_le`` -> two, le), so an
    identifier is neither a phrase query nor counted twice."""
    if identifiers == "tokenizer":
        return [w.lower() for w in _TOKEN.findall(query)][:limit]
    return [w.lower() for w in _WORD.findall(lexical_words(query))][:limit]


class LexicalChannel:
    """A bundle's BM25 index, opened read-only; the ranking pipeline's ``lexical`` channel."""

    name = "lexical"

    def __init__(self, root: Path, count: int, boosts: dict[str, float] | None = None,
                 symbols: str | None = None, identifiers: str = "split"):
        import tantivy

        if symbols is not None and symbols not in LEXICAL_SYMBOLS:
            raise BundleCorruptError(f"bundle {Path(root).name}: unknown lexical.symbols {symbols!r}")
        if identifiers not in LEXICAL_IDENTIFIERS:
            raise BundleCorruptError(f"bundle {Path(root).name}: unknown lexical.identifiers {identifiers!r}")
        self.identifiers = identifiers
        # "lean": notation in a query also searches as Mathlib's naming words (a * b ∈ I -> mul mem)
        self.symbols = symbols
        # with "lean", notation in a query also searches as English words (mathlas.lean_gloss.NOTATION:
        # ``∫⁻`` -> "lower Lebesgue integral"), the words a formal bundle's context field holds
        self.notation_english = True
        self.boosts = {f: float(w) for f, w in (boosts or DEFAULT_LEXICAL_BOOSTS).items() if w}
        if not self.boosts or set(self.boosts) - set(LEXICAL_FIELDS):
            raise BundleCorruptError(f"bundle {Path(root).name}: bad lexical boosts {boosts!r}")

        self._tantivy = tantivy
        src = Path(root) / BM25_DIR
        if not src.is_dir():
            raise BundleCorruptError(f"bundle {Path(root).name}: {BM25_DIR}/ is missing; reinstall the bundle")
        self._shadow = Path(tempfile.mkdtemp(prefix="mathlas-bm25-"))
        weakref.finalize(self, shutil.rmtree, self._shadow, True)
        for entry in src.iterdir():
            if entry.name.startswith(".tantivy-") and entry.name.endswith(".lock"):
                continue
            os.symlink(entry.resolve(), self._shadow / entry.name)
        try:
            self.index = tantivy.Index.open(str(self._shadow))
        except Exception as e:  # tantivy raises ValueError/OSError variants
            raise BundleCorruptError(f"bundle {Path(root).name}: cannot open the BM25 index ({e})") from None
        self.schema = self.index.schema
        self.searcher = self.index.searcher()
        if self.searcher.num_docs != count:
            raise BundleCorruptError(
                f"bundle {Path(root).name}: BM25 index has {self.searcher.num_docs} documents, manifest says {count}")
        # One segment (bundles that fit the writer's heap): tantivy's doc id is the key. Several (10^6+
        # documents): the key comes from the ``key`` fast field, ~0.5 us a hit (doc() reads the
        # document store, ~3.5 us a hit).
        self._doc_is_key = self.searcher.num_segments == 1
        from mathlas.ranking.query import Kept

        self._used = Kept(self.documents_using, SPELLINGS_KEPT)

    def documents_using(self, words: str) -> int:
        """How many documents' retrieval text holds ``words`` (a word, stemmed as the index stems it,
        or a quoted phrase); 0 for what tantivy's parser refuses."""
        try:
            return int(self.searcher.search(self.index.parse_query(words, ["text"]), 1).count)
        except ValueError:
            return 0

    def forget_counts(self) -> None:
        """Drop the kept counts ``spellings`` read (a benchmark's new query counts its words again)."""
        self._used.forget()

    def spellings(self, query: str, terms: list[str]) -> list[str]:
        """The hyphenated spelling of each prefixed word of ``query`` where the bundle's documents write
        that one more often: ``quasicoherent`` also searched as the phrase ``"quasi coherent"`` (the
        Stacks project writes "quasi-coherent" 964 times, "quasicoherent" never). Informal bundles only
        (a formal bundle's words are Mathlib's names). The other way round (``semi-simple`` also as
        ``semisimple``) was tried and left out: no judged query writes so, and "semi-simple" alone went
        from weak to none over the same poor first hits (docs/benchmarks.md)."""
        if self.identifiers != "split" or self.symbols == "lean":
            return []
        out: list[str] = []
        for word in dict.fromkeys(terms):
            m = _PREFIXED.fullmatch(word)
            if m:
                phrase = f'"{m.group(1)} {m.group(2)}"'
                if self._used(phrase) > self._used(word):
                    out.append(phrase)
        return out

    def _text_query(self, terms: list[str]):
        return self.index.parse_query(" ".join(terms), list(self.boosts), field_boosts=self.boosts)

    def rank(self, query: Query, depth: int, filters: Filters) -> Ranking:
        """The channel protocol (``mathlas.ranking.Channel``): the query's text, ``depth`` deep."""
        return self.search(query.text, depth, filters)

    def _searched(self, query: str) -> str:
        """The text BM25 searches for ``query``: with a formal bundle's notation as words."""
        if self.symbols == "lean":
            from mathlas.bundle import with_symbol_words
            from mathlas.lean_gloss import notation_gloss

            english = " ".join(notation_gloss(query)) if self.notation_english else ""
            query = with_symbol_words(query) + (f" {english}" if english else "")
        return query

    def cut(self, query: str) -> tuple[int, int] | None:
        """(the words BM25 searches, the words ``query`` has) when it has more than ``MAX_QUERY_TERMS``
        (only the first are searched); None when all of them are."""
        n = len(query_terms(self._searched(query), self.identifiers, None))
        return (MAX_QUERY_TERMS, n) if n > MAX_QUERY_TERMS else None

    def search(self, query: str, k: int, filters: Filters = Filters()) -> Ranking:
        query = self._searched(query)
        terms = query_terms(query, self.identifiers)
        if not terms or k <= 0:
            return Ranking.empty()
        terms = terms + self.spellings(query, terms)
        T = self._tantivy
        clauses = [(T.Occur.Must, self._text_query(terms))]
        if filters.include_sources:
            # score 0 (as in _search_masked): a filter leaves the BM25 scores as they are, so a filtered
            # ranking's scores compare with an unfiltered one's (the findings channel places findings by them)
            clauses.append((T.Occur.Must, T.Query.const_score_query(
                T.Query.term_set_query(self.schema, "source", list(filters.include_sources)), 0.0)))
        if filters.exclude_sources:
            clauses.append((T.Occur.MustNot, T.Query.term_set_query(self.schema, "source", list(filters.exclude_sources))))
        if filters.kinds:
            clauses.append((T.Occur.Must, T.Query.const_score_query(
                T.Query.term_set_query(self.schema, "kind", list(filters.kinds)), 0.0)))
        query_obj = clauses[0][1] if len(clauses) == 1 else T.Query.boolean_query(clauses)
        if filters.mask_only:
            return self._search_masked(query_obj, k, filters.allowed)
        ranking = self._ranking(self.searcher.search(query_obj, k).hits)
        if filters.allowed is not None and len(ranking):  # belt and braces: the mask is the source of truth
            keep = filters.allowed[ranking.keys]
            ranking = Ranking(ranking.keys[keep], ranking.scores[keep])
        return ranking

    def _ranking(self, hits) -> Ranking:
        if self._doc_is_key:
            keys = [addr.doc for _, addr in hits]
        else:
            keys = self.searcher.fast_field_values("key", [addr for _, addr in hits]) if hits else []
        return Ranking(np.asarray(keys, dtype=np.int64), np.asarray([s for s, _ in hits], dtype=np.float32))

    def _search_masked(self, query_obj, k: int, allowed: np.ndarray) -> Ranking:
        """The exact top k of ``query_obj`` among the documents ``allowed`` admits."""
        T = self._tantivy
        n = len(allowed)
        n_allowed = int(allowed.sum())
        if n_allowed == 0:
            return Ranking.empty()
        edges = np.flatnonzero(np.diff(allowed.view(np.int8), prepend=0, append=0))
        runs = edges.reshape(-1, 2)  # [start, stop) of each run of allowed keys
        deep = min(n, int(1.5 * k * n / n_allowed) + k)
        if len(runs) * n * RANGE_COST_PER_DOC <= deep * DEEP_COST_PER_HIT:
            ranges = [(T.Occur.Should, T.Query.range_query(self.schema, "key", T.FieldType.Integer,
                                                           int(a), int(b) - 1)) for a, b in runs]
            only = ranges[0][1] if len(ranges) == 1 else T.Query.boolean_query(ranges)
            # score 0: the filter leaves the BM25 scores as they are
            restricted = T.Query.boolean_query([(T.Occur.Must, query_obj),
                                                (T.Occur.Must, T.Query.const_score_query(only, 0.0))])
            return self._ranking(self.searcher.search(restricted, k).hits)
        while True:
            result = self.searcher.search(query_obj, deep)
            ranking = self._ranking(result.hits)
            keep = allowed[ranking.keys]
            if int(keep.sum()) >= k or len(ranking) < deep or deep >= result.count:
                return Ranking(ranking.keys[keep][:k], ranking.scores[keep][:k])
            deep = min(result.count, 4 * deep)
