"""The requests of the library's capabilities (``mathlas.service``), parsed and checked once,
whatever surface asked: ``SearchRequest``, ``LeanSearchRequest``, ``DependencyRequest``.

The library (``Bundle.search``), the tools (``search_existing_math``, ``search_formal_math``), the
CLI and the servers all build one request and hand it to ``mathlas.service``, which ranks a search
with ``mathlas.ranking``. What can be checked without a bundle is checked here (the query, ``k``,
the mode, the shapes and numbers of the filters, weights and priors); the ranking's plan
(``mathlas.ranking.plan``) checks only what needs the bundle (source and kind names, declared
priors, the mask's length). This module is the seam's language, so it sits beside
``mathlas.service`` and not inside the ranking: every surface imports it, none imports the ranking.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from collections.abc import Mapping

from mathlas.checks import integer, number, strings
from mathlas.checks import text as unicode_text
from mathlas.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from mathlas.ranking.filters import PaperFilter

MODES = ("hybrid", "lexical", "dense")
Mode = Literal["hybrid", "lexical", "dense"]
MAX_K = 1000        # the library's deepest hit (offset + k)
SURFACE_MAX_K = 100  # hits per answer over MCP and HTTP (TheoremSearch's own limit); pages go on with offset
MAX_QUERY_CHARS = 10_000  # one limit on every surface (the default encoder reads 256 tokens of it anyway)
ECHO_CHARS = 200          # what an answer repeats of the query it answers


def check_query(query: Any) -> str:
    """``query`` if it is a search query every surface accepts, else ``UsageError`` in one line
    (the same words from the library, the CLI, MCP, the REST API and TheoremSearch's ``POST /search``):
    missing or empty, not a string, not Unicode text, or over ``MAX_QUERY_CHARS``."""
    if query is not None and not isinstance(query, str):
        raise UsageError(not_a_string(query))
    if query is None or not query.strip():
        raise UsageError("the query is empty; type some words or a formula")
    unicode_text(query, "the query")
    if (too_long := query_too_long(query)) is not None:
        raise UsageError(too_long)
    return query


def not_a_string(query: Any) -> str:
    """The one-line refusal of a query that is not a string (a JSON number, list or object): what
    it got, in JSON's words (most such queries come over HTTP), and the string to send instead."""
    import json

    example = ""
    if isinstance(query, bool):
        what = "a boolean"
    elif isinstance(query, (int, float)):
        what, example = "a number", json.dumps(str(query))
    elif isinstance(query, (list, tuple)):
        what = "a list"
        if query and all(isinstance(x, str) for x in query):
            example = json.dumps(" ".join(query), ensure_ascii=False)
    elif isinstance(query, Mapping):
        what = "an object"
    else:
        what = "bytes" if isinstance(query, (bytes, bytearray)) else f"a {type(query).__name__}"
    try:
        shown = json.dumps(query, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(query)
    shown = shown if len(shown) <= 40 else shown[:39] + "…"
    example = example if example and len(example) <= 60 else '"compact Hausdorff space"'
    return f"the query must be a string, got {what} ({shown}); send its words or formula as text, e.g. {example}"


def query_too_long(query: str) -> str | None:
    """The one-line refusal of a query over ``MAX_QUERY_CHARS`` (None when it is not): the same words
    from the CLI, MCP, the REST API and TheoremSearch's ``POST /search``."""
    if len(query) <= MAX_QUERY_CHARS:
        return None
    return (f"the query is {len(query):,} characters long, over the limit of {MAX_QUERY_CHARS:,}; "
            "search with its key sentence or words")


def echoed(query: str) -> str:
    """The query as an answer repeats it: whole up to ``ECHO_CHARS`` characters, else its beginning
    and an ellipsis (a 10,000-character query is not sent back in full)."""
    return query if len(query) <= ECHO_CHARS else query[:ECHO_CHARS - 1].rstrip() + "…"

def source_spellings(names: tuple[str, ...], known: list[str], what: str, label: str,
                     extra: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """``names`` each in the spelling of bundle ``label``'s sources ``known`` (and of ``extra``, a
    name and what it holds, such as saved findings): a name that differs only in case is that source
    (``Stacks`` is ``stacks``, as TheoremSearch's ``POST /search`` reads it); another is ``UsageError``
    naming the closest source, if one is close, and every source."""
    extra = dict(extra or {})
    every = [*known, *extra]
    by_case: dict[str, str] = {}
    for name in reversed(every):  # of two spellings that differ only in case, the first wins
        by_case[name.lower()] = name
    out = []
    for name in names:
        right = name if name in every else by_case.get(name.strip().lower())
        if right is None:
            import difflib

            close = difflib.get_close_matches(name.strip().lower(), list(by_case), n=1, cutoff=0.6)
            also = "".join(f" and {n} ({holds})" for n, holds in extra.items())
            raise UsageError(f"unknown source {name!r} in {what}"
                             + (f" (did you mean {by_case[close[0]]!r}?)" if close else "")
                             + f"; this bundle has: {', '.join(known)}{also} (bundle {label})")
        out.append(right)
    return tuple(dict.fromkeys(out))


# The argument names error messages use; a surface with other names passes its own (``labels``).
LABELS = {"sources": "sources", "exclude_sources": "exclude_sources", "source_weights": "source_weights",
          "kinds": "kinds", "priors": "priors", "kind_weights": "kind_weights"}


@dataclass(frozen=True)
class SearchRequest:
    """One search. ``sources`` / ``exclude_sources`` / ``kinds`` filter inside each channel before
    its top-k cut; ``source_weights`` scale a source's fused score (0 drops it), ``kind_weights`` a
    kind's (over the bundle's measured ``fusion.kind_weights``; 1 = neutral); ``paper`` filters
    on paper metadata; ``priors`` sets the weights of the document priors the bundle declares;
    ``k_rrf`` / ``channel_weights`` override the bundle's fusion defaults; ``pool`` is the number of
    binary candidates the dense channel rescores; ``mask`` (a boolean array over document keys)
    keeps only the documents it marks; ``offset`` skips that many of the best hits (paging:
    ``offset=10, k=10`` is the second page; ``offset + k`` is at most ``MAX_K``); ``rerank``
    rescores the first fused hits with the bundle's reranker (None: the bundle's default; True on a
    bundle without one is a ``UsageError``); ``collapse`` (default) shows one theorem once: the
    best-ranked statement of each group of copies (``mathlas.groups``), False shows every copy.
    Build one with ``SearchRequest.make``."""

    query: str
    k: int = 10
    mode: str = "hybrid"
    sources: tuple[str, ...] = ()
    exclude_sources: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    source_weights: Mapping[str, float] | None = None
    kind_weights: Mapping[str, float] | None = None
    paper: PaperFilter | None = None
    priors: Mapping[str, float] | None = None
    k_rrf: float | None = None
    channel_weights: Mapping[str, float] | None = None
    pool: int | None = None
    mask: np.ndarray | None = field(default=None, compare=False)
    offset: int = 0
    rerank: bool | None = None
    collapse: bool = True
    labels: Mapping[str, str] = field(default_factory=lambda: dict(LABELS), compare=False)

    @classmethod
    def make(cls, query: Any, k: Any = 10, *, mode: Any = "hybrid", sources: Any = None,
             exclude_sources: Any = None, kinds: Any = None, source_weights: Any = None,
             kind_weights: Any = None, paper_filter: Any = None, priors: Any = None, k_rrf: Any = None, channel_weights: Any = None,
             pool: Any = None, mask: Any = None, offset: Any = 0, rerank: Any = None, collapse: Any = True,
             labels: Mapping[str, str] | None = None) -> SearchRequest:
        """Check every argument (``UsageError`` naming the first bad one) and build the request."""
        from mathlas.ranking.filters import PaperFilter  # numpy: loaded with the first search, not with the tools

        names = {**LABELS, **(labels or {})}
        check_query(query)
        integer(k, "k", 1, MAX_K)
        integer(offset, "offset", 0, MAX_K - k)  # the deepest hit a request reaches is offset + k <= MAX_K
        if rerank is not None and not isinstance(rerank, bool):
            raise UsageError(f"rerank must be true, false or null (the bundle's default), got {rerank!r}")
        if not isinstance(collapse, bool):
            raise UsageError(f"{names.get('collapse', 'collapse')} must be true or false (false shows every copy "
                             f"of a theorem), got {collapse!r}")
        if mode not in MODES:
            raise UsageError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        weights = None
        if source_weights is not None:
            if not isinstance(source_weights, Mapping):
                raise UsageError(f'{names["source_weights"]} must be an object like {{"stacks": 2.0, "napkin": 0.5}}')
            weights = {s: number(w, f"{names['source_weights']}[{s!r}]", minimum=0, hint=" (0 drops the source)")
                       for s, w in source_weights.items()}
        kweights = None
        if kind_weights is not None:
            if not isinstance(kind_weights, Mapping):
                raise UsageError(f'{names["kind_weights"]} must be an object like {{"proof": 0.5, "example": 0.8}}')
            kweights = {str(x): number(w, f"{names['kind_weights']}[{x!r}]", minimum=0, hint=" (0 drops the kind)")
                        for x, w in kind_weights.items()}
        prior_weights = None
        if priors is not None:
            if not isinstance(priors, Mapping):
                raise UsageError(f'{names["priors"]} must be a mapping like {{"citations": 0.002}}, got {priors!r}')
            prior_weights = {n: number(w, f"prior weight for {n!r}") for n, w in priors.items()}
        if channel_weights is not None:
            if not isinstance(channel_weights, Mapping):
                raise UsageError('channel_weights must be a mapping like {"lexical": 2.0, "dense": 1.0}')
            channel_weights = {c: number(w, f"channel weight for {c!r}", minimum=0) for c, w in channel_weights.items()}
        included, excluded = strings(sources, names["sources"]), strings(exclude_sources, names["exclude_sources"])
        both = sorted({s.lower() for s in included} & {s.lower() for s in excluded})
        if both:  # nothing could pass: a usage error, not an empty answer
            raise UsageError(f"{both[0]!r} is both in {names['sources']} and in {names['exclude_sources']}, so no "
                             f"document could pass; keep it in one of them")
        return cls(query=query.strip(), k=k, mode=mode,
                   sources=included,
                   exclude_sources=excluded,
                   kinds=strings(kinds, names["kinds"]), source_weights=weights, kind_weights=kweights,
                   paper=PaperFilter.parse(paper_filter), priors=prior_weights,
                   k_rrf=None if k_rrf is None else number(k_rrf, "k_rrf", minimum=0),
                   channel_weights=channel_weights,
                   pool=None if pool is None else integer(pool, "pool", 1, 1_000_000),
                   mask=mask, offset=offset, rerank=rerank, collapse=collapse, labels=names)

    def in_spelling_of(self, bundle: Any) -> SearchRequest:
        """This request with its ``sources``, ``exclude_sources`` and ``source_weights`` in the spelling of the open
        ``bundle``'s sources and saved findings (``source_spellings``: any case; the closest name on a
        miss). ``mathlas.service.search_ranked`` calls it, so every surface (the CLI, MCP, the REST API,
        the library's service) reads a source the same way; the ranking's plan then checks the names
        again, exactly."""
        if not (self.sources or self.exclude_sources or self.source_weights):
            return self
        from dataclasses import replace

        from mathlas.findings import SOURCE as FINDINGS

        extra = {FINDINGS: "results saved with add_finding"}

        def spelt(names, what: str) -> tuple[str, ...]:
            return source_spellings(tuple(names), bundle.source_names, self.labels[what], bundle.label, extra)

        weights = self.source_weights
        if weights:  # {"Stacks": 2} weighs stacks; two spellings of one source: the last given
            weights = {spelt([name], "source_weights")[0]: w for name, w in weights.items()}
        return replace(self, sources=spelt(self.sources, "sources"),
                       exclude_sources=spelt(self.exclude_sources, "exclude_sources"), source_weights=weights)

    @property
    def filtered(self) -> bool:
        """Whether the caller narrowed or reweighted the sources (an empty answer may be the filters' doing)."""
        return bool(self.sources or self.exclude_sources or self.kinds or self.source_weights or self.paper)


# The argument names the Lean search's messages use by default
LEAN_LABELS = {"modules": "modules", "kinds": "kinds", "prior_weight": "prior_weight", "deprecated": "deprecated"}


@dataclass(frozen=True)
class LeanSearchRequest:
    """One search of a formal (Lean) bundle: ``SearchRequest``'s query, ``k``, ``offset`` and mode,
    plus ``modules`` (only declarations in these modules or below), ``prior_weight`` (the
    PageRank prior's weight; None: the bundle's) and ``deprecated`` (False: leave ``@[deprecated]``
    declarations out; they are flagged, and ranked after their replacement, otherwise) and
    ``collapse`` (default: a Lean ``alias`` and the declaration it stands for take one rank, the
    other named in ``also_in``; False shows both where each ranks). Build one with
    ``LeanSearchRequest.make``."""

    query: str
    k: int = 10
    mode: str = "hybrid"
    modules: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    prior_weight: float | None = None
    offset: int = 0
    deprecated: bool = True
    collapse: bool = True
    labels: Mapping[str, str] = field(default_factory=lambda: dict(LEAN_LABELS), compare=False)

    @classmethod
    def make(cls, query: Any, k: Any = 10, *, mode: Any = "hybrid", modules: Any = None, kinds: Any = None,
             prior_weight: Any = None, offset: Any = 0, deprecated: Any = True, collapse: Any = True,
             labels: Mapping[str, str] | None = None) -> LeanSearchRequest:
        """Check every argument (``UsageError`` naming the first bad one by its label) and build the request."""
        names = {**LEAN_LABELS, **(labels or {})}
        base = SearchRequest.make(query, k, mode=mode, kinds=kinds, offset=offset, collapse=collapse,
                                  labels={"kinds": names["kinds"]})
        weight = None if prior_weight is None else number(prior_weight, names["prior_weight"], minimum=-1e3, maximum=1e3)
        if not isinstance(deprecated, bool):
            raise UsageError(f"{names['deprecated']} must be true or false (false leaves deprecated declarations "
                             f"out), got {deprecated!r}")
        return cls(query=base.query, k=base.k, mode=base.mode, modules=strings(modules, names["modules"]),
                   kinds=base.kinds, prior_weight=weight, offset=base.offset, deprecated=deprecated,
                   collapse=base.collapse, labels=names)


DIRECTIONS = ("uses", "used_by")
MAX_DEPENDENCY_DEPTH = 5
MAX_DEPENDENCY_LIMIT = 5000


@dataclass(frozen=True)
class DependencyRequest:
    """The declarations ``id`` uses (``direction="uses"``) or that use it (``"used_by"``), up to
    ``depth`` steps, the first ``limit`` of them. ``id`` may leave out its ``lean:`` prefix."""

    id: str
    direction: str = "uses"
    depth: int = 1
    limit: int = 100

    @classmethod
    def make(cls, id: Any, direction: Any = "uses", depth: Any = 1, limit: Any = 100,  # noqa: A002
             labels: Mapping[str, str] | None = None) -> DependencyRequest:
        """Check every argument and build the request (``labels``: the caller's names for direction, depth, limit)."""
        names = {"direction": "direction", "depth": "depth", "limit": "limit", **(labels or {})}
        if not isinstance(id, str) or not id.strip():
            raise UsageError("an id is required, e.g. lean:Nat.Prime.two_le")
        if direction not in DIRECTIONS:
            raise UsageError(f"{names['direction']} must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
        integer(limit, names["limit"], 1, MAX_DEPENDENCY_LIMIT)
        integer(depth, names["depth"], 1, MAX_DEPENDENCY_DEPTH)
        doc_id = id.strip()
        return cls(id=doc_id if ":" in doc_id else "lean:" + doc_id, direction=direction, depth=depth, limit=limit)
