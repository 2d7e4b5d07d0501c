"""The query as the channels see it: its text (abbreviations expanded) and, encoded on first use
and kept per bundle, its vector.

``dense_text`` is the text the encoder reads: a very short keyword query ("Sylow", "Heine Borel")
is repeated, because a mean-pooling encoder averages its one or two word vectors with its
[CLS]/[SEP] vectors, which then dominate. Repeating the query once for the dense channel (as the
TheoremSearch paper does) moved 40 short queries from P@1 .425 / MRR@20 .593 to .500 / .636 in
hybrid on the default bundle (8 better, 4 worse; scripts/bench_short_queries.py, docs/papers.md).
It applies to queries of at most ``SHORT_QUERY_WORDS`` words besides stopwords, all of them words
(no formulas), and only to mean-pooling encoders (unmeasured for the others); a manifest may set
``fusion.short_query_repeat`` (1 turns it off).
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any
from collections.abc import Callable

import numpy as np

# Query vectors kept per bundle (384 floats each: 1.5 KB; 256 of them: 0.4 MB)
QUERY_VECTORS_KEPT = 256
SHORT_QUERY_WORDS = 2
SHORT_QUERY_REPEAT = 2
_SHORT_QUERY = re.compile(r"[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*)*")
_STOPWORDS = frozenset("a an the of in on for and or to is are with by from as at its".split())


def dense_text(query: str, manifest: Any) -> str:
    """The text the dense channel encodes for ``query``: repeated when it is a very short keyword
    query and the bundle's encoder mean-pools (module docstring)."""
    repeat = (manifest.fusion or {}).get("short_query_repeat", SHORT_QUERY_REPEAT)
    if isinstance(repeat, int) and not isinstance(repeat, bool) and 1 < repeat <= 8 \
            and manifest.encoder.get("pooling") == "mean" and _SHORT_QUERY.fullmatch(query):
        words = [w for w in re.split(r"[\s-]+", query.lower()) if w and w not in _STOPWORDS]
        if 0 < len(words) <= SHORT_QUERY_WORDS:
            return " ".join([query] * repeat)
    return query


class Kept:
    """The last ``limit`` values made by ``make(key)``, by key, shared between threads (a value is made
    outside the lock: two threads asking at once may both make it, and keep the same)."""

    def __init__(self, make: Callable[[Any], Any], limit: int):
        self._make = make
        self._limit = limit
        self._kept: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, key):
        with self._lock:
            got = self._kept.get(key)
            if got is not None:
                self._kept.move_to_end(key)
                return got
        got = self._make(key)
        with self._lock:
            self._kept[key] = got
            while len(self._kept) > self._limit:
                self._kept.popitem(last=False)
        return got

    def forget(self) -> None:
        with self._lock:
            self._kept.clear()

    def snapshot(self) -> dict:
        """What is kept, oldest first (a benchmark saves it to start another process alike)."""
        with self._lock:
            return dict(self._kept)

    def seed(self, values: dict) -> None:
        """Keep ``values`` as if made (``snapshot``'s counterpart)."""
        for key, value in values.items():
            with self._lock:
                self._kept[key] = value
                while len(self._kept) > self._limit:
                    self._kept.popitem(last=False)


class QueryVectors:
    """The last ``QUERY_VECTORS_KEPT`` query vectors of one bundle, by dense text: a page of results,
    a TheoremSearch answer's cosines and a repeated query ask again for the vector a search made."""

    def __init__(self, encode: Callable[[list[str]], np.ndarray], manifest: Any):
        self._encode = encode
        self._manifest = manifest
        self._kept = Kept(self._vector, QUERY_VECTORS_KEPT)

    def _vector(self, text: str) -> np.ndarray:
        vec = self._encode([text])[0]
        vec.setflags(write=False)  # shared by every caller that asks again
        return vec

    def __call__(self, query: str) -> np.ndarray:
        """The vector of ``query`` as the dense channel sees it (``dense_text``, encoded)."""
        return self._kept(dense_text(query, self._manifest))

    def forget(self) -> None:
        """Drop the kept vectors, so the next search encodes its query as a new one would
        (``scripts/bench_search.py`` times both cases)."""
        self._kept.forget()


class Query:
    """What every channel searches for one request: ``text`` (abbreviations expanded), ``pool``
    (binary candidates the dense channel rescores; None: its default) and ``vector()``, encoded
    on first use only (a lexical search never loads the encoder)."""

    __slots__ = ("text", "pool", "_vectors", "_vector")

    def __init__(self, text: str, vectors: Callable[[str], np.ndarray], pool: int | None = None):
        self.text = text
        self.pool = pool
        self._vectors = vectors
        self._vector: np.ndarray | None = None

    def vector(self) -> np.ndarray:
        if self._vector is None:
            self._vector = self._vectors(self.text)
        return self._vector

    @property
    def encoded(self) -> bool:
        """Whether the vector was made (or fetched) for this request."""
        return self._vector is not None
