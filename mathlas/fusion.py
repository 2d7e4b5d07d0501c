"""Fusion of channel rankings. Pure functions over channel rankings; no I/O.

Reciprocal Rank Fusion (``rrf``): ``score(d) = w_source(d) * sum_c  w_c / (k_rrf + rank_c(d))``
with 1-based ranks. A document absent from a channel's list contributes nothing for that channel.
Ties break by the better best rank, then by key, so fusion is deterministic.

Score fusion (``convex``): ``score(d) = w_source(d) * sum_c  w_c * cal_c(s_c(d))``, each channel's
raw scores calibrated over its own list (``CALIBRATIONS``) so that the channel's lowest listed
score, and a document the channel did not list, count 0. Unlike RRF it keeps how far ahead a
channel's first hits are.
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
    """A fused document: its key, score, each channel's rank, and for a statement placed above its
    own proof or example by ``statements_first``, that hit's key (``lifted_by``; -1 otherwise)."""

    key: int
    score: float
    ranks: dict[str, int | None]
    lifted_by: int = -1


def rrf(rankings: dict[str, Ranking], k: int, *, k_rrf: float = 10.0,
        channel_weights: dict[str, float] | None = None,
        key_weights: np.ndarray | None = None) -> list[Fused]:
    """Fuse named rankings into the top ``k`` documents.

    ``key_weights[key]`` multiplies a document's fused score (per-source weights; 0 drops it).
    """
    names = list(rankings)
    if k <= 0 or not names:
        return []
    # one row per distinct key, one column per channel: 1-based rank (0 = absent)
    firsts = []
    for r in rankings.values():
        keys, idx = np.unique(r.keys, return_index=True)  # a key listed twice keeps its best rank
        firsts.append((keys, idx + 1))
    all_keys = np.unique(np.concatenate([f[0] for f in firsts])) if firsts else np.zeros(0, np.int64)
    if len(all_keys) == 0:
        return []
    ranks = np.zeros((len(all_keys), len(names)), dtype=np.int64)
    for c, (keys, rank) in enumerate(firsts):
        ranks[np.searchsorted(all_keys, keys), c] = rank
    w = np.array([1.0 if channel_weights is None else float(channel_weights.get(n, 1.0)) for n in names])
    present = ranks > 0
    scores = np.where(present, w / (k_rrf + np.where(present, ranks, 1)), 0.0).sum(axis=1)
    if key_weights is not None:
        scores = scores * key_weights[all_keys]
    best = np.where(present & (w > 0), ranks, np.iinfo(np.int64).max).min(axis=1)
    keep = scores > 0
    all_keys, scores, ranks, best = all_keys[keep], scores[keep], ranks[keep], best[keep]
    order = np.lexsort((all_keys, best, -scores))[:k]
    return [Fused(int(all_keys[i]), float(scores[i]),
                  {n: (int(ranks[i, c]) or None) for c, n in enumerate(names)}) for i in order]


# How ``convex`` puts each channel's raw scores on one scale, from the channel's own list (its first
# ``top_n`` scores; all of it by default): ``minmax`` = (s - min) / (max - min), ``zscore`` =
# (s - min) / std (the z-score shifted so the list's floor is 0: a channel whose first hit stands far
# above the rest gives it more), ``logistic`` = sigmoid(a + b*s) - sigmoid(a + b*min), a probability
# of relevance from a per-channel fit (``params[channel] = (a, b)``), less the floor's.
CALIBRATIONS = ("minmax", "zscore", "logistic")


def calibrate(scores: np.ndarray, calibration: str, top_n: int | None = None,
              params: tuple[float, float] | None = None) -> np.ndarray:
    """One channel's raw scores (best first) on the ``calibration`` scale, floor 0 (clipped there:
    scores past ``top_n`` below the top-n floor count 0)."""
    s = np.asarray(scores, dtype=np.float64)
    if len(s) == 0:
        return s
    head = s[:top_n] if top_n else s
    lo = float(head.min())
    if calibration == "minmax":
        spread = float(head.max()) - lo
        out = (s - lo) / spread if spread > 0 else np.zeros_like(s)
    elif calibration == "zscore":
        spread = float(head.std())
        out = (s - lo) / spread if spread > 0 else np.zeros_like(s)
    elif calibration == "logistic":
        if params is None:
            raise ValueError("logistic calibration needs its fitted (a, b) for every weighted channel")
        a, b = params
        out = 1 / (1 + np.exp(-(a + b * s))) - 1 / (1 + np.exp(-(a + b * lo)))
    else:
        raise ValueError(f"unknown calibration {calibration!r}; known: {', '.join(CALIBRATIONS)}")
    return np.maximum(out, 0.0)


def convex(rankings: dict[str, Ranking], k: int, *, calibration: str = "minmax",
           channel_weights: dict[str, float] | None = None, top_n: int | None = None,
           params: dict[str, tuple[float, float]] | None = None,
           key_weights: np.ndarray | None = None) -> list[Fused]:
    """Fuse named rankings into the top ``k`` documents by a weighted sum of calibrated scores
    (``calibrate``; weights as given, e.g. lexical 0.4 / dense 0.6). A document listed by no
    channel of positive weight, or whose ``key_weights`` is 0, is left out. Ties as in ``rrf``."""
    names = list(rankings)
    if k <= 0 or not names:
        return []
    firsts = []
    for n in names:
        r = rankings[n]
        cal = calibrate(r.scores, calibration, top_n, (params or {}).get(n))
        keys, idx = np.unique(r.keys, return_index=True)  # a key listed twice keeps its best place
        firsts.append((keys, idx + 1, cal[idx]))
    all_keys = np.unique(np.concatenate([f[0] for f in firsts]))
    if len(all_keys) == 0:
        return []
    ranks = np.zeros((len(all_keys), len(names)), dtype=np.int64)
    values = np.zeros((len(all_keys), len(names)))
    for c, (keys, rank, cal) in enumerate(firsts):
        at = np.searchsorted(all_keys, keys)
        ranks[at, c], values[at, c] = rank, cal
    w = np.array([1.0 if channel_weights is None else float(channel_weights.get(n, 1.0)) for n in names])
    present = ranks > 0
    scores = (values * w).sum(axis=1)
    keep = (present & (w > 0)).any(axis=1)
    if key_weights is not None:
        kw = key_weights[all_keys]
        scores, keep = scores * kw, keep & (kw > 0)
    best = np.where(present & (w > 0), ranks, np.iinfo(np.int64).max).min(axis=1)
    all_keys, scores, ranks, best = all_keys[keep], scores[keep], ranks[keep], best[keep]
    order = np.lexsort((all_keys, best, -scores))[:k]
    return [Fused(int(all_keys[i]), float(scores[i]),
                  {n: (int(ranks[i, c]) or None) for c, n in enumerate(names)}) for i in order]


def fit_logistic(scores: np.ndarray, relevant: np.ndarray, l2: float = 1e-3, steps: int = 50) -> tuple[float, float]:
    """``(a, b)`` of ``P(relevant | s) = sigmoid(a + b*s)`` by Newton's method on the (slightly
    L2-regularised) log-likelihood; the raw score is standardised inside for stability."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(relevant, dtype=np.float64)
    if len(s) == 0 or y.min() == y.max():
        raise ValueError("a logistic fit needs both relevant and irrelevant examples")
    mu, sd = float(s.mean()), float(s.std()) or 1.0
    x = np.stack([np.ones_like(s), (s - mu) / sd], axis=1)
    beta = np.zeros(2)
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ beta)))
        grad = x.T @ (p - y) + l2 * beta
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(2)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return float(beta[0] - beta[1] * mu / sd), float(beta[1] / sd)


# ------------------------------------------------------------------------------ document priors

# How a prior's metadata column becomes a score bonus: ``log1`` = log(max(x, 1)) (citation counts,
# so 0 and 1 citation add nothing), ``identity`` = x (a score already on the right scale, e.g.
# PageRank). Unknown values (null, NaN) give 0 under every transform.
PRIOR_TRANSFORMS = ("log1", "identity")


def prior_values(raw: np.ndarray, transform: str) -> np.ndarray:
    """``transform`` applied to a float array of column values (NaN for null) -> bonus per value."""
    x = np.asarray(raw, dtype=np.float64)
    known = np.isfinite(x)
    if transform == "log1":
        out = np.log(np.maximum(np.where(known, x, 1.0), 1.0))
    elif transform == "identity":
        out = np.where(known, x, 0.0)
    else:
        raise ValueError(f"unknown prior transform {transform!r}; known: {', '.join(PRIOR_TRANSFORMS)}")
    return out


def add_priors(fused: list[Fused], bonus: np.ndarray, k: int) -> list[Fused]:
    """Add ``bonus[i]`` to ``fused[i].score``, re-sort (ties as in ``rrf``) and keep the top ``k``."""
    if not fused:
        return []
    scores = np.array([f.score for f in fused], dtype=np.float64) + np.asarray(bonus, dtype=np.float64)
    keys = np.array([f.key for f in fused], dtype=np.int64)
    best = np.array([min((r for r in f.ranks.values() if r), default=np.iinfo(np.int64).max) for f in fused],
                    dtype=np.int64)
    order = np.lexsort((keys, best, -scores))[:k]
    return [Fused(fused[i].key, float(scores[i]), fused[i].ranks) for i in order]


def statements_first(fused: list[Fused], about: np.ndarray | None, allowed: np.ndarray | None = None) -> list[Fused]:
    """``fused`` with each statement placed right above the first proof or example of it that
    ranks higher than the statement itself (or that ranked while the statement did not).
    ``about[key]``: the key of the statement a document proves or illustrates, -1 for none; keys
    past its end (findings) have none. A lifted statement takes its proof's score and keeps its own
    channel ranks (none when no channel ranked it); ``allowed`` (the request's filters over keys)
    keeps a filtered-out statement from coming back this way. The list grows by the statements
    brought in; the caller cuts it."""
    if about is None or not fused:
        return fused
    n = len(about)
    at = {f.key: i for i, f in enumerate(fused)}
    out: list[Fused] = []
    placed: set[int] = set()
    for f in fused:
        if f.key in placed:
            continue
        x = int(about[f.key]) if f.key < n else -1
        if x >= 0 and x not in placed and (allowed is None or bool(allowed[x])):
            j = at.get(x)
            out.append(Fused(x, f.score, fused[j].ranks if j is not None else {}, lifted_by=f.key))
            placed.add(x)
        out.append(f)
        placed.add(f.key)
    return out
