"""The two shapes ranking works on: ``Ranking`` (one channel's answer) and ``Candidates`` (the fused pool).

A channel answers with parallel arrays, document keys best first and its own raw scores (BM25 for
the lexical channel, the cosine for the dense one). Fusion turns the channels' rankings into one
``Candidates``: one row per document any channel ranked, with its fused score, its rank and raw
score in every channel, and what the stages after fusion add (``marks``: the reranker's place;
``lifted_by``: the statement-first rule's proof). Everything is a numpy array, so a stage rescores,
reorders or cuts a pool of a few hundred candidates without one Python object per candidate;
``Fused`` is a row of it, made only when someone iterates (tests, scripts).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

NO_RANK = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Ranking:
    """One channel's answer: document keys best first, with that channel's own scores."""

    keys: np.ndarray    # int64
    scores: np.ndarray  # float32, same length, non-increasing

    @classmethod
    def empty(cls) -> Ranking:
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))

    @classmethod
    def of(cls, keys, scores=None) -> Ranking:
        keys = np.asarray(keys, dtype=np.int64)
        if scores is None:
            scores = -np.arange(len(keys), dtype=np.float32)
        return cls(keys, np.asarray(scores, dtype=np.float32))

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True)
class Fused:
    """One row of a ``Candidates`` pool: its key, score, each channel's rank (None: not ranked there;
    a stage's mark such as ``rerank`` too) and, for a statement placed above its own proof or
    example by the statement-first rule, that hit's key (``lifted_by``; -1 otherwise)."""

    key: int
    score: float
    ranks: dict[str, int | None]
    lifted_by: int = -1


@dataclass(frozen=True)
class Candidates:
    """The candidate pool, best first: one row per document, parallel arrays.

    ``channels`` names the columns of ``ranks`` (1-based rank in that channel, 0: not ranked there)
    and ``raw`` (that channel's own score, NaN: not ranked there). ``scores`` is the current score
    (fused, then as each stage leaves it). ``marks`` holds what a stage records per row under its
    name (the reranker: its 1-based place, 0 for rows it did not rescore); ``lifted_by`` the key of
    the proof a statement was placed above (-1: none). Keys at or past the bundle's size are extra
    documents (saved findings), ``key - len(bundle)`` in their own list."""

    channels: tuple[str, ...]
    keys: np.ndarray                 # int64 [m]
    scores: np.ndarray               # float64 [m]
    ranks: np.ndarray                # int64 [m, len(channels)]
    raw: np.ndarray                  # float64 [m, len(channels)]
    lifted_by: np.ndarray            # int64 [m]
    marks: Mapping[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def empty(cls, channels: Sequence[str] = ()) -> Candidates:
        c = len(channels)
        return cls(tuple(channels), np.zeros(0, np.int64), np.zeros(0), np.zeros((0, c), np.int64),
                   np.zeros((0, c)), np.zeros(0, np.int64))

    @classmethod
    def from_rows(cls, rows: Sequence[Fused], channels: Sequence[str] | None = None) -> Candidates:
        """A pool written out by hand (tests): the channels are those the rows' ``ranks`` name, in order."""
        if channels is None:
            channels = list(dict.fromkeys(c for f in rows for c in f.ranks))
        channels = tuple(channels)
        ranks = np.array([[f.ranks.get(c) or 0 for c in channels] for f in rows], dtype=np.int64).reshape(-1, len(channels))
        raw = np.where(ranks > 0, -ranks.astype(np.float64), np.nan)
        return cls(channels, np.array([f.key for f in rows], dtype=np.int64),
                   np.array([f.score for f in rows], dtype=np.float64), ranks, raw,
                   np.array([f.lifted_by for f in rows], dtype=np.int64))

    def __len__(self) -> int:
        return len(self.keys)

    def take(self, rows) -> Candidates:
        """The pool's rows ``rows`` (indices, in that order)."""
        rows = np.asarray(rows, dtype=np.int64)
        return Candidates(self.channels, self.keys[rows], self.scores[rows], self.ranks[rows], self.raw[rows],
                          self.lifted_by[rows], {k: v[rows] for k, v in self.marks.items()})

    def head(self, n: int) -> Candidates:
        """The first ``n`` rows."""
        if n >= len(self):
            return self
        return Candidates(self.channels, self.keys[:n], self.scores[:n], self.ranks[:n], self.raw[:n],
                          self.lifted_by[:n], {k: v[:n] for k, v in self.marks.items()})

    def rescored(self, scores: np.ndarray) -> Candidates:
        """The same rows with new scores (not re-sorted: ``sort`` does that)."""
        return Candidates(self.channels, self.keys, np.asarray(scores, dtype=np.float64), self.ranks, self.raw,
                          self.lifted_by, self.marks)

    def marked(self, name: str, values: np.ndarray) -> Candidates:
        """The same rows with a stage's per-row mark ``name`` (an int array, 0: none)."""
        return Candidates(self.channels, self.keys, self.scores, self.ranks, self.raw, self.lifted_by,
                          {**self.marks, name: np.asarray(values, dtype=np.int64)})

    def placed_first(self, placed: Sequence[int], mark: str) -> Candidates:
        """The pool with the documents ``placed`` (keys) first, in that order (those outside the pool
        added, ranked by no channel), then the other rows in their order; each placed row marked
        ``mark`` with its place (1, 2, ...). The placed rows take the pool's best score, so the
        scores stay in order."""
        at = {k: i for i, k in enumerate(self.keys.tolist())}
        pool = self
        c = len(self.channels)
        new = [k for k in dict.fromkeys(placed) if k not in at]
        if new:
            m = len(new)
            pool = Candidates(self.channels, np.concatenate([self.keys, np.asarray(new, dtype=np.int64)]),
                              np.concatenate([self.scores, np.zeros(m)]),
                              np.concatenate([self.ranks, np.zeros((m, c), dtype=np.int64)]),
                              np.concatenate([self.raw, np.full((m, c), np.nan)]),
                              np.concatenate([self.lifted_by, np.full(m, -1, dtype=np.int64)]),
                              {name: np.concatenate([v, np.zeros(m, dtype=v.dtype)]) for name, v in self.marks.items()})
            at.update({k: len(self) + i for i, k in enumerate(new)})
        first = [at[k] for k in dict.fromkeys(placed)]
        chosen = set(first)
        order = first + [i for i in range(len(pool)) if i not in chosen]
        best = float(pool.scores.max()) if len(pool) else 1.0
        places = np.zeros(len(pool), dtype=np.int64)
        places[first] = np.arange(1, len(first) + 1)
        out = pool.take(order)
        scores = out.scores.copy()
        scores[:len(first)] = np.maximum(scores[:len(first)], best)
        return out.rescored(scores).marked(mark, places[order])

    def best_rank(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Each row's best channel rank (``NO_RANK`` when none), over the channels whose ``weights``
        are positive (all channels when None): fusion's tie-break after the score."""
        present = self.ranks > 0
        if weights is not None:
            present = present & (np.asarray(weights) > 0)
        if not self.ranks.shape[1]:
            return np.full(len(self), NO_RANK, dtype=np.int64)
        counted = np.where(present, self.ranks, NO_RANK)
        best = counted[:, 0]
        for j in range(1, counted.shape[1]):  # column by column: a minimum over rows of two is slow
            best = np.minimum(best, counted[:, j])
        return best

    def sort(self, weights: np.ndarray | None = None) -> Candidates:
        """Best first: by score, then best rank (``best_rank(weights)``), then key (deterministic)."""
        return self.take(np.lexsort((self.keys, self.best_rank(weights), -self.scores)))

    def rank_in(self, channel: str) -> np.ndarray:
        """Each row's rank in ``channel`` (0: not ranked there, or the channel did not run)."""
        if channel not in self.channels:
            return np.zeros(len(self), dtype=np.int64)
        return self.ranks[:, self.channels.index(channel)]

    def raw_in(self, channel: str) -> np.ndarray:
        """Each row's raw score in ``channel`` (NaN: not ranked there, or the channel did not run)."""
        if channel not in self.channels:
            return np.full(len(self), np.nan)
        return self.raw[:, self.channels.index(channel)]

    def ranks_of(self, i: int) -> dict[str, int | None]:
        """Row ``i``'s ranks as a hit carries them: each channel's, then each mark's (None: none)."""
        out: dict[str, int | None] = {c: (int(r) or None) for c, r in zip(self.channels, self.ranks[i].tolist())}
        for name, values in self.marks.items():
            out[name] = int(values[i]) or None
        return out

    def ranks_list(self) -> list[dict[str, int | None]]:
        """Every row's ``ranks_of``, read from the arrays once."""
        channels = self.channels
        marks = [(name, values.tolist()) for name, values in self.marks.items()]
        out = []
        for i, row in enumerate(self.ranks.tolist()):
            d: dict[str, int | None] = {c: r or None for c, r in zip(channels, row)}
            for name, values in marks:
                d[name] = values[i] or None
            out.append(d)
        return out

    def __getitem__(self, i: int) -> Fused:
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return Fused(int(self.keys[i]), float(self.scores[i]), self.ranks_of(i), int(self.lifted_by[i]))

    def __iter__(self) -> Iterator[Fused]:
        return (self[i] for i in range(len(self)))
