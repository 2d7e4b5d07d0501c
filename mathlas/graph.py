"""The dependency graph of a formal bundle (``graph/dependencies.npz``), read-only and lazy.

Two CSR adjacency lists over document keys: ``uses`` (what a declaration refers to in its statement
and proof) and ``used_by`` (its transpose). Loaded once per bundle on first use (a few MB for Mathlib).
"""
from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mathlas.bundle import GRAPH
from mathlas.checks import integer
from mathlas.errors import BundleCorruptError, UsageError
from mathlas.request import DIRECTIONS
from mathlas.request import MAX_DEPENDENCY_DEPTH as MAX_DEPTH

if TYPE_CHECKING:
    from mathlas.engine import Bundle


class DependencyGraph:
    def __init__(self, root: Path, count: int, listed: bool = True):
        path = Path(root) / GRAPH
        if not listed or not path.is_file():  # a graph file the manifest does not list is never read
            raise UsageError(f"bundle {Path(root).name} has no dependency graph ({GRAPH}); "
                             "only formal bundles (e.g. --bundle mathlib) carry one")
        try:
            with np.load(path) as z:
                self._adj = {d: (z[f"{d}_indptr"], z[f"{d}_indices"]) for d in DIRECTIONS}
        except (OSError, KeyError, ValueError) as e:
            raise BundleCorruptError(f"bundle {Path(root).name}: cannot read {GRAPH} ({e}); reinstall it") from None
        for _d, (indptr, indices) in self._adj.items():
            if len(indptr) != count + 1 or (len(indices) and (indices.min() < 0 or indices.max() >= count)):
                raise BundleCorruptError(f"bundle {Path(root).name}: {GRAPH} does not match its {count} documents")

    @property
    def edges(self) -> int:
        return int(len(self._adj["uses"][1]))

    def neighbours(self, key: int, direction: str) -> np.ndarray:
        indptr, indices = self._adj[direction]
        return indices[indptr[key]:indptr[key + 1]]

    def degree(self, key: int, direction: str) -> int:
        indptr, _ = self._adj[direction]
        return int(indptr[key + 1] - indptr[key])

    def walk(self, key: int, direction: str, depth: int) -> list[tuple[int, int]]:
        """(key, distance) of every declaration within ``depth`` steps, breadth first, each once."""
        if direction not in DIRECTIONS:
            raise UsageError(f"direction must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
        integer(depth, "depth", 1, MAX_DEPTH)
        seen = {key}
        out: list[tuple[int, int]] = []
        frontier = [key]
        for dist in range(1, depth + 1):
            nxt: list[int] = []
            for k in frontier:
                for j in self.neighbours(k, direction).tolist():
                    if j not in seen:
                        seen.add(j)
                        nxt.append(j)
                        out.append((j, dist))
            frontier = nxt
        return out


_GRAPHS: weakref.WeakKeyDictionary[Bundle, DependencyGraph] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def graph_of(bundle: Bundle) -> DependencyGraph:
    """The bundle's dependency graph, loaded on first use."""
    g = _GRAPHS.get(bundle)
    if g is None:
        with _LOCK:
            g = _GRAPHS.get(bundle)
            if g is None:
                g = DependencyGraph(bundle.root, len(bundle), GRAPH in bundle.manifest.files)
                _GRAPHS[bundle] = g
    return g
