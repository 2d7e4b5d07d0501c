"""The ranking pipeline (mathlas.ranking): one returned value with every candidate's channel ranks and
raw scores, stages that plug in over the fused pool, and hits read straight from the table."""
from __future__ import annotations

import numpy as np
import pytest

from mathlas.hit import snippet
from mathlas.ranking.candidates import Candidates
from mathlas.ranking.pipeline import Channel, Pipeline, Ranked, pipeline_for
from mathlas.ranking.stages import Priors, Rerank, Stage, StageContext, StatementLift, default_stages
from mathlas.request import SearchRequest

QUERY = "finitely generated module over a local ring"


def test_ranked_carries_each_channels_rank_and_raw_score(tiny):
    ranked = pipeline_for(tiny).rank(SearchRequest.make(QUERY, 5))
    assert isinstance(ranked, Ranked) and len(ranked.hits) == len(ranked.top) == 5
    assert ranked.top.channels == ("lexical", "dense") == ranked.pool.channels
    assert [h.id for h in ranked.hits] == [tiny.column("id")[k].as_py() for k in ranked.top.keys.tolist()]
    lexical, dense = ranked.rankings["lexical"], ranked.rankings["dense"]
    for i, key in enumerate(ranked.top.keys.tolist()):
        hit = ranked.hits[i]
        for name, ranking in (("lexical", lexical), ("dense", dense)):
            at = np.flatnonzero(ranking.keys == key)
            rank, raw = ranked.top.rank_in(name)[i], ranked.top.raw_in(name)[i]
            if len(at):  # its place and its own score in that channel (BM25, cosine)
                assert rank == at[0] + 1 == hit.ranks[name] and raw == pytest.approx(float(ranking.scores[at[0]]))
            else:
                assert rank == 0 and hit.ranks[name] is None and np.isnan(raw)
    # the raw dense score is the cosine of the query vector the search made
    keys = ranked.top.keys[~np.isnan(ranked.top.raw_in("dense"))]
    cos = tiny.dense.rescore(np.asarray(ranked.vector(), dtype=np.float32), keys)
    assert cos.tolist() == pytest.approx(ranked.top.raw_in("dense")[~np.isnan(ranked.top.raw_in("dense"))].tolist())
    # the pool is every candidate a channel ranked (before the stages and the cut)
    assert len(ranked.pool) > len(ranked.top) and set(ranked.top.keys.tolist()) <= set(ranked.pool.keys.tolist())
    assert ranked.query == QUERY and ranked.expansions == {} and ranked.intent is None


def test_the_answers_rows_follow_the_offset(tiny):
    p = pipeline_for(tiny)
    whole = p.rank(SearchRequest.make(QUERY, 6))
    page = p.rank(SearchRequest.make(QUERY, 3, offset=3))
    assert page.top.keys.tolist() == whole.top.keys.tolist()[3:]
    assert [h.id for h in page.hits] == [h.id for h in whole.hits][3:]
    assert page.top.ranks.tolist() == whole.top.ranks.tolist()[3:]


class NameFirst:
    """A toy name lookup: a document whose name is the query goes first (from anywhere in the
    bundle, in the pool or not), marked ``name``; the rest follow in their order."""

    name = "name"

    def __call__(self, pool: Candidates, ctx: StageContext) -> Candidates:
        names = [n.lower() for n in ctx.bundle.column("name").to_pylist()]
        q = ctx.query.text.lower()
        if q not in names:
            return pool
        key = names.index(q)
        rows = np.flatnonzero(pool.keys != key)
        hit = np.flatnonzero(pool.keys == key)
        if len(hit):
            out = pool.take(np.concatenate([hit, rows]))
        else:  # brought in: no channel ranked it
            row = Candidates((*pool.channels,), np.array([key]), np.array([0.0]),
                             np.zeros((1, len(pool.channels)), np.int64), np.full((1, len(pool.channels)), np.nan),
                             np.array([-1]), {m: np.zeros(1, np.int64) for m in pool.marks})
            out = _concat(row, pool.take(rows))
        out = out.rescored(np.concatenate([[out.scores.max() + 1.0], out.scores[1:]]))
        place = np.zeros(len(out), dtype=np.int64)
        place[0] = 1
        return out.marked(self.name, place)


def _concat(a: Candidates, b: Candidates) -> Candidates:
    return Candidates(a.channels, np.concatenate([a.keys, b.keys]), np.concatenate([a.scores, b.scores]),
                      np.concatenate([a.ranks, b.ranks]), np.concatenate([a.raw, b.raw]),
                      np.concatenate([a.lifted_by, b.lifted_by]),
                      {m: np.concatenate([a.marks[m], b.marks[m]]) for m in a.marks})


def test_a_stage_plugs_in_over_the_fused_pool(tiny):
    assert all(isinstance(s, Stage) for s in (*default_stages(tiny), NameFirst()))
    names = [s.name for s in default_stages(tiny)]
    assert names.index("priors") < names.index("rerank") < names.index("statement_lift")
    plain = pipeline_for(tiny)
    names = tiny.column("name").to_pylist()
    last = next(n for n in reversed(names) if n)  # some document's exact name
    before = plain.rank(SearchRequest.make(last, 5))
    with_lookup = Pipeline(tiny, stages=[NameFirst(), *default_stages(tiny)])
    ranked = with_lookup.rank(SearchRequest.make(last, 5))
    assert ranked.hits[0].name == last and ranked.hits[0].ranks["name"] == 1
    assert all(h.ranks["name"] is None for h in ranked.hits[1:])
    assert "name" not in before.hits[0].ranks  # the default pipeline has no such stage
    # the bundle's own pipeline is untouched, and a stage list is any sequence of stages
    kinds = [type(s) for s in plain.stages]
    assert pipeline_for(tiny) is plain and {Priors, Rerank, StatementLift} <= set(kinds)


def test_the_channels_follow_the_protocol_and_the_fusion_is_replaceable(tiny):
    from mathlas.ranking.fusion import convex

    assert isinstance(tiny.lexical, Channel) and isinstance(tiny.dense, Channel)
    assert (tiny.lexical.name, tiny.dense.name) == ("lexical", "dense")
    scored = Pipeline(tiny, fuse=lambda rankings, k, **kw: convex(rankings, k, channel_weights=kw["channel_weights"],
                                                                  key_weights=kw["key_weights"]))
    hits = scored.rank(SearchRequest.make(QUERY, 5)).hits
    assert len(hits) == 5 and all(0 <= h.score <= 2 for h in hits)


def test_hits_of_keys_are_the_documents(tiny):
    keys = list(range(len(tiny)))
    hits = tiny.hits(keys, ranks=[{"lexical": 3}] * len(keys), fields=["license"])
    for key, h in zip(keys, hits):
        d = tiny.document_at(key)
        assert (h.id, h.source, h.kind, h.name, h.title, h.link, h.license) == \
            (d.id, d.source, d.kind, d.name, d.title, d.link, d.license)
        assert h.text == snippet(d.text) and h.ranks == {"lexical": 3, "dense": None}
        assert h.fields == {"license": d.license}
    assert tiny.hit(0).id == hits[0].id


def test_the_reranker_reads_the_text_the_channels_searched(tiny, monkeypatch):
    """A misspelt name the plan corrected, an abbreviation it expanded: the cross-encoder scores the
    candidates against the query the channels searched (``ctx.query.text``), not the words typed."""
    import dataclasses

    from mathlas.ranking.query import Query

    asked: list[str] = []

    class Recorder:  # the bundle's cross-encoder, recording what it is asked
        def score(self, query, texts):
            asked.append(query)
            return np.arange(len(texts), dtype=np.float32)

    monkeypatch.setattr(tiny, "_reranker", Recorder())
    pipeline = pipeline_for(tiny)
    plan, _, pool = pipeline.fused(SearchRequest.make("FTA over C", 5))
    assert plan.query.text.startswith("FTA over C fundamental theorem of algebra")
    plan.rerank_depth = 3
    reranked = Rerank()(pool, StageContext(tiny, plan))
    # as the plan of "Bear's criterion" has it: the name it is near searched instead
    fixed = dataclasses.replace(plan, request=SearchRequest.make("Bear's criterion", 5),
                                query=Query("Baer's criterion", pipeline.vectors))
    Rerank()(pool, StageContext(tiny, fixed))
    assert asked == [plan.query.text, "Baer's criterion"]
    assert reranked.keys[:3].tolist() == pool.keys[:3][::-1].tolist()  # the recorder's scores took the order
