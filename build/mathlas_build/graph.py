"""The reference graph of a formal bundle: who uses whom, and a PageRank over it.

Each Lean declaration lists the declarations it refers to (``Document.extra["dependencies"]``, from
the Lean reader). Here those names become document keys, stored as two CSR adjacency lists in
``graph/dependencies.npz`` (``uses`` and its transpose ``used_by``, int32), and a PageRank over the
``uses`` edges becomes the metadata column ``pagerank``: a declaration many others build on ranks
high. The column holds ``n * rank`` (1.0 = the uniform rank), so ``log(max(x, 1))`` is a prior that
is 0 for an ordinary declaration and grows with how central it is.
"""
from __future__ import annotations

import sys
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from mathlas.bundle import GRAPH
from mathlas_build.document import Document

DAMPING = 0.85


def dependency_ids(doc: Document) -> list[str]:
    """A document's dependencies as ids (``lean:`` added where the reader gave bare names)."""
    deps = doc.extra.get("dependencies") or []
    if isinstance(deps, str):
        deps = deps.split()
    prefix = doc.id.split(":", 1)[0] + ":"
    return [d if ":" in d else prefix + d for d in deps]


def adjacency(docs: Sequence[Document]) -> tuple[np.ndarray, np.ndarray, int]:
    """CSR (indptr, indices) of the ``uses`` edges between documents; unknown names are dropped."""
    key = {d.id: i for i, d in enumerate(docs)}
    indptr = np.zeros(len(docs) + 1, dtype=np.int64)
    cols: list[int] = []
    dropped = 0
    for i, d in enumerate(docs):
        named = set(dependency_ids(d)) - {d.id}
        targets = sorted({key[t] for t in named if t in key})
        dropped += len(named) - len(targets)
        cols.extend(targets)
        indptr[i + 1] = len(cols)
    return indptr, np.asarray(cols, dtype=np.int32), dropped


def transpose(indptr: np.ndarray, indices: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    src = np.repeat(np.arange(n, dtype=np.int32), np.diff(indptr))
    order = np.lexsort((src, indices))
    t_indices = src[order]
    t_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(indices, minlength=n), out=t_indptr[1:])
    return t_indptr, t_indices


def pagerank(indptr: np.ndarray, indices: np.ndarray, n: int, *, damping: float = DAMPING,
             tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    """PageRank over the ``uses`` edges (rank flows from a user to what it uses), summing to 1."""
    if n == 0:
        return np.zeros(0)
    out_deg = np.diff(indptr).astype(np.float64)
    src = np.repeat(np.arange(n), np.diff(indptr))
    rank = np.full(n, 1.0 / n)
    dangling = out_deg == 0
    for _ in range(max_iter):
        share = np.where(dangling, 0.0, rank / np.maximum(out_deg, 1))
        new = np.bincount(indices, weights=share[src], minlength=n)
        new = damping * (new + rank[dangling].sum() / n) + (1 - damping) / n
        if np.abs(new - rank).sum() < tol:
            return new
        rank = new
    return rank


def attach_graph(docs: Sequence[Document], root: Path, *, quiet: bool = False) -> dict | None:
    """Write ``graph/dependencies.npz`` under ``root``, and put each document's resolved dependency
    ids and relative PageRank into its ``extra`` (the metadata columns ``dependencies`` and
    ``pagerank``). Returns the manifest's ``graph`` block, or None when no document has dependencies."""
    if not any("dependencies" in d.extra for d in docs):
        return None
    n = len(docs)
    indptr, indices, dropped = adjacency(docs)
    t_indptr, t_indices = transpose(indptr, indices, n)
    rank = pagerank(indptr, indices, n) * n
    for i, d in enumerate(docs):
        d.extra["dependencies"] = [docs[j].id for j in indices[indptr[i]:indptr[i + 1]]]
        d.extra["pagerank"] = float(rank[i])
    path = root / GRAPH
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, uses_indptr=indptr, uses_indices=indices, used_by_indptr=t_indptr, used_by_indices=t_indices)
    if not quiet:
        print(f"[graph] {len(indices):,} dependency edges between {n:,} documents "
              f"({dropped:,} references to names outside the bundle dropped)", file=sys.stderr, flush=True)
    return {"edges": int(len(indices)), "prior": "pagerank", "damping": DAMPING}
