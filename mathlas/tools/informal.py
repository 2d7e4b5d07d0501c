"""Search tools over the informal bundle: ``search_existing_math``, ``get_by_id`` and ``get_statement``.

They are plain functions the Python API can call; the MCP server registers them unchanged. They open
bundles through ``mathlas.engine.open_bundle`` (one shared ``Bundle`` per directory), check their
arguments once into a ``SearchRequest``, and search the findings saved with add_finding as one
more channel of the same fusion (``Bundle.rank``). Importing this module loads nothing heavy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mathlas.errors import UsageError
from mathlas.hit import Document, Hit
from mathlas.request import Mode, SearchRequest
from mathlas.tools import NextStep, available_tool_names

# How many top hits get a get_by_id suggestion in ``next``.
NEXT_FOR_TOP = 3
_NUMBER = re.compile(r"\s*[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?\s*")
# What the tool calls the request's source lists in messages
_LABELS = {"sources": "source_filter.include", "exclude_sources": "source_filter.exclude"}


@dataclass
class SearchResult:
    """Ranked hits for a query, and which tool calls to make on the promising ones."""

    query: str
    bundle: str          # name-version of the bundle searched
    mode: str
    hits: list[Hit]
    next: list[NextStep] = field(default_factory=list)


def _split_filter(source_filter: Any) -> tuple[Any, Any]:
    if source_filter is None:
        return None, None
    if not isinstance(source_filter, dict):
        raise UsageError('source_filter must be an object like {"include": ["stacks"], "exclude": ["napkin"]}')
    extra = set(source_filter) - {"include", "exclude"}
    if extra:
        raise UsageError(f"source_filter takes only the keys include and exclude, not {', '.join(sorted(extra))}")
    return source_filter.get("include"), source_filter.get("exclude")


def _next_steps(query: str, hits: list[Hit], filtered: bool) -> list[NextStep]:
    steps = [NextStep("get_by_id", {"id": h.id}, "the whole statement, link and license")
             for h in hits[:NEXT_FOR_TOP]]
    if _NUMBER.fullmatch(query) and "identify_constant" in available_tool_names():
        steps.insert(0, NextStep("identify_constant", {"value": query.strip()},
                                 "the query is a number: look for a closed form"))
    if not hits and filtered:
        steps.append(NextStep("search_existing_math", {"query": query}, "nothing passed the filters: search all sources"))
    return steps


def search_existing_math(query: str, k: int = 10, source_filter: dict[str, list[str]] | None = None,
                         source_weights: dict[str, float] | None = None, mode: Mode = "hybrid",
                         kinds: list[str] | None = None, bundle: str | None = None,
                         paper_filter: dict[str, Any] | None = None,
                         priors: dict[str, float] | None = None, offset: int = 0,
                         rerank: bool | None = None, kind_weights: dict[str, float] | None = None) -> SearchResult:
    """Search known mathematics (Stacks Project, PlanetMath, HoTT book, Open Logic, Napkin, ProofNet,
    your add_finding results) for statements matching a question, claim or formula: use it before
    proving something. Hits have stable ids for get_statement and get_by_id.

    Args:
        query: words, a claim or a formula (LaTeX welcome).
        k: hits per answer.
        source_filter: e.g. {"include": ["stacks"]}; "findings" are add_finding results.
        source_weights: factor on a source's score, e.g. {"stacks": 2}; 0 drops it.
        mode: hybrid fuses keywords (lexical, BM25) and meaning (dense).
        kinds: e.g. ["theorem", "definition"].
        bundle: default: $MATHLAS_BUNDLE or the default bundle.
        paper_filter: paper bundles: authors match whole words; a category without a dot matches its subcategories.
        priors: weights of the bundle's document priors, e.g. {"citations": 0.002}.
        offset: skip this many hits (next page: offset + k).
        rerank: rescore the top hits with the bundle's reranker; default: the bundle's choice.
        kind_weights: factor on a kind's score, e.g. {"proof": 0.5}; 0 drops it.
    """
    from mathlas.engine import open_bundle
    from mathlas.findings.store import open_store

    include, exclude = _split_filter(source_filter)
    # bad input fails here, before a bundle is opened (or installed)
    req = SearchRequest.make(query, k, mode=mode, sources=include, exclude_sources=exclude, kinds=kinds,
                             source_weights=source_weights, paper_filter=paper_filter, priors=priors,
                             offset=offset, rerank=rerank, kind_weights=kind_weights, labels=_LABELS)
    b = open_bundle(bundle)
    hits = b.rank(req, findings=open_store())
    return SearchResult(query=req.query, bundle=b.label, mode=req.mode, hits=hits,
                        next=_next_steps(req.query, hits, req.filtered))


def _finding_document(fid: str) -> Document:
    from mathlas.findings import KIND, LICENSE, SOURCE
    from mathlas.findings.store import open_store

    f = open_store().get(fid)
    return Document(id=f.id, source=SOURCE, kind=KIND, name=f.name, title="", body=f.statement, slogan=f.slogan,
                    text=f.search_text, link=f.source_url, license=LICENSE, bundle=SOURCE,
                    fields={"added": f.added, "provenance": f.provenance, "source_url": f.source_url})


def get_by_id(id: str, bundle: str | None = None) -> Document:  # noqa: A002 - `id` is the public argument name
    """The whole document behind a stable id: the statement as its source writes it (LaTeX or Lean),
    retrieval text, slogan, link, license and source fields. get_statement is smaller.

    Args:
        id: "<source>:<key>", from a search.
        bundle: default: $MATHLAS_BUNDLE or the default bundle (lean: ids: the formal bundle).
    """
    from mathlas.engine import open_bundle

    if isinstance(id, str) and id.strip().startswith("finding:"):
        return _finding_document(id.strip())
    if bundle is None and isinstance(id, str) and id.strip().startswith("lean:"):
        from mathlas.tools.lean_search import open_formal

        b = open_formal(None)  # Lean declarations live in the formal bundle
    else:
        b = open_bundle(bundle)
    doc = b.get(id)
    if doc.source == "stacks":  # the formal<->informal bridge: Mathlib declarations tagged @[stacks TAG]
        from mathlas.tools.lean_search import stacks_to_lean

        formal = stacks_to_lean(doc.id.split(":", 1)[1])
        if formal:
            doc.fields["formal"] = formal
    return doc


@dataclass
class Statement:
    """A document's statement as its source writes it, and where it comes from."""

    id: str
    kind: str
    name: str
    statement: str
    link: str
    license: str


def get_statement(id: str, bundle: str | None = None) -> Statement:  # noqa: A002 - `id` is the public argument name
    """The statement behind a stable id as its source writes it (LaTeX or Lean), with name, link and
    license: get_by_id without the retrieval text and extra fields.

    Args:
        id: "<source>:<key>", from a search.
        bundle: default: $MATHLAS_BUNDLE or the default bundle (lean: ids: the formal bundle).
    """
    doc = get_by_id(id, bundle)
    return Statement(id=doc.id, kind=doc.kind, name=doc.name, statement=doc.body, link=doc.link, license=doc.license)
