"""Reciprocal Rank Fusion. Pure functions over channel rankings; no I/O.

``score(d) = w_source(d) * sum_c  w_c / (k_rrf + rank_c(d))`` with 1-based ranks. A document absent
from a channel's list contributes nothing for that channel. Ties break by the better best rank,
then by key, so fusion is deterministic.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Ranking:
    """One channel's answer: document keys best first, with that channel's own scores."""

    keys: np.ndarray    # int64
    scores: np.ndarray  # float32, same length, non-increasing

    @classmethod
    def empty(cls) -> "Ranking":
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))

    @classmethod
    def of(cls, keys, scores=None) -> "Ranking":
        keys = np.asarray(keys, dtype=np.int64)
        if scores is None:
            scores = -np.arange(len(keys), dtype=np.float32)
        return cls(keys, np.asarray(scores, dtype=np.float32))

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True)
class Fused:
    key: int
    score: float
    ranks: dict[str, int | None]


def rrf(rankings: dict[str, Ranking], k: int, *, k_rrf: float = 10.0,
        channel_weights: dict[str, float] | None = None,
        key_weights: np.ndarray | None = None) -> list[Fused]:
    """Fuse named rankings into the top ``k`` documents.

    ``key_weights[key]`` multiplies a document's fused score (per-source weights; 0 drops it).
    """
    if k <= 0:
        return []
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int | None]] = {}
    names = list(rankings)
    for name, ranking in rankings.items():
        w = 1.0 if channel_weights is None else float(channel_weights.get(name, 1.0))
        if w == 0:
            continue
        for r, key in enumerate(ranking.keys.tolist(), start=1):
            if key in ranks and ranks[key][name] is not None:
                continue  # a channel listing a key twice counts its best rank only
            scores[key] = scores.get(key, 0.0) + w / (k_rrf + r)
            ranks.setdefault(key, dict.fromkeys(names))[name] = r
    if key_weights is not None:
        for key in list(scores):
            scores[key] *= float(key_weights[key])
            if scores[key] <= 0:
                del scores[key]

    def order(key: int):
        best = min(r for r in ranks[key].values() if r is not None)
        return (-scores[key], best, key)

    top = sorted(scores, key=order)[:k]
    return [Fused(key, scores[key], ranks[key]) for key in top]
