"""Ranking: how a bundle's documents are ordered for a query. Storage is ``mathlas.engine`` (a
``Bundle`` opens files and returns documents); this package ranks what it stores.

    plan        plan.py        the request fitted to the bundle: checks, filters, weights, priors, depth
    channels    lexical.py     BM25 (tantivy)           } each ``Channel``: rank(query, depth, filters) -> Ranking
                dense.py       binary HNSW + int8 rescoring }
                (saved findings: extra documents of both, mathlas.findings.search, merged by score)
    fuse        fusion.py      RRF (or score fusion) of the rankings -> one ``Candidates`` pool
    stages      stages.py      priors, rerank (rerank.py), statement lift; each a ``Stage``
    cut         pipeline.py    the answer's rows -> hits; everything returned as one ``Ranked``

``pipeline_for(bundle).rank(req)`` runs it (``mathlas.service.search`` is how surfaces call it).
Beside them: ``query.py`` (the query text and its kept vectors), ``candidates.py`` (``Ranking``,
``Candidates``), ``filters.py`` (source, kind and paper filters), ``intent.py`` (definition intent),
``abbreviations.py`` (abbreviations expanded before searching), ``confidence.py`` (the answer's
``match``, read from ``Ranked.rankings``).

**The stage protocol.** A stage is an object with a ``name`` and ``__call__(pool, ctx) ->
Candidates``. ``pool`` is the fused candidate pool, best first, as numpy arrays: ``keys``,
``scores``, and per candidate each channel's 1-based rank (``ranks``, 0: not ranked there) and raw
score (``raw``: BM25 for lexical, the cosine for dense; NaN: not ranked there), plus what earlier
stages marked (``marks``). ``ctx`` (``StageContext``) gives the bundle, the plan (request,
filters, weights, ``top`` = k + offset), the query (``ctx.query.text``, ``ctx.query.vector()``)
and the saved findings (keys >= len(bundle)). A stage returns the pool as it should go on:
rescored and re-sorted (``pool.rescored(s).sort()``), reordered (``pool.take(rows)``), cut
(``pool.head(n)``), with a per-row mark (``pool.marked(name, values)``), or unchanged when it does
not apply. ``Pipeline(bundle, stages=[...])`` runs any list; ``stages.default_stages`` is what
every bundle runs (docs/ranking.md says where a learned model and a name lookup go).

The package imports nothing of the surfaces, the tools, the service or ``mathlas.engine``: it ranks
whatever bundle it is given (tests/test_layout.py).
"""
from __future__ import annotations

__all__ = ["Pipeline", "Ranked", "pipeline_for", "Candidates", "Ranking", "Channel", "Stage", "StageContext"]


def __getattr__(name: str):  # numpy and pyarrow load with the first search, not with this package
    if name in ("Pipeline", "Ranked", "pipeline_for", "Channel"):
        from mathlas.ranking import pipeline

        return getattr(pipeline, name)
    if name in ("Candidates", "Ranking"):
        from mathlas.ranking import candidates

        return getattr(candidates, name)
    if name in ("Stage", "StageContext"):
        from mathlas.ranking import stages

        return getattr(stages, name)
    raise AttributeError(f"module 'mathlas.ranking' has no attribute {name!r}")
