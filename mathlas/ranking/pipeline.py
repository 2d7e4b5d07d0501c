"""``Pipeline``: a bundle's ranking, plan -> channels -> fuse -> stages -> cut, returning one ``Ranked``.

``pipeline_for(bundle)`` is the bundle's pipeline (made once, kept while the bundle lives; it holds
the bundle's recent query vectors and filter masks); ``Pipeline(bundle, stages=...)`` makes one with
other stages. ``rank(req, findings=None, fields=())`` runs a checked ``SearchRequest``:

1. **plan** (``mathlas.ranking.plan``): the checks that need the bundle, filters, weights, priors, depth;
2. **channels**: each channel of the mode (``Channel``: lexical BM25, dense cosine) ranks the bundle's
   documents, ``depth`` deep, with the filters inside; saved findings, when they take part, are
   extra documents of the same channels, merged into each ranking by score before the cut
   (``mathlas.findings.search``);
3. **fuse**: RRF of the channels' rankings into one ``Candidates`` pool (each candidate with its rank
   and raw score in every channel); a single channel keeps its own scores;
4. **stages** (``mathlas.ranking.stages``): priors, rerank, statement lift, ..., collapse, in order,
   over the pool;
5. **cut** to ``k`` after ``offset``, and hits made for those rows only, each with ``also_in``
   (``mathlas.ranking.collapse.with_also_in``).
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from mathlas.hit import Hit
from mathlas.ranking.candidates import Candidates, Ranking
from mathlas.ranking.collapse import with_also_in
from mathlas.ranking.fusion import merge, rrf
from mathlas.ranking.plan import Masks, Plan, make_plan
from mathlas.ranking.query import Query, QueryVectors
from mathlas.ranking.stages import Stage, StageContext, default_stages

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.findings.store import FindingsStore
    from mathlas.ranking.filters import Filters
    from mathlas.request import SearchRequest


@runtime_checkable
class Channel(Protocol):
    """One source of evidence: ranks documents for a query, ``depth`` deep, with the filters inside,
    and answers with their keys and its own raw scores (``Ranking``)."""

    name: str

    def rank(self, query: Query, depth: int, filters: Filters) -> Ranking: ...


@dataclass(frozen=True)
class Ranked:
    """What one ranking returns.

    ``hits``: the answer (after ``offset``), best first. ``top``: the candidate rows of those hits,
    aligned with them (``top.ranks`` / ``top.raw``: each hit's rank and raw score in every channel:
    BM25 for lexical, the cosine for dense; ``top.marks``: what the stages recorded). ``head``: the
    answer's rows from the first, before ``offset`` (``top`` when there is none), and ``first`` the
    hit of its first row (None: no hits at all): what the answer's match reads, the same on every page.
    ``pool``: the fused candidate pool before the stages (every candidate a channel ranked within
    the depth). ``rankings``: each channel's own ranking of the bundle's documents (raw scores, no
    findings), what the answer's confidence reads (``mathlas.ranking.confidence``).
    ``expansions``: the abbreviations the query was searched with; ``correction``: the misspelt
    name words searched as the name words they are near (``mathlas.ranking.names``; None: none);
    ``intent``: "definition" when the query was read as a noun phrase; ``query``: the text the
    channels searched."""

    hits: list[Hit]
    top: Candidates
    pool: Candidates
    rankings: Mapping[str, Ranking]
    expansions: dict = field(default_factory=dict)
    intent: str | None = None
    query: str = ""
    searched: Query | None = field(default=None, repr=False, compare=False)
    correction: Any = None
    notes: Mapping[str, Any] = field(default_factory=dict)  # what stages left for the answer (StageContext.notes)
    head: Candidates | None = None
    first: Hit | None = None

    def vector(self) -> np.ndarray:
        """The query vector the dense channel ranked with (encoded now if no channel needed it)."""
        return self.searched.vector()


class Pipeline:
    """The ranking of one bundle (module docstring). ``stages``: the stages run over the fused pool
    (default: ``default_stages``); ``fuse``: the fusion (default ``rrf``; same signature)."""

    def __init__(self, bundle, stages: Sequence[Stage] | None = None, fuse: Callable[..., Candidates] | None = None):
        self.bundle = bundle
        self.stages: tuple[Stage, ...] = tuple(default_stages(bundle) if stages is None else stages)
        self.fuse = fuse or rrf
        self.vectors = QueryVectors(lambda texts: bundle.encoder.encode_queries(texts), bundle.manifest)
        self.masks = Masks(bundle)

    def with_stages(self, stages: Sequence[Stage]) -> Pipeline:
        """The same bundle ranked with other stages (sharing the kept query vectors)."""
        other = Pipeline(self.bundle, stages, self.fuse)
        other.vectors, other.masks = self.vectors, self.masks
        return other

    def channel(self, name: str) -> Channel:
        """The bundle's channel ``name`` (opened on first use)."""
        return getattr(self.bundle, name)

    def query_vector(self, query: str) -> np.ndarray:
        """The query's vector as the dense channel sees it (kept: asking again costs nothing)."""
        return self.vectors(query)

    def forget_query_vectors(self) -> None:
        self.vectors.forget()

    def forget_queries(self) -> None:
        """Forget what earlier queries left for later ones (their vectors, the counts of their words
        in the bundle's names and texts), so that the next search costs what a new query's does
        (``scripts/bench_search.py``)."""
        from mathlas.ranking.learned import forget_words
        from mathlas.ranking.names import forget_word_counts

        self.vectors.forget()
        forget_word_counts(self.bundle)
        forget_words()

    def plan(self, req: SearchRequest, findings: FindingsStore | None = None) -> Plan:
        """What ``rank`` will do for ``req`` (``mathlas.ranking.plan``)."""
        return make_plan(self.bundle, req, masks=self.masks, vectors=self.vectors, findings=findings)

    def channel_rankings(self, plan: Plan) -> tuple[dict[str, Ranking], dict[str, Ranking]]:
        """(each channel's ranking of the bundle's documents, the rankings fusion gets: the same with
        the saved findings merged in by score)."""
        own: dict[str, Ranking] = {}
        if plan.bundle_part:
            for name in plan.channels:
                own[name] = self.channel(name).rank(plan.query, plan.depth, plan.filters)
        extra = plan.extra
        if extra is None:
            return own, own
        merged = dict(own)
        for name in plan.channels:
            # the findings' dense side needs the query vector: made anyway when the bundle's dense
            # channel ran; for findings alone, only when they have vectors of this encoder
            if name == "dense" and not plan.bundle_part and not extra.has_vectors():
                continue
            side = extra.channel(name)
            merged[name] = merge(own.get(name, Ranking.empty()), side.rank(plan.query, plan.depth), plan.depth,
                                 side.same_score)
        return own, merged

    def search_channels(self, query: str, depth: int, filters: Filters | None = None, mode: str = "hybrid",
                        pool: int | None = None, vector: np.ndarray | None = None) -> dict[str, Ranking]:
        """Each channel of ``mode`` ranking the bundle's documents for ``query`` (searched as given:
        no abbreviation expansion, no checks), ``depth`` deep: the channel step alone, for tuning and
        training scripts. ``vector``: the query vector when the caller has it."""
        from mathlas.ranking.filters import Filters
        from mathlas.ranking.plan import MODE_CHANNELS

        q = Query(query, self.vectors, pool)
        if vector is not None:
            q._vector = vector
        return {name: self.channel(name).rank(q, depth, filters or Filters()) for name in MODE_CHANNELS[mode]}

    def fused(self, req: SearchRequest, findings: FindingsStore | None = None) -> tuple[Plan, dict, Candidates]:
        """The steps before the stages: (the plan, each channel's ranking of the bundle's documents,
        the fused pool), the pool as every stage receives it."""
        plan = self.plan(req, findings)
        own, rankings = self.channel_rankings(plan)
        pool = self.fuse(rankings, plan.depth, k_rrf=plan.k_rrf, channel_weights=plan.channel_weights,
                         key_weights=plan.key_weights)
        if len(rankings) == 1 and len(pool):  # a single channel keeps its own scores
            pool = pool.rescored(pool.raw[:, 0])
        return plan, own, pool

    def rank(self, req: SearchRequest, findings: FindingsStore | None = None, fields: Sequence[str] = ()) -> Ranked:
        """Run a checked request (module docstring). ``findings``: a findings store whose findings
        take part as extra documents; ``fields``: metadata columns to copy into each hit's ``fields``."""
        plan, own, fused = self.fused(req, findings)
        pool = fused
        ctx = StageContext(self.bundle, plan)
        for stage in self.stages:
            pool = stage(pool, ctx)
        head = top = pool.head(plan.top)
        if req.offset:
            top = head.take(np.arange(min(req.offset, len(head)), len(head)))
        hits = make_hits(self.bundle, top, fields, plan.extra)
        with_also_in(self.bundle, hits, top.keys.tolist())
        first = hits[0] if hits and not req.offset else \
            make_hits(self.bundle, head.take(np.arange(1)), fields, plan.extra)[0] if len(head) else None
        return Ranked(hits=hits, top=top, pool=fused, rankings=own,
                      notes=ctx.notes, expansions=plan.expansions, intent=plan.intent, query=plan.query.text, searched=plan.query,
                      correction=plan.correction, head=head, first=first)


_PIPELINES: weakref.WeakKeyDictionary[Any, Pipeline] = weakref.WeakKeyDictionary()
_PIPELINES_LOCK = threading.Lock()


def pipeline_for(bundle) -> Pipeline:
    """The bundle's pipeline with the default stages, made on first use and kept while the bundle lives."""
    with _PIPELINES_LOCK:
        p = _PIPELINES.get(bundle)
        if p is None:
            p = _PIPELINES[bundle] = Pipeline(bundle)
        return p


# ------------------------------------------------------------------------------ hits

def make_hits(bundle, rows: Candidates, fields: Sequence[str] = (), extra=None) -> list[Hit]:
    """The hits of candidate ``rows``: the bundle's documents through ``Bundle.hits`` (only those
    rows read), saved findings through their own ``hit``; each with its score and ranks."""
    n = len(bundle)
    keys = rows.keys.tolist()
    scores = rows.scores.tolist()
    ranks = rows.ranks_list()
    ours = [i for i, key in enumerate(keys) if key < n]
    lifted = rows.lifted_by.tolist()
    made = iter(bundle.hits([keys[i] for i in ours], [scores[i] for i in ours], [ranks[i] for i in ours], fields,
                            [lifted[i] if 0 <= lifted[i] < n else -1 for i in ours])) if ours else iter(())
    return [next(made) if key < n else extra.hit(key - n, scores[i], ranks[i]) for i, key in enumerate(keys)]
