"""Paper filters (authors, categories, year and citation ranges, journal) inside both channels, before the top-k cut."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mathlas.errors import UsageError
from mathlas.ranking.filters import Filters, PaperFilter

QUERY = "finitely generated module local ring"


def ids(hits):
    return [h.id for h in hits]


def passing(b, **pf) -> set[str]:
    """The ids a filter should keep, computed in Python from the metadata rows."""
    out = set()
    for row in b.table.to_pylist():
        ok = True
        if "authors" in pf:
            ok &= any(a in (row["authors"] or []) for a in pf["authors"])
        if "categories" in pf:
            ok &= any(c in (row["categories"] or []) for c in pf["categories"])
        if "year_min" in pf:
            ok &= row["year"] is not None and row["year"] >= pf["year_min"]
        if "citations_min" in pf:
            ok &= row["citations"] is not None and row["citations"] >= pf["citations_min"]
        if "journal_published" in pf:
            ok &= bool(row["journal_ref"]) == pf["journal_published"]
        if ok:
            out.add(row["id"])
    return out


@pytest.mark.parametrize("pf", [
    {"authors": ["Terence Tao"]},
    {"categories": ["math.AC"]},
    {"year_min": 2019},
    {"citations_min": 100},
    {"journal_published": True},
    {"journal_published": False},
    {"authors": ["Ben Green"], "year_min": 2019},
])
@pytest.mark.parametrize("mode", ["hybrid", "lexical", "dense"])
def test_filters_keep_exactly_the_matching_documents(papers, pf, mode):
    want = passing(papers, **pf)
    assert want and len(want) < len(papers)
    hits = papers.search(QUERY, k=50, mode=mode, paper_filter=pf)
    assert set(ids(hits)) <= want
    if mode == "dense":  # every allowed document has a cosine: all of them come back
        assert set(ids(hits)) == want


def test_filter_applies_before_the_cut(papers):
    # unfiltered, the top hits are Nakayama statements; filtered to Tao, k=2 must still give two Tao hits
    top = ids(papers.search(QUERY, k=2))
    assert not set(top) & passing(papers, authors=["Terence Tao"])
    for mode in ("hybrid", "dense"):
        hits = papers.search(QUERY, k=2, mode=mode, paper_filter={"authors": ["Terence Tao"]})
        assert len(hits) == 2 and set(ids(hits)) <= passing(papers, authors=["Terence Tao"])
    # lexical: the exact filtered top-k equals the unfiltered BM25 list with the others removed
    full = papers.search("primes", k=50, mode="lexical")
    want = [h.id for h in full if h.id in passing(papers, authors=["Ben Green"])][:1]
    assert ids(papers.search("primes", k=1, mode="lexical", paper_filter={"authors": ["Ben Green"]})) == want


def test_author_matching(papers):
    def who(name):
        return {h.id.split("#")[0] for h in papers.search(QUERY, k=50, mode="dense", paper_filter={"authors": [name]})}

    assert who("T. Tao") == who("tao") == {"arxiv:math/0601001", "arxiv:1801.00042"}
    assert who("emile borel") == {"arxiv:1905.01234"}  # accents and case ignored
    assert who("Serre") == {"arxiv:2101.00001"} and who("Serr") == set()  # whole words only
    both = papers.search(QUERY, k=50, mode="dense", paper_filter={"authors": ["Serre", "Rossi"]})
    assert {h.id.split("#")[0] for h in both} == {"arxiv:2101.00001", "arxiv:2202.05555"}  # any of them


def test_category_archive_prefix_and_ranges(papers):
    def papers_of(pf):
        return {h.id.split("#")[0] for h in papers.search(QUERY, k=50, mode="dense", paper_filter=pf)}

    assert papers_of({"categories": ["cs"]}) == {"arxiv:2301.11111"}
    assert len(papers_of({"categories": ["math"]})) == 6  # every paper with a math category, cs.LG + math.AC too
    assert papers_of({"categories": ["math.GN", "math.GR"]}) == {"arxiv:1905.01234", "arxiv:math/0601001"}
    assert papers_of({"year_min": 2018, "year_max": 2019}) == {"arxiv:1905.01234", "arxiv:1801.00042"}
    # unknown citation counts (null, "None") fail any bound
    assert papers_of({"citations_max": 10}) == {"arxiv:2202.05555", "arxiv:2301.11111"}
    assert papers_of({"citations_min": 0}) == {"arxiv:2101.00001", "arxiv:2202.05555", "arxiv:1801.00042",
                                               "arxiv:2301.11111"}
    assert papers.search(QUERY, k=5, paper_filter={"year_min": 2030}) == []


def test_bad_filters_and_bundles_without_papers(papers, tiny):
    for bad, msg in [({"author": ["x"]}, "no key 'author'"), ({"year_min": "1990"}, "must be an integer"),
                     ({"year_min": 2000, "year_max": 1990}, "greater than"), ({"authors": [""]}, "non-empty"),
                     ({"journal_published": "yes"}, "true or false"), ("Tao", "must be an object")]:
        with pytest.raises(UsageError, match=msg):
            papers.search(QUERY, paper_filter=bad)
    with pytest.raises(UsageError, match="no paper metadata"):
        tiny.search("compact", paper_filter={"authors": ["Tao"]})
    assert PaperFilter.parse({}) is None and PaperFilter.parse({"authors": []}) is None
    assert ids(papers.search(QUERY, k=5, paper_filter={})) == ids(papers.search(QUERY, k=5))


@pytest.mark.parametrize("strategy", ["ranges", "deepen"])
def test_lexical_masked_search_is_exact(tiny, monkeypatch, strategy):
    import mathlas.ranking.lexical as lexical

    # force one of the two exact strategies of LexicalChannel._search_masked
    monkeypatch.setattr(lexical, "RANGE_COST_PER_DOC", 0.0 if strategy == "ranges" else 1.0)
    lex = tiny.lexical
    n = len(tiny)
    rng = np.random.default_rng(7)
    for query in ("module ring", "compact space", "the of a"):
        full = lex.search(query, n)
        for density in (0.1, 0.5, 0.9):
            mask = rng.random(n) < density
            got = lex.search(query, 3, Filters(allowed=mask, paper=PaperFilter(year_min=0)))
            keep = mask[full.keys]
            np.testing.assert_allclose(got.scores, full.scores[keep][:3], rtol=1e-6)
            assert mask[got.keys].all()


@pytest.mark.slow
def test_tool_and_cli(papers_bundle_dir):
    import subprocess
    import sys

    from mathlas.tools.informal import search_existing_math

    r = search_existing_math(QUERY, k=5, bundle=str(papers_bundle_dir),
                             paper_filter={"authors": ["Tao"], "journal_published": True})
    assert r.hits and all(h.id.startswith("arxiv:1801.00042#") for h in r.hits)
    with pytest.raises(UsageError, match="paper_filter has no key"):
        search_existing_math(QUERY, bundle=str(papers_bundle_dir), paper_filter={"title": "x"})
    p = subprocess.run([sys.executable, "-m", "mathlas", "search", QUERY, "--bundle", str(papers_bundle_dir),
                        "--json", "--category", "math.GN", "--year-min", "2019", "-k", "3"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    hits = json.loads(p.stdout)["hits"]
    assert hits and all(h["id"].startswith("arxiv:1905.01234#") for h in hits)
    p = subprocess.run([sys.executable, "-m", "mathlas", "search", QUERY, "--bundle", str(papers_bundle_dir),
                        "--year-min", "x"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2
