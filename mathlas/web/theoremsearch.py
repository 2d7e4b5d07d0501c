"""TheoremSearch's REST API (``POST /search``) mapped onto a mathlas bundle.

A program written against ``https://api.theoremsearch.com/search`` sends ``{"query", "n_results"
(or "limit"), "sources", "authors", "types", "tags", "paper_filter", "year_range",
"citation_range", "citation_weight", "include_unknown_citations"}`` and reads
``theorems[].{theorem_id, name, body, slogan, theorem_type, link, paper{...}, similarity, score,
has_metadata}``. Pointed at ``mathlas serve`` it gets the same shape, filled from the hit and its
bundle's metadata, and mathlas's own fields beside them (``label``, ``ranks``, ``link_kind``: "search"
where the link searches the source's site, as ProofWiki's does). Every field is mapped onto mathlas's filters and priors inside both channels,
before the top-k cut; a field that means nothing for the bundle searched (authors on a bundle
without paper metadata, say) is accepted and reported in ``mathlas.ignored`` and the
``X-Mathlas-Ignored`` header, never silently dropped. docs/http.md has the table field by field.

This module is pure mapping: ``parse`` checks a request body, ``plan`` fits it to a bundle,
``response`` shapes the hits. ``api.search_hits`` runs the search.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from mathlas.request import MODES, SURFACE_MAX_K, check_query
from mathlas.web.api import BundleFacts, ScoredHit, ScoredHits, UsageError

DEFAULT_RESULTS = 10

# mathlas source -> (TheoremSearch's name for it, the source's title, its home page, its authors)
SOURCES: dict[str, tuple[str, str, str, list[str]]] = {
    "stacks": ("Stacks Project", "The Stacks Project", "https://stacks.math.columbia.edu",
               ["The Stacks project authors"]),
    "planetmath": ("PlanetMath", "PlanetMath", "https://planetmath.org", ["The PlanetMath authors"]),
    "hott": ("HoTT Book", "Homotopy Type Theory: Univalent Foundations of Mathematics",
             "https://homotopytypetheory.org/book/", ["The Univalent Foundations Program"]),
    "openlogic": ("Open Logic Project", "The Open Logic Project", "https://openlogicproject.org",
                  ["The Open Logic Project"]),
    "napkin": ("An Infinitely Large Napkin", "An Infinitely Large Napkin", "https://venhance.github.io/napkin/",
               ["Evan Chen"]),
    "proofnet": ("ProofNet", "ProofNet", "https://github.com/zhangir-azerbayev/ProofNet",
                 ["Zhangir Azerbayev", "Bartosz Piotrowski", "Hailey Schoelkopf", "Edward W. Ayers",
                  "Dragomir Radev", "Jeremy Avigad"]),
    "proofwiki": ("ProofWiki", "ProofWiki", "https://proofwiki.org", ["The ProofWiki contributors"]),
    "metamath": ("Metamath", "Metamath Proof Explorer", "https://us.metamath.org", ["The Metamath contributors"]),
    "lean": ("Lean", "Mathlib", "https://leanprover-community.github.io/mathlib4_docs/", ["The Mathlib contributors"]),
    "arxiv": ("arXiv", "arXiv", "https://arxiv.org", []),
    "findings": ("Findings", "Results saved with add_finding", "", []),
}
# Source names TheoremSearch knows that no mathlas reader produces: accepted, reported as absent.
OTHER_THEOREMSEARCH_SOURCES = ("CRing Project", "nLab")

TS_FIELDS = ("query", "n_results", "limit", "sources", "authors", "types", "tags", "categories", "paper_filter",
             "year_range", "citation_range", "citation_weight", "include_unknown_citations", "prompt", "db_top_k")
EXTENSION_FIELDS = ("mode", "bundle")   # mathlas's own additions
# The metadata columns an answer shows (``theorem``): ``api.search_hits`` reads these of each hit,
# not its whole document (``label`` is the statement's label in its LaTeX source).
COLUMNS = ("body", "slogan", "label", "paper_id", "paper_title", "authors", "categories", "journal_ref",
           "citations", "year")


@dataclass
class Request:
    """A checked TheoremSearch request (bundle-independent checks only)."""

    query: str
    k: int
    mode: str = "hybrid"
    bundle: str | None = None
    sources: list[str] = field(default_factory=list)
    authors: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    title: str | None = None
    year_range: tuple[int | None, int | None] | None = None
    citation_range: tuple[int | None, int | None] | None = None
    citation_weight: float = 0.0
    include_unknown_citations: bool = True
    ignored: dict[str, str] = field(default_factory=dict)   # field -> why it had no effect


@dataclass
class Plan:
    """A request fitted to one bundle: the arguments of ``api.search_hits`` and what was ignored."""

    kwargs: dict[str, Any]
    ignored: dict[str, str]
    notes: list[str]
    nothing: bool = False   # every requested source is absent from the bundle: no hit can match


def _strings(body: dict, key: str) -> list[str]:
    v = body.get(key)
    if v is None:
        return []
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise UsageError(f"{key} must be a list of strings, got {v!r}")
    return [s.strip() for s in v if s.strip()]


def _int(value: Any, what: str) -> int:
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{what} must be an integer, got {value!r}")
    return value


def _range(body: dict, key: str) -> tuple[int | None, int | None] | None:
    v = body.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != 2:
        raise UsageError(f"{key} must be [min, max] (either may be null), got {v!r}")
    lo, hi = (None if x is None else _int(x, f"{key} bounds") for x in v)
    if lo is not None and hi is not None and lo > hi:
        raise UsageError(f"{key}: min ({lo}) is greater than max ({hi})")
    return None if lo is None and hi is None else (lo, hi)


def parse(body: Any) -> Request:
    """Check a request body the way the CLI checks its arguments (``UsageError``, one line)."""
    if not isinstance(body, dict):
        raise UsageError('the request body must be a JSON object like {"query": "...", "n_results": 10}')
    query = check_query(body.get("query"))  # the request's one check of the query, said before any other
    n, limit = body.get("n_results"), body.get("limit")
    if n is not None and limit is not None and n != limit:
        raise UsageError(f"n_results ({n!r}) and its alias limit ({limit!r}) disagree; send one of them")
    k = n if n is not None else limit if limit is not None else DEFAULT_RESULTS
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= SURFACE_MAX_K:  # TheoremSearch's own v2 limit
        raise UsageError(f"n_results must be an integer from 1 to {SURFACE_MAX_K}, got {k!r}")
    mode = body.get("mode", "hybrid")
    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    bundle = body.get("bundle")
    if bundle is not None and not isinstance(bundle, str):
        raise UsageError(f"bundle must be a bundle name, got {bundle!r}")
    title = body.get("paper_filter")
    if title is not None and not isinstance(title, str):
        raise UsageError(f"paper_filter must be a string (part of a paper title), got {title!r}")
    weight = body.get("citation_weight", 0.0)
    if weight is None:
        weight = 0.0
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or abs(weight) > 1e3:
        raise UsageError(f"citation_weight must be a finite number, got {weight!r}")
    unknown = body.get("include_unknown_citations", True)
    if unknown is None:
        unknown = True
    if not isinstance(unknown, bool):
        raise UsageError(f"include_unknown_citations must be true or false, got {unknown!r}")
    req = Request(query=query.strip(), k=k, mode=mode, bundle=bundle, sources=_strings(body, "sources"),
                  authors=_strings(body, "authors"), types=[t.lower() for t in _strings(body, "types")],
                  categories=_strings(body, "tags") + _strings(body, "categories"),
                  title=title.strip() or None if title else None, year_range=_range(body, "year_range"),
                  citation_range=_range(body, "citation_range"), citation_weight=float(weight),
                  include_unknown_citations=unknown)
    if body.get("prompt") is not None:
        req.ignored["prompt"] = "mathlas encodes queries with the bundle's own query prompt"
    if body.get("db_top_k") is not None:
        _int(body["db_top_k"], "db_top_k")
        req.ignored["db_top_k"] = "mathlas sizes each channel's candidate list itself"
    for key in sorted(set(body) - set(TS_FIELDS) - set(EXTENSION_FIELDS)):
        right = field_meant(key)
        req.ignored[key] = "not a TheoremSearch (or mathlas) request field" + (
            f"; did you mean {right!r}?" if right else "")
    return req


# What clients of other search APIs (and camelCase habits) call TheoremSearch's fields
FIELD_ALIASES = {"k": "n_results", "n": "n_results", "topk": "n_results", "numresults": "n_results",
                 "maxresults": "n_results", "size": "n_results", "count": "n_results", "q": "query",
                 "text": "query", "source": "sources", "author": "authors", "type": "types", "kind": "types",
                 "kinds": "types", "tag": "tags", "category": "tags", "year": "year_range", "years": "year_range",
                 "citations": "citation_range"}


def field_meant(name: str) -> str | None:
    """The request field an unknown ``name`` most likely means (``nResults`` -> ``n_results``), or None."""
    import difflib

    def norm(x: str) -> str:
        return re.sub(r"[^a-z0-9]", "", x.lower())

    fields = {norm(f): f for f in TS_FIELDS + EXTENSION_FIELDS}
    key = norm(name)
    if key in fields:  # the same letters, another spelling: nResults, N-Results, yearRange
        return fields[key]
    if key in FIELD_ALIASES:
        return FIELD_ALIASES[key]
    close = difflib.get_close_matches(key, list(fields), n=1, cutoff=0.8)
    return fields[close[0]] if close else None


def ignored_header(ignored: dict[str, str]) -> str:
    """The ``X-Mathlas-Ignored`` header: the ignored field names, each unknown one with the field it
    likely means (``nResults (did you mean n_results?)``); escaped to ASCII, one line (the names
    are the client's, and a header is latin-1)."""
    parts = []
    for name in ignored:
        right = None if name in TS_FIELDS + EXTENSION_FIELDS else field_meant(name)
        parts.append(name.encode("unicode_escape").decode("ascii") + (f" (did you mean {right}?)" if right else ""))
    return ", ".join(parts)


def _source_key(name: str, present: list[str]) -> str | None:
    """The mathlas source a TheoremSearch source name means (its mathlas name works too)."""
    low = name.strip().lower()
    for key in present:
        if key.lower() == low:
            return key
    for key, (display, *_rest) in SOURCES.items():
        if display.lower() == low:
            return key
    return None


def plan(req: Request, facts: BundleFacts) -> Plan:
    """Fit a request to the bundle ``facts`` describes."""
    ignored = dict(req.ignored)
    notes: list[str] = []
    kwargs: dict[str, Any] = {"k": req.k, "mode": req.mode, "kinds": req.types or None, "columns": COLUMNS}
    nothing = False
    if req.sources:
        known = {s.lower() for s in OTHER_THEOREMSEARCH_SOURCES}
        include, absent = [], []
        for name in req.sources:
            key = _source_key(name, facts.sources)
            if key is None and name.lower() not in known:
                names = sorted({SOURCES[s][0] for s in SOURCES} | set(OTHER_THEOREMSEARCH_SOURCES))
                raise UsageError(f"unknown source {name!r} in sources; TheoremSearch names: {', '.join(names)}; "
                                 f"bundle {facts.label} has: {', '.join(facts.sources)}")
            if key in facts.sources:
                include.append(key)
            else:
                absent.append(name)
        if absent:
            ignored["sources"] = f"not in bundle {facts.label}: {', '.join(absent)}"
        kwargs["sources"] = list(dict.fromkeys(include))
        nothing = not include
    paper = "paper_title" in facts.columns
    pf: dict[str, Any] = {}
    no_papers = f"bundle {facts.label} has no paper metadata"
    if req.authors:
        if paper:
            pf["authors"] = req.authors
        else:
            ignored["authors"] = no_papers
    if req.categories:
        if paper:
            pf["categories"] = req.categories
        else:
            ignored["tags"] = no_papers
    if req.year_range:
        if paper:
            pf["year_min"], pf["year_max"] = req.year_range
        else:
            ignored["year_range"] = no_papers
    if req.title:
        if paper:
            kwargs["title_contains"] = req.title
        else:
            ignored["paper_filter"] = no_papers
    if req.citation_range:
        if "citations" not in facts.columns:
            ignored["citation_range"] = f"bundle {facts.label} has no citation counts"
        elif req.include_unknown_citations:
            kwargs["citations_or_unknown"] = req.citation_range
        else:
            pf["citations_min"], pf["citations_max"] = req.citation_range
    kwargs["paper_filter"] = {key: v for key, v in pf.items() if v is not None} or None
    if req.citation_weight:
        if "citations" in facts.priors:
            kwargs["priors"] = {"citations": req.citation_weight}
            if req.mode == "hybrid":
                notes.append("citation_weight is added to the fused (RRF) score, about 1/(k_rrf + rank), "
                             "not to a cosine as in TheoremSearch; send mode \"dense\" for TheoremSearch's scale")
        else:
            ignored["citation_weight"] = f"bundle {facts.label} declares no citations prior"
    if "sources" not in kwargs:
        kwargs["sources"] = None
    return Plan(kwargs=kwargs, ignored=ignored, notes=notes, nothing=nothing)


_URL = re.compile(r"https?://[^\s,;)]+")


def _paper(h: Any, x: dict[str, Any], facts: BundleFacts) -> tuple[dict, bool]:
    if x["paper_id"]:
        cats = list(x["categories"] or [])
        pid = str(x["paper_id"])
        arxiv = h.source == "arxiv"
        return {"paper_id": pid, "source": SOURCES["arxiv"][0] if arxiv else h.source,
                "title": x["paper_title"] or "", "authors": list(x["authors"] or []),
                "link": f"https://arxiv.org/abs/{pid}" if arxiv else h.link,
                "summary": None, "journal_ref": x["journal_ref"], "primary_category": cats[0] if cats else None,
                "categories": cats, "citations": x["citations"], "year": x["year"],
                "journal_published": bool(x["journal_ref"])}, True
    display, title, link, authors = SOURCES.get(h.source, (h.source, "", "", []))
    if not title:  # a source this table does not know: what its bundle's attribution says
        attribution = facts.attribution.get(h.source, "")
        title = attribution.split(",")[0] or h.source
        found = _URL.search(attribution)
        link = found.group(0) if found else ""
    return {"paper_id": h.source, "source": display, "title": title, "authors": list(authors), "link": link,
            "summary": None, "journal_ref": None, "primary_category": None, "categories": [], "citations": None,
            "year": None, "journal_published": None}, False


def theorem(scored: ScoredHit, facts: BundleFacts) -> dict:
    """One ``theorems[]`` entry for a hit."""
    h, x = scored.hit, scored.values
    paper, has_metadata = _paper(h, x, facts)
    return {"slogan_id": h.id, "theorem_id": h.id, "name": h.name or h.title or h.id, "body": x["body"] or "",
            "slogan": x["slogan"] or h.text, "theorem_type": h.kind, "label": x["label"],
            "link": h.link or None, "link_kind": h.link_kind or None, "paper": paper, "similarity": scored.similarity, "score": h.score,
            "has_metadata": has_metadata, "ranks": dict(h.ranks)}


def response(found: ScoredHits | None, facts: BundleFacts, req: Request, p: Plan) -> dict:
    """The response body: TheoremSearch's ``theorems`` plus a ``mathlas`` block saying what was
    searched, how sure the search is of its hits (``match``, ``confidence``: null when the filters left
    nothing to search) and which fields had no effect."""
    hits = found.hits if found is not None else []
    return {"theorems": [theorem(s, facts) for s in hits],
            "mathlas": {"bundle": facts.label, "mode": req.mode,
                        "match": found.match if found is not None else None,
                        "confidence": found.confidence if found is not None else None,
                        "ignored": p.ignored, "notes": p.notes}}
