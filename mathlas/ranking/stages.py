"""Stages: what runs over the fused candidate pool, in order, before the cut to ``k``.

A stage is any object with a ``name`` and ``__call__(pool, ctx) -> Candidates`` (``Stage``). It gets
the whole fused pool (``Candidates``: keys, scores, each channel's rank and raw score, the marks of
the stages before it) and a ``StageContext`` (the request, the plan, the bundle, the query and its
vector, the saved findings), and returns the pool as it should go on: rescored and re-sorted,
reordered, cut, or with rows added (a statement brought in above its proof; an exact name match put
first). A stage that does not apply to a request returns the pool it was given, unchanged.

The default stages, in order (``default_stages``):

1. ``Priors``: ``score + weight * transform(column)`` for the bundle's document priors, re-sorted;
1b. ``LearnedRank`` (``mathlas.ranking.learned``): the bundle's learned model, where its manifest
   declares one (``ranker``), scores every candidate and they take its order;
2. ``Rerank``: the bundle's cross-encoder rescores the first ``top_n`` rows (mark ``rerank``);
3. ``StatementLift``: a statement goes right above its own proof or example;
4. ``ReplacementsFirst`` (``mathlas.ranking.replacements``): a deprecated Lean declaration goes
   right after its replacement;
5. ``ShapeMatch`` (``mathlas.ranking.shape``): a query that is a Lean statement (``a + b = b + a``)
   puts the declarations that state it first (mark ``shape``);
6. ``NameMatch`` (``mathlas.ranking.names``): a query that is a document's id or a declaration's
   name puts it first, and declarations whose names end with the query's components into the top
   ten (mark ``names``). Last, so that no stage after it reorders what was asked for by name.

``Collapse`` (``mathlas.ranking.collapse``) runs between ``Rerank`` and ``StatementLift``: one rank
per group of copies of one fact (the same theorem in several sources, ``mathlas.groups``), the
best-ranked kept, unless the request says ``collapse=False``. After every stage that scores, so it
collapses the order they made; before the stages that place rows on purpose (a statement above its
proof, a declaration asked for by name), which keep what they place, and which cut the pool to the
answer's depth (a stage after them could not fill the ranks it frees).

Definition intent is not a stage: it changes the kind weights and prior weights the plan gives
fusion and ``Priors`` (``mathlas.ranking.plan``), so it acts before the pool exists.

To add one (a learned ranking model, a name lookup): write the class, then either pass the list to
``Pipeline(bundle, stages=[...])`` or put it into ``default_stages`` at its place (a learned model
after ``Priors``, before ``Rerank``; the name lookup is last, see above).
A stage that reorders must say how its order breaks ties (``Candidates.sort`` breaks them by best
channel rank, then key) and should record its own place per row as a mark
(``pool.marked(name, places)``), which hits show in ``ranks``.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from collections.abc import Sequence

import numpy as np

import mathlas.ranking.settings as settings
from mathlas.ranking.candidates import Candidates
from mathlas.ranking.fusion import add_priors, prior_values, statements_first

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.findings.search import FindingsDocuments
    from mathlas.ranking.plan import Plan
    from mathlas.ranking.query import Query
    from mathlas.request import SearchRequest


@dataclass(frozen=True)
class StageContext:
    """What a stage may read besides the pool: the ``bundle`` (its table, columns, lazy parts), the
    ``plan`` (request, filters, weights, priors, depth, ``top``), the ``query`` (its text and, on
    first use, its vector) and the saved findings taking part (``extra``; keys ``>= len(bundle)``)."""

    bundle: Any
    plan: Plan
    notes: dict = field(default_factory=dict)  # what a stage leaves for the answer (``Ranked.notes``)

    @property
    def request(self) -> SearchRequest:
        return self.plan.request

    @property
    def query(self) -> Query:
        return self.plan.query

    @property
    def extra(self) -> FindingsDocuments | None:
        return self.plan.extra

    def text(self, key: int) -> str:
        """A candidate's retrieval text (a finding's search text), what a model reads of it."""
        n = len(self.bundle)
        if key >= n:
            return self.plan.extra.text(key - n)
        return self.bundle.column("text")[key].as_py() or ""


@runtime_checkable
class Stage(Protocol):
    """One step over the fused pool (module docstring)."""

    name: str

    def __call__(self, pool: Candidates, ctx: StageContext) -> Candidates: ...


class Priors:
    """The document priors the bundle declares, at the weights the plan says (after definition
    intent): ``score + weight * transform(column)``, re-sorted. Saved findings have no priors."""

    name = "priors"

    def __call__(self, pool: Candidates, ctx: StageContext) -> Candidates:
        weights = ctx.plan.priors
        if not weights or not len(pool):
            return pool
        keys = pool.keys
        n = len(ctx.bundle)
        bonus = np.zeros(len(keys))
        ours = keys < n
        bonus[ours] = prior_bonus(ctx.bundle, keys[ours], weights)
        return add_priors(pool, bonus, len(pool))


def prior_bonus(bundle, keys: np.ndarray, weights) -> np.ndarray:
    """``sum_p weight_p * transform_p(column_p[key])`` for each key."""
    keys = np.asarray(keys, dtype=np.int64)
    bonus = np.zeros(len(keys), dtype=np.float64)
    declared = settings.priors(bundle)
    for name, w in weights.items():
        spec = declared[name]
        bonus += w * prior_values(_prior_column(bundle, name, spec["column"])[keys], spec["transform"])
    return bonus


_PRIOR_COLUMNS: weakref.WeakKeyDictionary[Any, dict] = weakref.WeakKeyDictionary()
_PRIOR_LOCK = threading.Lock()


def _prior_column(bundle, name: str, column: str) -> np.ndarray:
    """A prior's metadata column as float64 (NaN for null), read once per bundle: 8 bytes a document,
    where taking a few hundred rows of a chunked column costs about a millisecond a query."""
    with _PRIOR_LOCK:
        got = _PRIOR_COLUMNS.setdefault(bundle, {}).get(column)
    if got is not None:
        return got
    import pyarrow as pa
    import pyarrow.compute as pc

    from mathlas.errors import BundleCorruptError

    col = bundle.table.column(column)
    try:
        values = pc.fill_null(col.cast(pa.float64()), float("nan")).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise BundleCorruptError(f"bundle {bundle.root.name}: prior {name!r} column {column} "
                                 f"is {col.type}, not a number") from None
    values = np.ascontiguousarray(values, dtype=np.float64)
    values.setflags(write=False)
    with _PRIOR_LOCK:
        _PRIOR_COLUMNS.setdefault(bundle, {})[column] = values
    return values


class Rerank:
    """The bundle's reranker (a cross-encoder) rescores the first ``plan.rerank_depth`` rows; they
    take its scores and its order (mark ``rerank``), the rest follow in fused order."""

    name = "rerank"

    def __call__(self, pool: Candidates, ctx: StageContext) -> Candidates:
        from mathlas.ranking.rerank import reorder

        head = pool.keys[:ctx.plan.rerank_depth].tolist()
        if not head:
            return pool
        # the text the channels searched: a misspelt name corrected, abbreviations expanded (the
        # words the request typed would score the candidates against the slip)
        return reorder(pool, ctx.bundle.reranker.score(ctx.query.text, [ctx.text(k) for k in head]))


class StatementLift:
    """The statement-first rule: a statement goes right above the first proof or example of it that
    ranks higher (``mathlas.ranking.fusion.statements_first``), where the request's filters and
    weights let it rank at all. Placed rows up to the answer's depth only (``plan.top``)."""

    name = "statement_lift"

    def __call__(self, pool: Candidates, ctx: StageContext) -> Candidates:
        plan = ctx.plan
        if plan.about is None:
            return pool
        allowed = None if plan.filters.allowed is None and plan.key_weights is None else plan.allowed
        return statements_first(pool, plan.about, allowed, limit=plan.top)


def default_stages(bundle=None) -> Sequence[Stage]:
    """The stages every bundle runs (each skips itself where the request or bundle has nothing for it)."""
    from mathlas.ranking.learned import LearnedRank
    from mathlas.ranking.names import NameMatch
    from mathlas.ranking.collapse import Collapse
    from mathlas.ranking.named import NamedFirst
    from mathlas.ranking.replacements import ReplacementsFirst
    from mathlas.ranking.shape import ShapeMatch

    return (Priors(), LearnedRank(), Rerank(), Collapse(), NamedFirst(), StatementLift(), ReplacementsFirst(),
            ShapeMatch(), NameMatch())
