"""Document priors: ``score + weight * transform(column)`` after fusion, on a deeper candidate list."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from mathlas.errors import BundleCorruptError, UsageError
from mathlas.ranking.candidates import Candidates, Fused
from mathlas.ranking.fusion import add_priors, prior_values

QUERY = "finitely generated module local ring"


def test_prior_transforms():
    x = np.array([0.0, 1.0, math.e ** 2, np.nan, 5.0])
    np.testing.assert_allclose(prior_values(x, "log1"), [0.0, 0.0, 2.0, 0.0, math.log(5)])
    np.testing.assert_allclose(prior_values(x, "identity"), [0.0, 1.0, math.e ** 2, 0.0, 5.0])
    with pytest.raises(ValueError, match="unknown prior transform"):
        prior_values(x, "square")


def test_add_priors_resorts_and_cuts():
    fused = Candidates.from_rows([Fused(10, 0.5, {"lexical": 1}), Fused(11, 0.4, {"lexical": 2}),
                                  Fused(12, 0.3, {"lexical": 3})])
    out = add_priors(fused, np.array([0.0, 0.0, 0.25]), 2)
    assert [(f.key, round(f.score, 6)) for f in out] == [(12, 0.55), (10, 0.5)]
    tie = add_priors(fused, np.array([0.0, 0.1, 0.0]), 3)  # 0.5 vs 0.5: the better rank wins
    assert [f.key for f in tie] == [10, 11, 12]
    assert len(add_priors(Candidates.empty(("lexical",)), np.zeros(0), 3)) == 0


def test_declared_priors_and_defaults(papers, tiny):
    assert set(papers.priors) == {"citations", "recency"}  # the reader's prior and the recipe's own
    base = papers.search(QUERY, k=5)
    # weight 0 (the declared default) and an explicit 0 change nothing; None keeps old callers working
    assert [(h.id, h.score) for h in papers.search(QUERY, k=5, priors={"citations": 0.0})] == \
        [(h.id, h.score) for h in base]
    assert tiny.priors == {}
    assert [h.id for h in tiny.search("compact", k=3, priors=None)] == [h.id for h in tiny.search("compact", k=3)]


def test_citation_prior_adds_log_citations(papers):
    w = 0.01
    base = {h.id: h.score for h in papers.search(QUERY, k=100)}
    boosted = papers.search(QUERY, k=100, priors={"citations": w})
    assert {h.id for h in boosted} == set(base)
    for h in boosted:
        c = papers.get(h.id).fields.get("citations")
        assert h.score == pytest.approx(base[h.id] + w * math.log(max(c or 1, 1)), abs=1e-9)
    scores = [h.score for h in boosted]
    assert scores == sorted(scores, reverse=True)


def test_prior_acts_before_the_cut(papers):
    # k=1 with a heavy citation prior: the winner is the most cited paper among the deeper fused list,
    # not a re-ordering of the unboosted top 1
    top1 = papers.search(QUERY, k=1)[0]
    deep = papers.search(QUERY, k=100)
    most_cited = max(deep, key=lambda h: (papers.get(h.id).fields.get("citations") or 0))
    assert papers.get(most_cited.id).fields["citations"] == 5000 and most_cited.id != top1.id
    got = papers.search(QUERY, k=1, priors={"citations": 1.0})
    assert [h.id for h in got] == [most_cited.id]


def test_identity_prior_and_single_channel_modes(papers):
    # recency = identity on the year: a tiny weight orders ties, a large one sorts by year
    hits = papers.search(QUERY, k=50, mode="lexical", priors={"recency": 10.0})
    years = [papers.get(h.id).fields.get("year") or 0 for h in hits]
    assert years == sorted(years, reverse=True)
    dense = {h.id: h.score for h in papers.search(QUERY, k=50, mode="dense")}
    for h in papers.search(QUERY, k=50, mode="dense", priors={"recency": 0.001}):  # the channel's own score + prior
        assert h.score == pytest.approx(dense[h.id] + 0.001 * (papers.get(h.id).fields.get("year") or 0), abs=1e-5)


def test_bad_priors(papers, tiny, papers_bundle_dir):
    with pytest.raises(UsageError, match=r"unknown prior 'pagerank'.*declares: citations, recency"):
        papers.search(QUERY, priors={"pagerank": 1.0})
    with pytest.raises(UsageError, match="declares: none"):
        tiny.search("compact", priors={"citations": 1.0})
    for bad in (float("nan"), float("inf"), "1", True):
        with pytest.raises(UsageError, match="finite number"):
            papers.search(QUERY, priors={"citations": bad})
    with pytest.raises(UsageError, match="mapping"):
        papers.search(QUERY, priors=[("citations", 1.0)])
    from mathlas.engine import Bundle

    fusion = {**papers.manifest.fusion, "priors": {"x": {"column": "nope", "transform": "log1", "weight": 1}}}
    broken = Bundle(papers_bundle_dir, dataclasses.replace(papers.manifest, fusion=fusion))
    with pytest.raises(BundleCorruptError, match="fusion.priors"):
        broken.search(QUERY)


@pytest.mark.slow
def test_tool_and_cli_priors(papers_bundle_dir):
    import json
    import subprocess
    import sys

    from mathlas.tools.informal import search_existing_math

    r = search_existing_math(QUERY, k=1, bundle=str(papers_bundle_dir), priors={"citations": 1.0})
    assert r.hits[0].id.startswith("arxiv:1801.00042#")
    p = subprocess.run([sys.executable, "-m", "mathlas", "search", QUERY, "--bundle", str(papers_bundle_dir),
                        "--json", "-k", "1", "--prior", "citations=1"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["hits"][0]["id"].startswith("arxiv:1801.00042#")
    for bad in ("citations", "citations=x", "nope=1"):
        p = subprocess.run([sys.executable, "-m", "mathlas", "search", QUERY, "--bundle", str(papers_bundle_dir),
                            "--prior", bad], capture_output=True, text=True, timeout=300)
        assert p.returncode == 2, (bad, p.stderr)


def test_writer_refuses_a_prior_on_a_missing_or_text_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from mathlas_build.writer import _check_priors

    meta = tmp_path / "documents.parquet"
    pq.write_table(pa.table({"id": ["a"], "citations": pa.array([None], pa.int64()), "title": ["t"]}), meta)
    _check_priors({"priors": {"c": {"column": "citations", "transform": "log1", "weight": 0}}}, meta)
    with pytest.raises(ValueError, match="not in the metadata"):
        _check_priors({"priors": {"c": {"column": "pagerank", "transform": "identity", "weight": 0}}}, meta)
    with pytest.raises(ValueError, match="not a number"):
        _check_priors({"priors": {"c": {"column": "title", "transform": "identity", "weight": 0}}}, meta)


# ------------------------------------------------------------------------------ short keyword queries

def test_short_queries_are_repeated_for_the_dense_channel(tiny, tiny_bundle_dir):
    from mathlas.ranking.filters import Filters
    from mathlas.ranking.query import dense_text

    assert tiny.manifest.encoder["pooling"] == "mean"
    assert dense_text("Sylow", tiny.manifest) == "Sylow Sylow"
    assert dense_text("the Yoneda lemma", tiny.manifest) == "the Yoneda lemma the Yoneda lemma"
    assert dense_text("Artin-Rees", tiny.manifest) == "Artin-Rees Artin-Rees"
    for unchanged in ("Fermat little theorem", "a finitely generated module", "$x^2$", "H^1", "Nat.Prime", "the of"):
        assert dense_text(unchanged, tiny.manifest) == unchanged
    q = tiny.encoder.encode_queries(["Nakayama Nakayama"])[0]
    want = tiny.dense.search(q, 5, Filters())
    got = tiny.search("Nakayama", k=5, mode="dense")
    assert [h.score for h in got] == pytest.approx(want.scores.tolist(), abs=1e-6)
    off = dataclasses.replace(tiny.manifest, fusion={**tiny.manifest.fusion, "short_query_repeat": 1})
    assert dense_text("Sylow", off) == "Sylow"
