"""Dense channel: binary HNSW candidates, then exact rescoring with the int8 vectors.

Stage 1 searches ``vectors/binary.usearch`` (hamming over binary codes of the centred vectors: sign
bits, or 3-bit thermometer codes, ``mathlas.bundle.BINARY_CODES``) for a pool of candidates; stage 2
rescores them with the memory-mapped int8 vectors, reading only those rows. When filters leave few
enough documents, the channel scans exactly those rows instead, so a filter never starves the top-k.
``name = "dense"``; ``rank(query, depth, filters)`` is the channel protocol of ``mathlas.ranking``.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mathlas.bundle import (BINARY_CODES, BINARY_INDEX, FLOAT_SCALES, FLOAT_VECTORS, VECTOR_CENTER,
                            VECTOR_THRESHOLDS, binary_codes, code_bits, usearch_index_class)
from mathlas.errors import BundleCorruptError
from mathlas.ranking.filters import Filters
from mathlas.ranking.candidates import Ranking

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.ranking.query import Query

# Filtered searches over at most this many documents are exact scans (a few ms for 10^5 x 384 int8).
EXACT_SCAN_LIMIT = 100_000


# Rows per matrix-vector product when rescoring (see DenseChannel.rescore).
RESCORE_BLOCK = 256

# Binary candidates rescored per query: 800 reach recall@10 = 0.984 of exact search on the default
# bundle at 2.5 ms (200: 0.950, 400: 0.969, 1600: 0.994 at 16 ms); scripts/bench_recall.py.
MIN_POOL = 800
# A larger corpus puts more near-ties into each hamming radius, so the pool grows with sqrt(N) past
# POOL_SCALE_DOCS, up to POOL_MAX_FACTOR x MIN_POOL. Measured recall@10 against exact int8 search:
# Mathlib formal bundle (280k x 384): pool 800 0.942 (3.3 ms), 1600 0.974 (6.5 ms), 2400 0.983;
# synthetic 1M x 1024 (docs/scale.md): 800 0.924, 1600 0.957, 3200 0.963 (22.5 ms).
POOL_SCALE_DOCS = 70_000
POOL_MAX_FACTOR = 4


def default_pool(k: int, count: int = 0) -> int:
    """Binary candidates to rescore for a top-k request over ``count`` documents:
    max(4k, 800 x clip(sqrt(count / 70,000), 1, 4)) rounded up to a multiple of 100 (800 up to 70k
    documents, 1,600 at 280k, 3,100 at 1M). The same for both binary codes: with thermometer codes
    the ranking is no longer the limit at 1M, the HNSW walk is (its breadth is the pool), so recall
    still grows with the pool there (synthetic 1M: 0.959 at 800, 0.969 at 1,600, 0.974 at 3,200)."""
    factor = min(max((count / POOL_SCALE_DOCS) ** 0.5, 1.0), POOL_MAX_FACTOR)
    return max(4 * k, -(-int(MIN_POOL * factor) // 100) * 100)


class DenseChannel:
    """A bundle's binary HNSW index and int8 vectors; the ranking pipeline's ``dense`` channel."""

    name = "dense"

    def __init__(self, root: Path, count: int, dims: int, codes: str = "sign"):
        Index = usearch_index_class()
        root = Path(root)
        if codes not in BINARY_CODES:
            raise BundleCorruptError(f"bundle {root.name}: unknown vectors.binary_codes {codes!r}")
        path = root / BINARY_INDEX
        index = Index.restore(str(path), view=True) if path.is_file() else None
        if index is None:  # usearch returns None for a missing or unreadable file
            raise BundleCorruptError(f"bundle {root.name}: cannot read {BINARY_INDEX}; reinstall the bundle")
        try:
            self.vectors = np.load(root / FLOAT_VECTORS, mmap_mode="r")
            self.scales = np.load(root / FLOAT_SCALES, mmap_mode="r")
            self.center = np.load(root / VECTOR_CENTER)
            self.thresholds = np.load(root / VECTOR_THRESHOLDS) if codes == "thermometer3" else None
        except (OSError, ValueError) as e:
            raise BundleCorruptError(f"bundle {root.name}: cannot read the vectors ({e})") from None
        if self.vectors.shape != (count, dims) or self.scales.shape != (count,) or len(index) != count \
                or index.ndim != code_bits(dims, codes) \
                or (self.thresholds is not None and self.thresholds.shape != (dims,)):
            raise BundleCorruptError(
                f"bundle {root.name}: vector files disagree with the manifest ({self.vectors.shape}, "
                f"{len(index)} binary codes of {index.ndim} bits, expected {count} x {dims}, {codes} codes)")
        self.index = index
        self.count = count
        self.codes = codes
        # plain arrays over the same mapped pages: a memmap's own indexing costs some microseconds a call
        self._rows = self.vectors.view(np.ndarray)
        self._scales = self.scales.view(np.ndarray)

    def rescore(self, q: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Exact cosine scores of a unit query against the stored vectors of ``keys``.

        In blocks of ``RESCORE_BLOCK`` rows: a float32 copy of a whole pool (800 x 1024) crosses
        OpenBLAS's threshold for a threaded matrix-vector product, which costs ~10x the CPU of the
        single-threaded one (8 vs 0.6 ms at 800 rows); blocks also keep an exact scan of 10^5 rows
        from allocating a float32 copy of all of them. Same scores either way.
        """
        keys = np.asarray(keys, dtype=np.int64)
        order = np.argsort(keys)  # sorted reads are kinder to the page cache
        rows = keys[order]
        dots = np.empty(len(rows), dtype=np.float32)
        for a in range(0, len(rows), RESCORE_BLOCK):
            block = self._rows[rows[a:a + RESCORE_BLOCK]].astype(np.float32)
            np.matmul(block, q, out=dots[a:a + RESCORE_BLOCK])
        scores = np.empty(len(keys), dtype=np.float32)
        scores[order] = dots * self._scales[rows]
        return scores

    def exact(self, q: np.ndarray, k: int, keys: np.ndarray | None = None) -> Ranking:
        """Exact top-k over ``keys`` (all documents when None): the oracle for recall checks."""
        keys = np.arange(self.count, dtype=np.int64) if keys is None else np.asarray(keys, dtype=np.int64)
        if len(keys) == 0:
            return Ranking.empty()
        scores = self.rescore(q, keys)
        return _top(keys, scores, k)

    def rank(self, query: Query, depth: int, filters: Filters) -> Ranking:
        """The channel protocol (``mathlas.ranking.Channel``): the query's vector, ``depth`` deep."""
        return self.search(query.vector(), depth, filters, pool=query.pool)

    def search(self, q: np.ndarray, k: int, filters: Filters = Filters(), pool: int | None = None) -> Ranking:
        q = np.asarray(q, dtype=np.float32).reshape(-1)
        pool = max(pool or default_pool(k, self.count), k)
        allowed = filters.allowed
        if allowed is not None:
            n_allowed = int(allowed.sum())
            if n_allowed == 0:
                return Ranking.empty()
            if n_allowed <= EXACT_SCAN_LIMIT:
                return self.exact(q, k, np.flatnonzero(allowed))
            pool = min(self.count, int(pool * self.count / n_allowed) + k)
        candidates = self._candidates(q, pool)
        if allowed is not None:
            candidates = candidates[allowed[candidates]]
            if len(candidates) < k:
                return self.exact(q, k, np.flatnonzero(allowed))
        return _top(candidates, self.rescore(q, candidates), k)

    def _candidates(self, q: np.ndarray, pool: int) -> np.ndarray:
        pool = min(pool, self.count)
        # The walk's breadth follows this request, not the largest pool ever asked for (one pool=3200
        # call made every later search walk 3200 nodes), but never narrower than the default pool:
        # a small pool saves rescoring, and a narrow walk loses recall (1M synthetic, pool 200:
        # 0.879 at ef 800, 0.755 at ef 200). usearch 2.26 has no per-call setting, so concurrent
        # searches with different pools share it; each still gets ``pool`` results.
        self.index.expansion_search = max(pool, MIN_POOL)
        matches = self.index.search(binary_codes(q, self.center, self.thresholds)[0], pool)
        return np.asarray(matches.keys, dtype=np.int64)


def _top(keys: np.ndarray, scores: np.ndarray, k: int) -> Ranking:
    if len(keys) > k:
        part = np.argpartition(-scores, k - 1)[:k]
        keys, scores = keys[part], scores[part]
    order = np.lexsort((keys, -scores))
    return Ranking(keys[order], scores[order])
