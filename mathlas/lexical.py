"""Lexical channel: tantivy BM25 over name, title and retrieval text.

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

import numpy as np

from mathlas.bundle import BM25_DIR, DEFAULT_LEXICAL_BOOSTS, LEXICAL_FIELDS, lexical_words
from mathlas.errors import BundleCorruptError
from mathlas.filters import Filters
from mathlas.fusion import Ranking

# A 20,000-character query is legal; BM25 over its first words is what a user can expect.
MAX_QUERY_TERMS = 256
_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(query: str) -> list[str]:
    """Lower-cased words of a query as the index sees them (identifiers split, syntax dropped)."""
    return [w.lower() for w in _WORD.findall(lexical_words(query))][:MAX_QUERY_TERMS]


class LexicalChannel:
    def __init__(self, root: Path, count: int, boosts: dict[str, float] | None = None):
        import tantivy

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
        # One segment (the build guarantees it): tantivy's doc id is the key; otherwise read the stored key.
        self._doc_is_key = self.searcher.num_segments == 1

    def _text_query(self, terms: list[str]):
        return self.index.parse_query(" ".join(terms), list(self.boosts), field_boosts=self.boosts)

    def search(self, query: str, k: int, filters: Filters = Filters()) -> Ranking:
        terms = query_terms(query)
        if not terms or k <= 0:
            return Ranking.empty()
        T = self._tantivy
        clauses = [(T.Occur.Must, self._text_query(terms))]
        if filters.include_sources:
            clauses.append((T.Occur.Must, T.Query.term_set_query(self.schema, "source", list(filters.include_sources))))
        if filters.exclude_sources:
            clauses.append((T.Occur.MustNot, T.Query.term_set_query(self.schema, "source", list(filters.exclude_sources))))
        if filters.kinds:
            clauses.append((T.Occur.Must, T.Query.term_set_query(self.schema, "kind", list(filters.kinds))))
        query_obj = clauses[0][1] if len(clauses) == 1 else T.Query.boolean_query(clauses)
        result = self.searcher.search(query_obj, k)
        hits = result.hits
        if self._doc_is_key:
            keys = [addr.doc for _, addr in hits]
        else:
            keys = [self.searcher.doc(addr)["key"][0] for _, addr in hits]
        ranking = Ranking(np.asarray(keys, dtype=np.int64), np.asarray([s for s, _ in hits], dtype=np.float32))
        if filters.allowed is not None and len(ranking):  # belt and braces: the mask is the source of truth
            keep = filters.allowed[ranking.keys]
            ranking = Ranking(ranking.keys[keep], ranking.scores[keep])
        return ranking
