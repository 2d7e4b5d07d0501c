"""Search tools over the informal bundle: ``search_existing_math``, ``get_by_id`` and ``get_statement``.

Plain functions the Python API can call and the MCP server registers unchanged: each signature is
the tool's schema. Each builds one request labelled with the tool's own argument names and calls
the library's capability (``mathlas.service``), as every other surface does. Importing this module
loads nothing heavy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mathlas.errors import UsageError
from mathlas.hit import Document
from mathlas.request import Mode, SearchRequest
from mathlas.service import SearchResult, document, search

__all__ = ["search_existing_math", "get_by_id", "get_statement", "SearchResult", "Statement"]

# What the tool calls the request's source lists in messages
_LABELS = {"sources": "source_filter.include", "exclude_sources": "source_filter.exclude"}


def _split_filter(source_filter: Any) -> tuple[Any, Any]:
    if source_filter is None:
        return None, None
    if not isinstance(source_filter, dict):
        raise UsageError('source_filter must be an object like {"include": ["stacks"], "exclude": ["napkin"]}')
    extra = set(source_filter) - {"include", "exclude"}
    if extra:
        raise UsageError(f"source_filter takes only the keys include and exclude, not {', '.join(sorted(extra))}")
    return source_filter.get("include"), source_filter.get("exclude")


def search_existing_math(query: str, k: int = 10, source_filter: dict[str, list[str]] | None = None,
                         source_weights: dict[str, float] | None = None, mode: Mode = "hybrid",
                         kinds: list[str] | None = None, bundle: str | None = None,
                         paper_filter: dict[str, Any] | None = None,
                         priors: dict[str, float] | None = None, offset: int = 0,
                         rerank: bool | None = None, kind_weights: dict[str, float] | None = None,
                         all_copies: bool = False) -> SearchResult:
    """Search known mathematics (Stacks Project, PlanetMath, HoTT book, Open Logic, Napkin, ProofNet,
    ProofWiki, Metamath; findings: your add_finding results): use it before proving something.

    Args:
        query: a question, a claim or a formula (LaTeX welcome).
        k: hits per answer.
        source_filter: e.g. {"include": ["stacks"]}.
        source_weights: factor on a source's score, e.g. {"stacks": 2}; 0 drops it.
        mode: hybrid fuses keywords (lexical) and meaning (dense).
        kinds: e.g. ["theorem", "definition"].
        bundle: default: $MATHLAS_BUNDLE or the default bundle.
        paper_filter: paper bundles: authors as whole words; a category without a dot takes its subcategories.
        priors: weights of the bundle's priors, e.g. {"citations": 0.002}.
        offset: skip this many hits (next page: offset + k).
        rerank: rescore the top hits with the bundle's reranker (default: its choice).
        kind_weights: factor on a kind's score, e.g. {"proof": 0.5}; 0 drops it.
        all_copies: every copy of a theorem (default: one hit, the rest in also_in).
    """
    include, exclude = _split_filter(source_filter)
    if not isinstance(all_copies, bool):
        raise UsageError(f"all_copies must be true or false, got {all_copies!r}")
    # bad input fails here, before a bundle is opened (or installed)
    req = SearchRequest.make(query, k, mode=mode, sources=include, exclude_sources=exclude, kinds=kinds,
                             source_weights=source_weights, paper_filter=paper_filter, priors=priors,
                             offset=offset, rerank=rerank, kind_weights=kind_weights, collapse=not all_copies,
                             labels=_LABELS)
    return search(req, bundle)


def get_by_id(id: str, bundle: str | None = None) -> Document:  # noqa: A002 - `id` is the public argument name
    """The whole document behind a stable id: the statement as its source writes it (LaTeX or Lean),
    retrieval text, slogan, link, license, fields.

    Args:
        id: "<source>:<key>", from a search.
        bundle: default: $MATHLAS_BUNDLE or the default bundle (lean: ids: the formal bundle).
    """
    return document(id, bundle)


@dataclass
class Statement:
    """A document's statement as its source writes it, and where it comes from."""

    id: str
    kind: str
    heading: str
    statement: str
    link: str
    license: str


def get_statement(id: str, bundle: str | None = None) -> Statement:  # noqa: A002 - `id` is the public argument name
    """The statement behind a stable id as its source writes it (LaTeX or Lean), with heading, link and
    license; get_by_id gives the rest.

    Args:
        id: "<source>:<key>", from a search.
        bundle: default: $MATHLAS_BUNDLE or the default bundle (lean: ids: the formal bundle).
    """
    doc = document(id, bundle)
    return Statement(id=doc.id, kind=doc.kind, heading=doc.heading, statement=doc.body, link=doc.link,
                     license=doc.license)
