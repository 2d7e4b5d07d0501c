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

from collections.abc import Callable, Mapping

import numpy as np

from mathlas.ranking.candidates import NO_RANK, Candidates, Ranking


KeyWeights = np.ndarray | Callable[[np.ndarray], np.ndarray] | None  # an array over keys, or a function of keys


def _table(rankings: Mapping[str, Ranking]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple]]:
    """One row per distinct key of ``rankings``, one column per channel: (keys ascending, 1-based
    ranks (0: absent), raw scores (NaN: absent), per channel (the rows its keys are, their first
    places)). A key a channel lists twice keeps its first (best) place there."""
    rs = list(rankings.values())
    lens = [len(r) for r in rs]
    c = len(rs)
    keys = np.concatenate([np.asarray(r.keys, dtype=np.int64) for r in rs]) if rs else np.zeros(0, np.int64)
    # np.unique(keys, return_inverse=True), without its generality: one stable sort, a mark where a key starts
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.empty(len(keys), dtype=bool)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    all_keys = ordered[starts]
    inv = np.empty(len(keys), dtype=np.intp)
    inv[order] = np.cumsum(starts) - 1
    ranks = np.zeros((len(all_keys), c), dtype=np.int64)
    raw = np.full((len(all_keys), c), np.nan)
    where = []
    start = 0
    for j, (r, n) in enumerate(zip(rs, lens)):
        rows, places = inv[start:start + n], np.arange(n)
        start += n
        ranks[rows, j] = places + 1
        if np.count_nonzero(ranks[:, j]) < n:  # a key this channel lists twice: its first place
            first = np.unique(rows, return_index=True)[1]
            rows, places = rows[first], places[first]
            ranks[:, j] = 0
            ranks[rows, j] = places + 1
            raw[rows, j] = np.asarray(r.scores)[places]
        else:
            raw[rows, j] = r.scores
        where.append((rows, places))
    return all_keys, ranks, raw, where


def weights_of(key_weights, keys: np.ndarray) -> np.ndarray | None:
    """``key_weights`` (an array over keys, or a function of an array of keys) at ``keys``."""
    if key_weights is None:
        return None
    return key_weights(keys) if callable(key_weights) else key_weights[keys]


def _pool(names: list[str], keys, scores, ranks, raw, w: np.ndarray, key_weights, k: int,
          keep: np.ndarray | None = None) -> Candidates:
    """The fused pool: ``scores`` weighted per key, rows of score 0 (or not ``keep``) dropped, best
    first (``Candidates.sort``'s order: score, best rank among the weighted channels, key), top ``k``.
    ``keys`` ascending (``_table``'s)."""
    kw = weights_of(key_weights, keys)
    if kw is not None:
        scores = scores * kw
    keep = scores > 0 if keep is None else (keep if kw is None else keep & (kw > 0))
    best = _best_rank(ranks, w) if len(names) else keys * 0
    if keep.all():
        # keys ascending already: the stable sort by score, then best rank, leaves ties in key order
        order = np.lexsort((best, -scores))[:k]
    else:
        rows = np.flatnonzero(keep)
        order = rows[np.lexsort((best[rows], -scores[rows]))[:k]]
    return Candidates(tuple(names), keys[order], scores[order], ranks[order], raw[order],
                      np.full(len(order), -1, dtype=np.int64))


def _best_rank(ranks: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each row's best rank among the channels of positive weight (``NO_RANK``: none): column by column
    (a minimum over rows of two or three is slow)."""
    counted = np.where((ranks > 0) & (w > 0), ranks, NO_RANK)
    best = counted[:, 0]
    for j in range(1, counted.shape[1]):
        best = np.minimum(best, counted[:, j])
    return best


def rrf(rankings: Mapping[str, Ranking], k: int, *, k_rrf: float = 10.0,
        channel_weights: Mapping[str, float] | None = None, key_weights: KeyWeights = None) -> Candidates:
    """Fuse named rankings into the top ``k`` documents (a ``Candidates`` pool, best first).

    ``key_weights`` (an array over keys, or a function of an array of keys) multiplies a
    document's fused score (per-source and per-kind weights; 0 drops it).
    """
    names = list(rankings)
    if k <= 0 or not names:
        return Candidates.empty(names)
    all_keys, ranks, raw, _ = _table(rankings)
    if len(all_keys) == 0:
        return Candidates.empty(names)
    w = np.array([1.0 if channel_weights is None else float(channel_weights.get(n, 1.0)) for n in names])
    return _pool(names, all_keys, rrf_scores(ranks, w, k_rrf), ranks, raw, w, key_weights, k)


def rrf_scores(ranks: np.ndarray, weights: np.ndarray, k_rrf: float) -> np.ndarray:
    """Each row's RRF score from its 1-based rank in each channel (a column; 0: not ranked there):
    ``sum_c weight_c / (k_rrf + rank_c)``."""
    present = ranks > 0
    terms = np.where(present, weights / (k_rrf + np.where(present, ranks, 1)), 0.0)
    if terms.shape[1] == 2:  # the sum of two is one addition whatever the order: a reduction over rows of two is slow
        return terms[:, 0] + terms[:, 1]
    return terms.sum(axis=1)


def merge(ranking: Ranking, extra: Ranking, depth: int, same_score: float = 0.0) -> Ranking:
    """``ranking`` and ``extra`` (other documents scored on the same scale) as one ranking by
    score, cut to ``depth``: how a channel ranks extra documents (saved findings) as if the index
    held them. An extra document goes before the documents it ties with, and an extra score within
    ``same_score`` (relative) of a document's counts as a tie (a score computed outside the index
    in another precision)."""
    if not len(extra):
        return ranking if len(ranking) <= depth else Ranking(ranking.keys[:depth], ranking.scores[:depth])
    if not len(ranking):
        return Ranking(extra.keys[:depth], extra.scores[:depth])
    # each extra document (best first) goes after every document scoring strictly more, and after
    # the extra documents before it
    at = len(ranking) - np.searchsorted(ranking.scores[::-1], extra.scores * (1.0 + same_score), side="right")
    place = at + np.arange(len(extra))
    total = len(ranking) + len(extra)
    is_extra = np.zeros(total, dtype=bool)
    is_extra[place] = True
    keys = np.empty(total, dtype=np.int64)
    scores = np.empty(total, dtype=np.float32)
    keys[is_extra], scores[is_extra] = extra.keys, extra.scores
    keys[~is_extra], scores[~is_extra] = ranking.keys, ranking.scores
    return Ranking(keys[:depth], scores[:depth])


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


def convex(rankings: Mapping[str, Ranking], k: int, *, calibration: str = "minmax",
           channel_weights: Mapping[str, float] | None = None, top_n: int | None = None,
           params: Mapping[str, tuple[float, float]] | None = None, key_weights: KeyWeights = None) -> Candidates:
    """Fuse named rankings into the top ``k`` documents by a weighted sum of calibrated scores
    (``calibrate``; weights as given, e.g. lexical 0.4 / dense 0.6). A document listed by no
    channel of positive weight, or whose ``key_weights`` is 0, is left out. Ties as in ``rrf``."""
    names = list(rankings)
    if k <= 0 or not names:
        return Candidates.empty(names)
    all_keys, ranks, raw, where = _table(rankings)
    if len(all_keys) == 0:
        return Candidates.empty(names)
    values = np.zeros((len(all_keys), len(names)))
    for c, n in enumerate(names):
        r = rankings[n]
        cal = calibrate(r.scores, calibration, top_n, (params or {}).get(n))
        at, idx = where[c]
        values[at, c] = cal[idx]
    w = np.array([1.0 if channel_weights is None else float(channel_weights.get(n, 1.0)) for n in names])
    scores = (values * w).sum(axis=1)
    keep = ((ranks > 0) & (w > 0)).any(axis=1)
    return _pool(names, all_keys, scores, ranks, raw, w, key_weights, k, keep)


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


def add_priors(pool: Candidates, bonus: np.ndarray, k: int) -> Candidates:
    """Add ``bonus[i]`` to row ``i``'s score, re-sort (ties as in ``rrf``, by the best rank in any
    channel) and keep the top ``k``."""
    if not len(pool):
        return pool
    return pool.rescored(pool.scores + np.asarray(bonus, dtype=np.float64)).sort().head(k)


def statements_first(pool: Candidates, about: np.ndarray | None, allowed=None, limit: int | None = None) -> Candidates:
    """``pool`` with each statement placed right above the first proof or example of it that
    ranks higher than the statement itself (or that ranked while the statement did not).
    ``about[key]``: the key of the statement a document proves or illustrates, -1 for none; keys
    past its end (findings) have none. A lifted statement takes its proof's score and keeps its own
    channel ranks and raw scores (none when no channel ranked it); ``allowed`` (the request's
    filters over keys: a boolean array, or a function of an array of keys) keeps a filtered-out
    statement from coming back this way. The pool grows by the statements brought in; ``limit``
    stops once that many rows are placed (the rows after them could only follow)."""
    if about is None or not len(pool):
        return pool
    n = len(about)
    keys = pool.keys
    targets = np.full(len(keys), -1, dtype=np.int64)
    ours = keys < n
    targets[ours] = about[keys[ours]]
    lift = targets >= 0
    if allowed is not None and lift.any():
        ok = allowed(targets[lift]) if callable(allowed) else np.asarray(allowed)[targets[lift]]
        lift[np.flatnonzero(lift)[~np.asarray(ok, dtype=bool)]] = False
    if not (lift.any() if limit is None else lift[:limit].any()):
        # nothing to lift among the rows placed (each row before the first lift places itself, one a row)
        return pool if limit is None else pool.head(limit)
    at = {key: i for i, key in enumerate(keys.tolist())}
    rows: list[int] = []         # the pool row each output row copies (-1: a statement from outside the pool)
    outside: list[int] = []      # the key of each such statement
    score_of: list[int] = []     # the pool row whose score it takes
    lifted: list[int] = []       # its lifted_by
    placed: set[int] = set()
    stop = len(keys) * 2 if limit is None else limit
    was_lifted = pool.lifted_by.tolist()
    for i, (key, x, up) in enumerate(zip(keys.tolist(), targets.tolist(), lift.tolist())):
        if len(rows) >= stop:
            break
        if key in placed:
            continue
        if up and x not in placed:
            j = at.get(x, -1)
            rows.append(j)
            if j < 0:
                outside.append(x)
            score_of.append(i)
            lifted.append(key)
            placed.add(x)
        rows.append(i)
        score_of.append(i)
        lifted.append(was_lifted[i])
        placed.add(key)
    if limit is not None:
        rows, score_of, lifted = rows[:limit], score_of[:limit], lifted[:limit]
    src = np.array(rows, dtype=np.int64)
    new = src < 0
    out = pool.take(np.where(new, 0, src))
    keys_out = out.keys.copy()
    ranks, raw = out.ranks.copy(), out.raw.copy()
    marks = {name: v.copy() for name, v in out.marks.items()}
    if new.any():
        keys_out[new] = outside[:int(new.sum())]
        ranks[new] = 0
        raw[new] = np.nan
        for v in marks.values():
            v[new] = 0
    return Candidates(pool.channels, keys_out, pool.scores[np.array(score_of, dtype=np.int64)], ranks, raw,
                      np.array(lifted, dtype=np.int64), marks)
