"""Formal search tools: ``search_formal_math`` and ``get_dependencies`` over a Lean declaration bundle.

Plain functions the Python API can call and the MCP server registers unchanged: each signature is
the tool's schema. Each builds one request and calls the library's capability
(``mathlas.service.lean_search`` / ``dependencies``); the formal bundle itself (which one, its
module filter, the Stacks bridge) is ``mathlas.formal``'s.
"""
from __future__ import annotations

from typing import Literal

from mathlas.errors import UsageError
from mathlas.formal import DEFAULT_LIMIT
from mathlas.request import DependencyRequest, LeanSearchRequest, Mode
from mathlas.service import DependencyResult, FormalSearchResult, dependencies, lean_search

__all__ = ["search_formal_math", "get_dependencies", "FormalSearchResult", "DependencyResult"]

Direction = Literal["uses", "used_by"]


def search_formal_math(query: str, k: int = 10, modules: list[str] | None = None, kinds: list[str] | None = None,
                       mode: Mode = "hybrid", prior_weight: float | None = None,
                       bundle: str | None = None, offset: int = 0, deprecated: bool = True,
                       all_copies: bool = False) -> FormalSearchResult:
    """Search Lean 4 declarations (Mathlib or a project's). Hits: lean:<Name> ids, kinds, signatures,
    modules, links.

    Args:
        query: a name (Nat.Prime.two_le), words or a statement (a + b = b + a).
        k: hits per answer.
        modules: only these modules and below, e.g. ["Mathlib.NumberTheory"].
        kinds: e.g. ["theorem", "lemma"] or ["def", "structure"].
        mode: hybrid fuses keywords (BM25) and meaning (dense).
        prior_weight: PageRank prior weight; default: the bundle's; 0: off.
        bundle: default: $MATHLAS_FORMAL_BUNDLE or all installed.
        offset: skip this many hits (next page: offset + k).
        deprecated: false: leave deprecated ones out.
        all_copies: an alias and its target as two hits.
    """
    if not isinstance(all_copies, bool):
        raise UsageError(f"all_copies must be true or false, got {all_copies!r}")
    req = LeanSearchRequest.make(query, k, mode=mode, modules=modules, kinds=kinds, prior_weight=prior_weight,
                                 offset=offset, deprecated=deprecated, collapse=not all_copies)
    return lean_search(req, bundle)


def get_dependencies(id: str, direction: Direction = "uses", depth: int = 1, limit: int = DEFAULT_LIMIT,
                     bundle: str | None = None) -> DependencyResult:
    """The Lean declarations a declaration uses or that use it, nearest first. Uses through dot
    notation, notation or tactics are not seen.

    Args:
        id: e.g. "lean:Nat.Prime.two_le".
        direction: uses: what it uses; used_by: what uses it.
        depth: steps followed.
        limit: at most this many; `total` counts all.
        bundle: default: $MATHLAS_FORMAL_BUNDLE or all installed.
    """
    return dependencies(DependencyRequest.make(id, direction, depth, limit), bundle)
