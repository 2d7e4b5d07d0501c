"""Search tools: ``search_existing_math`` and ``get_by_id``, over bundles opened once and shared.

Both are plain functions the Python API can call; the MCP server registers them unchanged. Open
bundles live in ``OPEN_BUNDLES``, a process-wide holder keyed by the bundle argument: the first call
that names a bundle opens it (installing the shipped default on first use), later calls from any
thread reuse it, and the bundle itself loads its BM25 index and query encoder on the first query
that needs them. Importing this module loads nothing heavy (no numpy, pyarrow or onnxruntime).

Findings (``mathlas.findings``, saved by the add_finding tool) join the results when the store
holds any and the filters allow source ``findings`` / kind ``finding``: the bundle's fused list and
the findings' own ranking (BM25, plus cosine when vectors exist) are fused again with RRF, so hit
scores are then that outer RRF score and each hit's ``ranks`` gains a ``findings`` entry.
"""
from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from mathlas.errors import UsageError
from mathlas.hit import Hit

if TYPE_CHECKING:
    from mathlas.search import Bundle

Mode = Literal["hybrid", "lexical", "dense"]

# The source name and kind of the results agents add with add_finding (mathlas.findings).
FINDINGS_SOURCE = "findings"
FINDINGS_KIND = "finding"
FINDINGS_LICENSE = "unknown (web)"
# How many top hits get a get_by_id suggestion in ``next``.
NEXT_FOR_TOP = 3
_NUMBER = re.compile(r"\s*[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?\s*")


# ------------------------------------------------------------------------------ results

@dataclass
class SearchHit:
    """One ranked statement: the core fields of ``mathlas.Hit`` (``text`` is a snippet of the
    retrieval text; ``ranks`` is each channel's 1-based rank, null when absent from it)."""

    id: str
    source: str
    kind: str
    name: str
    title: str
    text: str
    link: str
    license: str
    score: float
    ranks: dict[str, int | None]

    @classmethod
    def from_hit(cls, hit: Hit) -> "SearchHit":
        return cls(id=hit.id, source=hit.source, kind=hit.kind, name=hit.name, title=hit.title,
                   text=hit.text, link=hit.link, license=hit.license, score=hit.score, ranks=dict(hit.ranks))


@dataclass
class NextStep:
    """A tool call worth making next, with its arguments ready to send."""

    tool: str
    arguments: dict[str, Any]
    why: str


@dataclass
class SearchResult:
    """Ranked hits for a query, and which tool calls to make on the promising ones."""

    query: str
    bundle: str          # name-version of the bundle searched
    mode: str
    hits: list[SearchHit]
    next: list[NextStep] = field(default_factory=list)


@dataclass
class Document:
    """A whole document: the statement as its source writes it (``body``), the retrieval text,
    the source's slogan when it has one, and where it comes from. ``fields`` holds what the
    source knows beyond that (paper: authors, year...; formal: module, signature...)."""

    id: str
    source: str
    kind: str
    name: str
    title: str
    body: str
    slogan: str
    text: str
    link: str
    license: str
    bundle: str
    fields: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------------------ shared bundles

class OpenBundles:
    """Bundles opened on first use and shared by every later call, from any thread.

    Keyed by the bundle argument as given (``None``: ``$MATHLAS_BUNDLE`` or the default bundle)
    and by the directory it resolves to, so two spellings of one bundle share one ``Bundle``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_spec: dict[str | None, "Bundle"] = {}
        self._by_root: dict[str, "Bundle"] = {}

    def get(self, spec: str | None = None) -> "Bundle":
        """The open bundle for ``spec`` (opened now if this is its first use)."""
        if spec is not None:
            if not isinstance(spec, str):
                raise UsageError(f"bundle must be a name, name-version or directory, got {spec!r}")
            spec = spec.strip() or None
        b = self._by_spec.get(spec)
        if b is not None:
            return b
        with self._lock:  # one opener at a time: a first-use install must not run twice
            b = self._by_spec.get(spec)
            if b is None:
                from mathlas.bundle import verify
                from mathlas.install import resolve_bundle
                from mathlas.search import Bundle

                root = resolve_bundle(spec)
                b = self._by_root.get(str(root))
                if b is None:
                    b = Bundle(root, verify(root, checksums=False))
                    self._by_root[str(root)] = b
                self._by_spec[spec] = b
            return b

    def loaded(self) -> list["Bundle"]:
        """The bundles opened so far."""
        return list(self._by_root.values())


OPEN_BUNDLES = OpenBundles()


# ------------------------------------------------------------------------------ validation

def _names(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{what} must be a list of source names, got {value!r}")
    return [v.strip() for v in value]


def _check_known(names: list[str], bundle: "Bundle", what: str) -> None:
    unknown = [n for n in names if n not in bundle.source_names and n != FINDINGS_SOURCE]
    if unknown:
        raise UsageError(f"unknown source {', '.join(map(repr, unknown))} in {what}; "
                         f"bundle {bundle.name}-{bundle.version} has: {', '.join(bundle.source_names)} "
                         f"(and {FINDINGS_SOURCE}, the results added with add_finding)")


def _split_filter(source_filter: Any) -> tuple[list[str], list[str]]:
    if source_filter is None:
        return [], []
    if not isinstance(source_filter, dict):
        raise UsageError('source_filter must be an object like {"include": ["stacks"], "exclude": ["napkin"]}')
    extra = set(source_filter) - {"include", "exclude"}
    if extra:
        raise UsageError(f"source_filter takes only the keys include and exclude, not {', '.join(sorted(extra))}")
    return (_names(source_filter.get("include"), "source_filter.include"),
            _names(source_filter.get("exclude"), "source_filter.exclude"))


def _check_weights(source_weights: Any, bundle: "Bundle") -> dict[str, float] | None:
    if source_weights is None:
        return None
    if not isinstance(source_weights, dict):
        raise UsageError('source_weights must be an object like {"stacks": 2.0, "napkin": 0.5}')
    _check_known(list(source_weights), bundle, "source_weights")
    for s, w in source_weights.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise UsageError(f"source_weights[{s!r}] must be a finite number >= 0 (0 drops the source), got {w!r}")
    return {s: float(w) for s, w in source_weights.items()}


def _bundle_label(bundle: "Bundle") -> str:
    return f"{bundle.name}-{bundle.version}"


def _next_steps(query: str, hits: list[SearchHit], filtered: bool) -> list[NextStep]:
    from mathlas.tools import available_tool_names

    steps = [NextStep("get_by_id", {"id": h.id}, "the full statement (body), slogan, license and link")
             for h in hits[:NEXT_FOR_TOP]]
    if _NUMBER.fullmatch(query) and "identify_constant" in available_tool_names():
        steps.insert(0, NextStep("identify_constant", {"value": query.strip()},
                                 "the query is a number: look for a closed form"))
    if not hits and filtered:
        steps.append(NextStep("search_existing_math", {"query": query}, "nothing passed the filters: search all sources"))
    return steps


# ------------------------------------------------------------------------------ findings

def _finding_hit(f, score: float, rank: int) -> SearchHit:
    from mathlas.search import _snippet

    return SearchHit(id=f.id, source=FINDINGS_SOURCE, kind=FINDINGS_KIND, name=f.name, title="",
                     text=_snippet(f.search_text), link=f.source_url, license=FINDINGS_LICENSE,
                     score=score, ranks={"lexical": None, "dense": None, FINDINGS_SOURCE: rank})


def _findings_ranking(store, b: "Bundle", query: str, depth: int, mode: str) -> list:
    """The findings' own ranking: BM25, and cosine when vectors from this bundle's encoder exist
    and its encoder is loaded (hybrid: RRF of the two)."""
    from mathlas.findings import K_RRF, encoder_fingerprint

    lists: list[list] = []
    if mode in ("hybrid", "lexical"):
        lists.append([f for f, _ in store.lexical_ranking(query, depth)])
    if mode in ("hybrid", "dense"):
        vec = store.vectors()
        if vec is not None and b.model_loaded and vec[2] == encoder_fingerprint(b):
            q = b.encoder.encode_queries([query.strip()])[0]
            lists.append([f for f, _ in store.dense_ranking(q, vec[2], depth)])
    if len(lists) == 1:
        return lists[0]
    from mathlas.fusion import Ranking, rrf

    # keys = positions in id order, so RRF's final tie-break (key) is the finding id
    by_id = {f.id: f for lst in lists for f in lst}
    ids = sorted(by_id)
    key = {i: n for n, i in enumerate(ids)}
    fused = rrf({str(c): Ranking.of([key[f.id] for f in lst]) for c, lst in enumerate(lists)}, depth, k_rrf=K_RRF)
    return [by_id[ids[x.key]] for x in fused]


def _fuse_findings(b: "Bundle", query: str, k: int, mode: str, hits: list[SearchHit],
                   weight: float) -> list[SearchHit]:
    """Fuse the findings into the bundle's hits with RRF: the bundle's (already fused) list is one
    ranking, the findings' ranking another; a finding's score is multiplied by ``weight``.
    With no findings (or none matching) the bundle's hits come back untouched."""
    import numpy as np

    from mathlas.findings import open_store
    from mathlas.fusion import Ranking, rrf

    store = open_store()
    if not len(store):
        return hits
    found = _findings_ranking(store, b, query, k, mode)
    if not found:
        return hits
    n = len(hits)
    k_rrf = float(b.fusion["k_rrf"])
    key_weights = np.ones(n + len(found))
    key_weights[n:] = weight
    fused = rrf({"bundle": Ranking.of(np.arange(n)), FINDINGS_SOURCE: Ranking.of(np.arange(n, n + len(found)))},
                k, k_rrf=k_rrf, key_weights=key_weights)
    out = []
    for f in fused:
        if f.key < n:
            h = hits[f.key]
            out.append(SearchHit(**{**h.__dict__, "score": f.score,
                                    "ranks": {**h.ranks, FINDINGS_SOURCE: None}}))
        else:
            out.append(_finding_hit(found[f.key - n], f.score, f.ranks[FINDINGS_SOURCE]))
    return out


def _finding_document(fid: str) -> Document:
    from mathlas.findings import open_store

    f = open_store().get(fid)
    return Document(id=f.id, source=FINDINGS_SOURCE, kind=FINDINGS_KIND, name=f.name, title="",
                    body=f.statement, slogan=f.slogan, text=f.search_text, link=f.source_url,
                    license=FINDINGS_LICENSE, bundle=FINDINGS_SOURCE,
                    fields={"added": f.added, "provenance": f.provenance, "source_url": f.source_url})


# ------------------------------------------------------------------------------ tools

def search_existing_math(query: str, k: int = 10, source_filter: dict[str, list[str]] | None = None,
                         source_weights: dict[str, float] | None = None, mode: Mode = "hybrid",
                         kinds: list[str] | None = None, bundle: str | None = None,
                         paper_filter: dict[str, Any] | None = None,
                         priors: dict[str, float] | None = None) -> SearchResult:
    """Search known mathematics (theorems, lemmas, definitions from the Stacks Project, PlanetMath,
    the HoTT book, Open Logic, Napkin, ProofNet, ...) for statements that match a question, a claim
    or a formula. Use it to check whether what you need is already known before proving it. Each hit
    carries a stable id, its source and license, a link and a snippet; `next` lists the calls worth
    making on the best hits (get_by_id for the full statement). Results saved with add_finding
    (source "findings") are searched too and fused into the ranking.

    Args:
        query: words, a claim or a formula (LaTeX welcome), e.g. "a finitely generated module M over a local ring with mM = M is zero".
        k: number of hits, 1 to 1000.
        source_filter: restrict sources, e.g. {"include": ["stacks", "planetmath"]} or {"exclude": ["napkin"]} ("findings": results saved with add_finding); filtering happens before ranking.
        source_weights: multiply a source's fused score, e.g. {"stacks": 2.0}; 0 drops the source.
        mode: "hybrid" (default: keywords and meaning, fused), "lexical" (BM25 keywords only) or "dense" (meaning only).
        kinds: only these kinds, e.g. ["theorem", "definition"].
        bundle: bundle name, name-version or directory; default: $MATHLAS_BUNDLE or the default bundle.
        paper_filter: for bundles of papers (arXiv / TheoremSearch), e.g. {"authors": ["Serre"], "categories": ["math.AG"], "year_min": 1990, "year_max": 2010, "citations_min": 50, "journal_published": true}; authors match whole words ("T. Tao" finds "Terence Tao"), a category without a dot ("math") matches its subcategories; applied before ranking.
        priors: weights of the bundle's document priors, e.g. {"citations": 0.002} adds 0.002*log(max(citations,1)) to each hit's score (0 turns a prior off).
    """
    from mathlas.filters import PaperFilter
    from mathlas.search import Bundle

    Bundle._check_query(query, k, mode)  # bad input fails before a bundle is opened (or installed)
    include, exclude = _split_filter(source_filter)
    kinds_l = _names(kinds, "kinds")
    paper = PaperFilter.parse(paper_filter)
    b = OPEN_BUNDLES.get(bundle)
    _check_known(include, b, "source_filter.include")
    _check_known(exclude, b, "source_filter.exclude")
    weights = _check_weights(source_weights, b)
    f_weight = 1.0 if weights is None else weights.pop(FINDINGS_SOURCE, 1.0)
    use_findings = (f_weight > 0 and FINDINGS_SOURCE not in exclude and paper is None
                    and (not include or FINDINGS_SOURCE in include)
                    and (not kinds_l or FINDINGS_KIND in kinds_l))
    b_include = [s for s in include if s != FINDINGS_SOURCE]
    b_exclude = [s for s in exclude if s != FINDINGS_SOURCE]
    b_kinds = [x for x in kinds_l if x != FINDINGS_KIND]
    if (include and not b_include) or (kinds_l and not b_kinds):
        b._check_query(query, k, mode)  # only findings asked for: still validate the query
        out: list[SearchHit] = []
    else:
        hits = b.search(query, k=k, mode=mode, sources=b_include or None, exclude_sources=b_exclude or None,
                        kinds=b_kinds or None, source_weights=weights or None, paper_filter=paper, priors=priors)
        out = [SearchHit.from_hit(h) for h in hits]
    if use_findings:
        out = _fuse_findings(b, query, k, mode, out, f_weight)
    filtered = bool(include or exclude or kinds_l or weights or paper)
    return SearchResult(query=query.strip(), bundle=_bundle_label(b), mode=mode, hits=out,
                        next=_next_steps(query, out, filtered))


def get_by_id(id: str, bundle: str | None = None) -> Document:  # noqa: A002 - `id` is the public argument name
    """The whole document behind a stable id from search_existing_math (e.g. "stacks:00DV",
    "planetmath:HilbertBasisTheorem"): the statement as its source writes it (LaTeX or Lean), the
    retrieval text, the slogan when the source has one, license, link and any further fields.

    Args:
        id: a stable document id, "<source>:<key>".
        bundle: bundle name, name-version or directory; default: $MATHLAS_BUNDLE or the default bundle (for lean: ids, the formal bundle: $MATHLAS_FORMAL_BUNDLE or "mathlib").
    """
    if isinstance(id, str) and id.strip().startswith("finding:"):
        return _finding_document(id.strip())
    if bundle is None and isinstance(id, str) and id.strip().startswith("lean:"):
        from mathlas.tools.formal_search import open_formal

        b = open_formal(None)  # Lean declarations live in the formal bundle
    else:
        b = OPEN_BUNDLES.get(bundle)
    hit = b.get(id)
    fields = dict(hit.extra)
    if hit.source == "stacks":  # the formal<->informal bridge: Mathlib declarations tagged @[stacks TAG]
        from mathlas.tools.formal_search import stacks_to_lean

        formal = stacks_to_lean(hit.id.split(":", 1)[1])
        if formal:
            fields["formal"] = formal
    return Document(id=hit.id, source=hit.source, kind=hit.kind, name=hit.name, title=hit.title,
                    body=hit.body, slogan=hit.slogan, text=hit.text, link=hit.link, license=hit.license,
                    bundle=_bundle_label(b), fields=fields)
