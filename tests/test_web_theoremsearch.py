"""``POST /search``: TheoremSearch's REST API against a real ``mathlas serve``.

The contract comes from TheoremSearch's published request and response fields (its API models:
``SearchRequest``, ``TheoremResult``, ``PaperResult``); a client written the way a research agent's
"librarian" calls TheoremSearch must work unchanged but for the base URL. The papers bundle (built
from a parquet fixture in the TheoremSearch dataset's schema) is the default bundle here, the tiny
informal bundle the second.
"""
from __future__ import annotations

import math

import pytest

from test_web_serve import TIMEOUT, WebServer, assert_clean, httpx

# The published fields, name -> JSON type(s)
REQUEST_FIELDS = ("query", "n_results", "sources", "authors", "types", "tags", "paper_filter", "year_range",
                  "citation_range", "citation_weight", "include_unknown_citations")
THEOREM_FIELDS = {"theorem_id": (str,), "name": (str,), "body": (str,), "slogan": (str,), "theorem_type": (str,),
                  "link": (str, type(None)), "paper": (dict,), "similarity": (float,), "score": (float,),
                  "has_metadata": (bool,)}
PAPER_FIELDS = {"paper_id": (str,), "source": (str,), "title": (str,), "authors": (list,), "link": (str,),
                "summary": (str, type(None)), "journal_ref": (str, type(None)), "primary_category": (str, type(None)),
                "categories": (list,), "citations": (int, type(None)), "year": (int, type(None)),
                "journal_published": (bool, type(None))}
QUERY = "finitely generated module over a local ring with mM = M is zero"


@pytest.fixture(scope="module")
def ts(papers_bundle_dir, tiny_bundle_dir):
    server = WebServer("--bundle", str(papers_bundle_dir), "--bundle", str(tiny_bundle_dir))
    yield server
    server.stop()
    assert_clean(server)


def search(server, **body):
    r = server.post("/search", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def papers_of(out) -> set[str]:
    return {t["paper"]["paper_id"] for t in out["theorems"]}


# ------------------------------------------------------------------------------ the contract

def check_theorem(t: dict) -> None:
    for name, types in THEOREM_FIELDS.items():
        assert name in t, name
        assert isinstance(t[name], types), (name, t[name])
    for name, types in PAPER_FIELDS.items():
        assert name in t["paper"], name
        assert isinstance(t["paper"][name], types), (name, t["paper"][name])
    assert all(isinstance(a, str) for a in t["paper"]["authors"] + t["paper"]["categories"])
    assert math.isfinite(t["score"]) and -1.0001 <= t["similarity"] <= 1.0001


@pytest.mark.slow
def test_contract_every_published_field(ts):
    full = {"query": QUERY, "n_results": 5, "sources": [], "authors": [], "types": [], "tags": [],
            "paper_filter": None, "year_range": None, "citation_range": None, "citation_weight": 0.0,
            "include_unknown_citations": True}
    assert set(full) == set(REQUEST_FIELDS)
    r = ts.post("/search", json=full)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    out = r.json()
    assert set(out) >= {"theorems"} and 1 <= len(out["theorems"]) <= 5
    for t in out["theorems"]:
        check_theorem(t)
    top = out["theorems"][0]
    assert top["theorem_id"] == "arxiv:2101.00001#Theorem 1.1"
    assert top["paper"] == {"paper_id": "2101.00001", "source": "arXiv", "title": "Finitely generated modules over local rings",
                            "authors": ["Jean-Pierre Serre", "Ana García"], "link": "https://arxiv.org/abs/2101.00001",
                            "summary": None, "journal_ref": "J. Algebra 12 (2021) 1-20", "primary_category": "math.AC",
                            "categories": ["math.AC", "math.AG"], "citations": 120, "year": 2021,
                            "journal_published": True}
    assert top["has_metadata"] is True and top["theorem_type"] == "theorem" and top["name"] == "Theorem 1.1"
    assert top["slogan"].startswith("Nakayama's lemma") and "\\mathfrak m" in top["body"]
    scores = [t["score"] for t in out["theorems"]]
    assert scores == sorted(scores, reverse=True)
    verdict = {k: out["mathlas"].pop(k) for k in ("match", "confidence")}
    assert out["mathlas"] == {"bundle": "papers-0.1.0", "mode": "hybrid", "ignored": {}, "notes": []}
    assert "x-mathlas-ignored" not in r.headers and r.headers["x-mathlas-bundle"] == "papers-0.1.0"
    # how sure the search is, as GET /api/search (and the CLI) says it for the same query
    same = ts.get("/api/search", params={"q": QUERY, "k": 5, "bundle": "papers-0.1.0"})
    assert same.status_code == 200, same.text
    assert verdict == {"match": same.json()["match"], "confidence": same.json()["confidence"]}
    assert verdict["match"] in ("strong", "weak", "none") and 0 <= verdict["confidence"] <= 1


def test_minimal_request_and_the_limit_alias(ts):
    assert len(search(ts, query=QUERY)["theorems"]) == 10  # TheoremSearch's default n_results
    a = search(ts, query=QUERY, limit=3)
    b = search(ts, query=QUERY, n_results=3)
    assert [t["theorem_id"] for t in a["theorems"]] == [t["theorem_id"] for t in b["theorems"]] and len(a["theorems"]) == 3


def test_similarity_is_the_dense_cosine_and_score_the_fused_score(ts):
    hybrid = search(ts, query=QUERY, n_results=5)
    dense = {t["theorem_id"]: t for t in search(ts, query=QUERY, n_results=13, mode="dense")["theorems"]}
    for t in hybrid["theorems"]:
        assert t["similarity"] == pytest.approx(dense[t["theorem_id"]]["score"], abs=1e-5)
        assert t["score"] < 0.1  # RRF scale: about 1 / (k_rrf + rank), summed over channels
    lexical = search(ts, query=QUERY, n_results=3, mode="lexical")
    assert all(t["similarity"] is None for t in lexical["theorems"])


# ------------------------------------------------------------------------------ each field mapped

def test_authors_types_tags_and_title(ts):
    tao = search(ts, query=QUERY, authors=["Terence Tao"], n_results=20)
    assert papers_of(tao) == {"math/0601001", "1801.00042"}
    assert all(any("Tao" in a for a in t["paper"]["authors"]) for t in tao["theorems"])
    lemmas = search(ts, query=QUERY, types=["Lemma"], n_results=20)
    assert lemmas["theorems"] and {t["theorem_type"] for t in lemmas["theorems"]} == {"lemma"}
    ac = search(ts, query=QUERY, tags=["math.NT"], n_results=20)
    assert papers_of(ac) == {"1801.00042"}
    assert papers_of(search(ts, query=QUERY, categories=["math.NT"], n_results=20)) == {"1801.00042"}
    titled = search(ts, query=QUERY, paper_filter="nakayama", n_results=20)
    assert papers_of(titled) == {"2202.05555"}


def test_year_and_citation_ranges(ts):
    assert papers_of(search(ts, query=QUERY, year_range=[2021, 2022], n_results=20)) == {"2101.00001", "2202.05555"}
    known = papers_of(search(ts, query=QUERY, citation_range=[100, 10000], include_unknown_citations=False, n_results=20))
    assert known == {"2101.00001", "1801.00042"}
    with_unknown = papers_of(search(ts, query=QUERY, citation_range=[100, 10000], n_results=20))
    assert known < with_unknown and {"math/0601001", "1905.01234"} <= with_unknown  # null / "None" citations kept
    assert "2202.05555" not in with_unknown  # 3 citations: out of range


def test_citation_weight_is_the_citations_prior(ts):
    plain = search(ts, query="primes", n_results=5, mode="dense")
    weighted = search(ts, query="primes", n_results=5, mode="dense", citation_weight=0.05)
    by_id = {t["theorem_id"]: t for t in plain["theorems"]}
    for t in weighted["theorems"]:
        if t["theorem_id"] in by_id:
            bonus = 0.05 * math.log(max(t["paper"]["citations"] or 1, 1))
            assert t["score"] == pytest.approx(by_id[t["theorem_id"]]["score"] + bonus, abs=1e-5)
    assert weighted["theorems"][0]["paper"]["paper_id"] == "1801.00042"  # 5000 citations
    hybrid = search(ts, query="primes", n_results=3, citation_weight=0.001)
    assert hybrid["mathlas"]["notes"] and "RRF" in hybrid["mathlas"]["notes"][0]


def test_sources_by_theoremsearch_name(ts):
    assert {t["paper"]["source"] for t in search(ts, query=QUERY, sources=["arXiv"])["theorems"]} == {"arXiv"}
    r = ts.post("/search", json={"query": QUERY, "sources": ["Stacks Project"]})
    assert r.json()["theorems"] == [] and r.headers["x-mathlas-ignored"] == "sources"
    assert "Stacks Project" in r.json()["mathlas"]["ignored"]["sources"]


def test_fields_without_meaning_are_reported_not_dropped(ts):
    r = ts.post("/search", json={"query": "ring", "n_results": 3, "bundle": "tiny", "authors": ["Serre"],
                                 "tags": ["math.AC"], "year_range": [1990, 2000], "paper_filter": "rings",
                                 "citation_range": [1, 5], "citation_weight": 0.5, "prompt": "Instruct: ...",
                                 "db_top_k": 50, "colour": "red",
                                 "sources": ["Stacks Project", "HoTT Book", "arXiv"], "types": ["lemma", "theorem"]})
    assert r.status_code == 200
    out = r.json()
    ignored = out["mathlas"]["ignored"]
    assert set(ignored) == {"authors", "tags", "year_range", "paper_filter", "citation_range", "citation_weight",
                            "prompt", "db_top_k", "colour", "sources"}
    assert set(r.headers["x-mathlas-ignored"].split(", ")) == set(ignored)
    assert "arXiv" in ignored["sources"] and "no paper metadata" in ignored["authors"]
    assert out["mathlas"]["bundle"] == "tiny-0.1.0"
    assert out["theorems"] and {t["paper"]["source"] for t in out["theorems"]} <= {"Stacks Project", "HoTT Book"}
    for t in out["theorems"]:
        check_theorem(t)
        assert t["has_metadata"] is False and t["theorem_type"] in ("lemma", "theorem")
    stacks = next(t for t in out["theorems"] if t["paper"]["source"] == "Stacks Project")
    assert stacks["paper"]["title"] == "The Stacks Project" and stacks["paper"]["link"].startswith("https://stacks")
    assert stacks["link"].startswith("https://stacks.math.columbia.edu/tag/")


def test_a_misspelt_field_says_which_it_meant(ts):
    """nResults (a natural misspelling) silently returned 10: it is reported with the field it means."""
    r = ts.post("/search", json={"query": "ring", "nResults": 3, "sourcse": ["arXiv"], "colour": "red"})
    assert r.status_code == 200 and len(r.json()["theorems"]) == 10  # still ignored: reported, not guessed
    ignored = r.json()["mathlas"]["ignored"]
    assert ignored["nResults"].endswith("did you mean 'n_results'?")
    assert ignored["sourcse"].endswith("did you mean 'sources'?")
    assert "did you mean" not in ignored["colour"]
    assert r.headers["x-mathlas-ignored"] == ("colour, nResults (did you mean n_results?), "
                                              "sourcse (did you mean sources?)")


def test_field_meant():
    from mathlas.web.theoremsearch import field_meant

    assert [field_meant(n) for n in ("nResults", "numResults", "top_k", "yearRange", "paperFilter", "colour")] == \
        ["n_results", "n_results", "n_results", "year_range", "paper_filter", None]


@pytest.mark.parametrize("body, status, fragment", [
    ({"query": "  "}, 422, "the query is empty"),
    ({"n_results": 3}, 422, "the query is empty"),
    ({"query": 123}, 422, 'the query must be a string, got a number (123); send its words or formula as text, e.g. "123"'),
    ({"query": ["ring", "module"]}, 422, 'the query must be a string, got a list (["ring", "module"]); '),
    ({"query": "ring", "n_results": 0}, 422, "n_results must be an integer from 1 to 100"),
    ({"query": "ring", "n_results": 101}, 422, "n_results must be an integer from 1 to 100"),
    ({"query": "ring", "limit": "ten"}, 422, "n_results must be an integer"),
    ({"query": "ring", "n_results": 3, "limit": 4}, 422, "disagree"),
    ({"query": "ring", "year_range": [2000]}, 422, "year_range must be [min, max]"),
    ({"query": "ring", "year_range": [2010, 2000]}, 422, "greater than max"),
    ({"query": "ring", "authors": "Tao"}, 200, ""),
    ({"query": "ring", "authors": [1]}, 422, "authors must be a list of strings"),
    ({"query": "ring", "sources": ["Wikipedia"]}, 422, "unknown source 'Wikipedia'"),
    ({"query": "ring", "citation_weight": "high"}, 422, "citation_weight must be a finite number"),
    ({"query": "ring", "include_unknown_citations": "yes"}, 422, "include_unknown_citations must be true or false"),
    ({"query": "ring", "mode": "fuzzy"}, 422, "mode must be one of"),
    ({"query": "ring", "bundle": "/tmp"}, 422, "is not served here"),
    ([1, 2], 422, "must be a JSON object"),
])
def test_bad_requests(ts, body, status, fragment):
    r = ts.post("/search", json=body)
    assert r.status_code == status, r.text
    if status != 200:
        assert r.json()["status"] == status and fragment in r.json()["error"] and "\n" not in r.json()["error"]


def test_the_listing_names_the_bundle_a_plain_request_searches(ts):
    """``/api/bundles``' ``default_bundle`` is the first ``--bundle`` (papers here), the bundle an
    answer without ``bundle`` comes from, not the library's default (``informal``)."""
    listing = ts.get("/api/bundles").json()
    r = ts.post("/search", json={"query": QUERY, "n_results": 1})
    assert listing["default_bundle"] == "papers-0.1.0" == r.headers["X-Mathlas-Bundle"]


def test_body_that_is_not_json(ts):
    r = ts.post("/search", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]


# ------------------------------------------------------------------------------ a client written for TheoremSearch

class Librarian:
    """A research agent's literature "librarian", written against TheoremSearch's REST API the way
    such pipelines write it: POST, read ``theorems``, branch on ``paper.source``."""

    def __init__(self, base_url: str = "https://api.theoremsearch.com"):
        self.base_url = base_url.rstrip("/")

    def find(self, question: str, limit: int = 5) -> list[dict]:
        resp = httpx.post(f"{self.base_url}/search", json={"query": question, "limit": limit}, timeout=TIMEOUT)
        resp.raise_for_status()
        notes = []
        for t in resp.json()["theorems"]:
            paper = t["paper"]
            if paper["source"] == "arXiv":
                cite = f"{', '.join(paper['authors'])}, \"{paper['title']}\", arXiv:{paper['paper_id']}"
                if paper.get("year"):
                    cite += f" ({paper['year']})"
            else:
                cite = f"{paper['source']}: {t['name']} <{t['link'] or paper['link']}>"
            notes.append({"statement": t["body"], "summary": t["slogan"], "cite": cite,
                          "relevance": round(t["similarity"], 3), "kind": t["theorem_type"]})
        return notes


@pytest.mark.slow
def test_a_librarian_written_for_theoremsearch_works_unchanged(ts, tiny_bundle_dir):
    notes = Librarian(ts.base).find("Nakayama's lemma: finitely generated module M with mM = M is zero")
    assert len(notes) == 5
    assert notes[0]["cite"] == ('Jean-Pierre Serre, Ana García, "Finitely generated modules over local rings", '
                                "arXiv:2101.00001 (2021)")
    assert all(n["statement"] and n["summary"] and 0 < n["relevance"] <= 1 for n in notes)
    # the same client against a server whose default bundle has no papers: the other branch
    other = WebServer("--bundle", str(tiny_bundle_dir))
    try:
        notes = Librarian(other.base).find("a finitely generated module over a ring", limit=4)
        assert len(notes) == 4
        assert all(not n["cite"].startswith("arXiv") and "<https://" in n["cite"] for n in notes)
    finally:
        other.stop()
    assert_clean(other)


# ------------------------------------------------------------------------------ what the route reads

@pytest.mark.parametrize("which", ["papers", "tiny"])
def test_the_columns_read_by_key_are_the_documents_values(request, which):
    """The route reads of each hit only the columns its answer shows (``theoremsearch.COLUMNS``,
    ``Bundle.strings``), not the whole document: for every document of both test bundles they are
    the values its ``Document`` holds (``label``: the column, the document's ``tex_label``)."""
    from mathlas.web import api
    from mathlas.web.theoremsearch import COLUMNS

    b = request.getfixturevalue(which)
    keys = list(range(len(b)))
    read = api._column_values(b, keys, COLUMNS)
    whole = [api._document_values(b.document_at(key), COLUMNS) for key in keys]
    for key, got, want in zip(keys, read, whole):
        got = got | {c: got[c] or "" for c in ("body", "slogan")}  # a document writes a null text ""
        assert got == want, key
    assert any(v["paper_id"] for v in read) == (which == "papers")  # both kinds of answer are checked
