"""The findings as a search channel: ``FindingsChannel.search`` returns a ``Ranking`` that
``Bundle.rank`` fuses with the bundle's lexical and dense rankings in its one RRF.

The channel ranks the findings two ways and fuses them with ``mathlas.fusion.rrf``: a small
BM25 over name, slogan and statement (tokenised like the bundle's lexical channel; plain Python,
rebuilt when the store's file changes), and cosine similarity to the query vector the bundle
already computed, over the stored vectors made by that bundle's encoder (another encoder's vectors
are never mixed in). Keys are positions in id order, so RRF's last tie-break is the finding id.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from mathlas.findings import KIND, LICENSE, SOURCE
from mathlas.fusion import Ranking, rrf
from mathlas.hit import Hit, snippet

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.engine import Bundle
    from mathlas.findings.store import Finding, FindingsStore

# BM25 parameters (the usual defaults; the store is small and unfielded)
K1, B = 1.2, 0.75
K_RRF = 10.0                 # fusion of the findings' own lexical and dense rankings
_WORD = re.compile(r"\w+", re.UNICODE)


def doc_words(text: str) -> list[str]:
    """A document's words as the lexical channel sees them (identifiers also split, lower-cased)."""
    from mathlas.bundle import lexical_words

    return [w.lower() for w in _WORD.findall(lexical_words(text))]


class BM25:
    """Okapi BM25 over a few documents, in plain Python (the store is small: no index files)."""

    def __init__(self, texts: list[str]):
        self.tfs = [Counter(doc_words(t)) for t in texts]
        self.lens = [sum(tf.values()) for tf in self.tfs]
        self.avg = (sum(self.lens) / len(self.lens)) if self.lens else 0.0
        df: Counter = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(self.tfs)
        self.idf = {w: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, tf in enumerate(self.tfs):
            for w in tf:
                self.postings.setdefault(w, []).append(i)

    def search(self, words: list[str], depth: int) -> list[tuple[int, float]]:
        scores: dict[int, float] = {}
        for w in set(words):
            idf = self.idf.get(w)
            if idf is None:
                continue
            for i in self.postings[w]:
                tf = self.tfs[i][w]
                norm = K1 * (1 - B + B * self.lens[i] / (self.avg or 1.0))
                scores[i] = scores.get(i, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
        return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:depth]


class FindingsChannel:
    """One snapshot of a findings store, searched for one bundle (``encoder``: its fingerprint)."""

    def __init__(self, store: "FindingsStore", bundle: "Bundle"):
        snap = store._snapshot()
        self.findings: list["Finding"] = sorted(snap.findings, key=lambda f: f.id)
        self._snap = snap
        self._store = store
        self._bundle = bundle
        self._encoder = bundle.encoder_fingerprint

    @property
    def size(self) -> int:
        return len(self.findings)

    def has_documents(self) -> bool:
        return bool(self.findings)

    def _vectors(self):
        vec = self._store.vectors()
        return vec if vec is not None and vec[2] == self._encoder and len(vec[0]) else None

    def has_vectors(self) -> bool:
        """Whether vectors made by this bundle's encoder are stored (the dense ranking needs them)."""
        return self._vectors() is not None

    def _lexical(self, query: str, depth: int) -> list[int]:
        from mathlas.lexical import query_terms

        index = self._snap.derived.get("bm25")
        if index is None:  # one index per snapshot, over the snapshot's (file) order
            index = self._snap.derived["bm25"] = BM25([f.search_text for f in self._snap.findings])
        pos = {f.id: i for i, f in enumerate(self.findings)}
        return [pos[self._snap.findings[i].id] for i, _ in index.search(query_terms(query), depth)]

    def _dense(self, vector: np.ndarray, depth: int) -> list[int]:
        vec = self._vectors()
        if vec is None or vec[1].shape[1] != len(vector):
            return []
        ids, mat, _ = vec
        pos = {f.id: i for i, f in enumerate(self.findings)}
        scores = mat @ np.asarray(vector, dtype=np.float32)
        out = [pos[ids[i]] for i in np.argsort(-scores, kind="stable") if ids[i] in pos]
        return out[:depth]

    def search(self, query: str, vector: np.ndarray | None, depth: int, *, lexical: bool = True) -> Ranking:
        """The findings ranked for ``query``: BM25 (``lexical``), cosine to ``vector`` (when given
        and vectors of this encoder exist), RRF of the two when both rank something."""
        lists = []
        if lexical:
            lists.append(self._lexical(query, depth))
        if vector is not None:
            lists.append(self._dense(vector, depth))
        lists = [x for x in lists if x] or [[]]
        if len(lists) == 1:
            return Ranking.of(np.array(lists[0], dtype=np.int64))
        fused = rrf({str(c): Ranking.of(np.array(x, dtype=np.int64)) for c, x in enumerate(lists)}, depth, k_rrf=K_RRF)
        return Ranking.of(np.array([f.key for f in fused], dtype=np.int64), np.array([f.score for f in fused]))

    def fusion_weight(self, channel_weights: dict[str, float]) -> float:
        """The findings channel's weight in the bundle's fusion, given the weights of the bundle's
        channels that ran: as much as those channels together, since it fuses the same two kinds
        of evidence."""
        return sum(channel_weights.values())

    def hit(self, key: int, score: float, ranks: dict[str, int | None]) -> Hit:
        f = self.findings[key]
        return Hit(id=f.id, source=SOURCE, kind=KIND, name=f.name, title="", text=snippet(f.search_text),
                   link=f.source_url, license=LICENSE, score=score,
                   ranks={"lexical": None, "dense": None, **ranks})
