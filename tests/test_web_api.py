"""mathlas's own JSON API over a real server: the same JSON as the CLI's ``--json`` (compared with
the real CLI run on the same bundle), the library's validation as 422/404 JSON errors, and an
OpenAPI document that describes every endpoint."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_web_serve import TIMEOUT, WebServer, assert_clean

CLI = "import sys; from mathlas.cli.main import main; sys.exit(main())"


def cli_json(*argv: str, env: dict[str, str] | None = None) -> dict:
    import os

    full = {**os.environ, **(env or {})}
    full.pop("MATHLAS_BUNDLE", None)
    out = subprocess.run([sys.executable, "-c", CLI, *argv], capture_output=True, text=True, timeout=TIMEOUT,
                         env=full, cwd=str(Path(__file__).parent))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def one_line_error(r, status: int, fragment: str) -> str:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) == {"error", "status"} and body["status"] == status
    assert "\n" not in body["error"] and "Traceback" not in body["error"]
    assert fragment in body["error"], body["error"]
    return body["error"]


# ------------------------------------------------------------------------------ same JSON as the CLI

@pytest.mark.parametrize("params, argv", [
    ({"q": "a finitely generated module over a ring", "k": 5}, ["-k", "5"]),
    ({"q": "exercise", "k": 7, "source": ["proofnet", "hott"]}, ["-k", "7", "--source", "proofnet", "--source", "hott"]),
    ({"q": "theorem", "exclude_source": "stacks", "kind": "theorem"}, ["--exclude-source", "stacks", "--kind", "theorem"]),
    ({"q": "ring", "mode": "lexical", "k": 3}, ["--mode", "lexical", "-k", "3"]),
    ({"q": "compact", "mode": "dense", "k": 4}, ["--mode", "dense", "-k", "4"]),
    ({"q": "module", "k": 3, "offset": 2, "kind_weight": ["lemma=0.5", "definition=0"], "rerank": "false"},
     ["-k", "3", "--offset", "2", "--kind-weight", "lemma=0.5", "--kind-weight", "definition=0", "--no-rerank"]),
])
@pytest.mark.slow
def test_search_is_the_cli_json(web, tiny_bundle_dir, params, argv):
    r = web.get("/api/search", params=params)
    assert r.status_code == 200, r.text
    want = cli_json("search", params["q"], "--json", "--bundle", str(tiny_bundle_dir), *argv)
    assert r.json() == want


@pytest.mark.slow
def test_paper_filters_and_priors_are_the_cli_json(web, papers_bundle_dir):
    params = {"q": "finitely generated module local ring", "bundle": "papers", "author": "Terence Tao",
              "year_min": 2000, "k": 5, "prior": "recency=0.001"}
    r = web.get("/api/search", params=params)
    assert r.status_code == 200, r.text
    want = cli_json("search", params["q"], "--json", "--bundle", str(papers_bundle_dir), "--author", "Terence Tao",
                    "--year-min", "2000", "-k", "5", "--prior", "recency=0.001")
    assert r.json() == want and want["hits"]


@pytest.mark.slow
def test_doc_is_the_cli_json(web, tiny_bundle_dir):
    ids = [h["id"] for h in web.get("/api/search", params={"q": "ring", "k": 3}).json()["hits"]]
    for doc_id in ids:
        r = web.get(f"/api/doc/{doc_id}")
        assert r.status_code == 200
        assert r.json() == cli_json("show", doc_id, "--json", "--bundle", str(tiny_bundle_dir))


@pytest.mark.slow
def test_lean_endpoints_are_the_cli_json(web, formal_bundle_dir):
    env = {"MATHLAS_FORMAL_BUNDLE": str(formal_bundle_dir)}
    r = web.get("/api/lean/search", params={"q": "prime two le", "k": 3})
    assert r.status_code == 200, r.text
    assert r.json() == cli_json("lean", "search", "prime two le", "-k", "3", "--json", env=env)
    assert r.json()["hits"][0]["id"] == "lean:Nat.Prime.two_le"
    for direction, flag in (("uses", []), ("used_by", ["--used-by"])):
        d = web.get("/api/lean/deps/lean:Nat.Prime.two_le", params={"direction": direction})
        assert d.status_code == 200, d.text
        assert d.json() == cli_json("lean", "deps", "lean:Nat.Prime.two_le", "--json", *flag, env=env)
    doc = web.get("/api/doc/lean:Nat.Prime.two_le").json()
    assert doc["source"] == "lean" and doc["fields"]["signature"]


def test_bundles_and_health(web):
    b = web.get("/api/bundles").json()
    assert [s["label"] for s in b["served"]] == ["tiny-0.1.0", "papers-0.1.0"]
    assert b["default_bundle"] == "tiny-0.1.0"  # the first --bundle, not the library's default (informal)
    assert b["served"][0]["default"] and not b["served"][0]["paper_filters"] and b["served"][1]["paper_filters"]
    assert "stacks" in b["served"][0]["sources"] and b["served"][0]["sources"]["stacks"]["license"]
    assert b["formal"]["available"] and b["formal"]["label"] == "formaltest-0.1.0"
    h = web.get("/health").json()
    assert h["status"] == "ok" and h["version"]


def test_a_served_bundle_by_name_or_label(web):
    for name in ("papers", "papers-0.1.0", "papers@0.1.0"):
        assert web.get("/api/search", params={"q": "primes", "bundle": name, "k": 2}).json()["bundle"] == "papers-0.1.0"


# ------------------------------------------------------------------------------ errors

@pytest.mark.parametrize("path, params, status, fragment", [
    ("/api/search", {"q": "   "}, 422, "the query is empty"),
    ("/api/search", {}, 422, "the query is empty"),
    ("/api/search", {"q": "ring", "k": 0}, 422, "k must be an integer from 1 to 100"),
    ("/api/search", {"q": "ring", "k": 101}, 422, "k must be an integer from 1 to 100"),
    ("/api/search", {"q": "ring", "k": "ten"}, 422, "k must be an integer"),
    ("/api/search", {"q": "ring", "mode": "fuzzy"}, 422, "mode must be one of hybrid, lexical, dense"),
    ("/api/search", {"q": "ring", "source": "arxiv-nope"}, 422, "unknown source 'arxiv-nope'"),
    ("/api/search", {"q": "ring", "author": "Tao"}, 422, "paper"),
    ("/api/search", {"q": "ring", "prior": "citations"}, 422, "prior takes NAME=WEIGHT"),
    ("/api/search", {"q": "ring", "prior": "nope=1"}, 422, "unknown prior 'nope'"),
    ("/api/search", {"q": "ring", "kind_weight": "proof"}, 422, "kind_weight takes NAME=WEIGHT"),
    ("/api/search", {"q": "ring", "kind_weight": "proof=-1"}, 422, "must be a finite number >= 0"),
    ("/api/search", {"q": "ring", "rerank": "maybe"}, 422, "rerank must be true or false"),
    ("/api/search", {"q": "ring", "rerank": "true"}, 422, "has no reranker"),
    ("/api/search", {"q": "ring", "offset": -1}, 422, "offset must be an integer"),
    ("/api/search", {"q": "ring", "year_min": "1990s"}, 422, "year_min must be an integer"),
    ("/api/search", {"q": "ring", "journal": "maybe"}, 422, "journal must be yes or no"),
    ("/api/search", {"q": "ring", "colour": "red"}, 422, "unknown parameter 'colour'"),
    ("/api/search", {"q": "ring", "bundle": "/etc"}, 422, "is not served here"),
    ("/api/search", {"q": "ring", "bundle": "informal"}, 422, "is not served here"),
    ("/api/search", {"q": "x" * 10_001}, 422, "over the limit of 10,000"),
    ("/api/doc/stacks:NOPE", {}, 404, "no document with id 'stacks:NOPE'"),
    ("/api/doc/lean:No.Such.Thing", {}, 404, "no document with id 'lean:No.Such.Thing'"),
    ("/api/lean/search", {"q": "prime", "module": "No.Such"}, 422, "module"),
    ("/api/lean/deps/lean:Nat.Prime.two_le", {"depth": 99}, 422, "depth"),
    ("/api/lean/deps/lean:Nat.Prime.two_le", {"direction": "sideways"}, 422, "direction must be one of"),
    ("/api/nothing-here", {}, 404, "no endpoint /api/nothing-here"),
])
def test_bad_requests_are_one_line_json(web, path, params, status, fragment):
    one_line_error(web.get(path, params=params), status, fragment)


def test_an_id_without_its_source_says_the_full_id(web, tiny):
    """``/api/doc/00DV`` (a Stacks tag alone): 404 naming the id it meant, as ``mathlas show`` does."""
    full = next(i for i in tiny.table.column("id").to_pylist() if i.startswith("stacks:"))
    bare = full.split(":", 1)[1]
    one_line_error(web.get(f"/api/doc/{bare}"), 404,
                   f"no document with id {bare!r} in bundle tiny; did you mean {full!r}? (an id begins with its source)")


def test_wrong_method(web):
    one_line_error(web.post("/api/search"), 405, "POST is not allowed")


@pytest.mark.slow
def test_no_formal_bundle_says_how_to_build_one(tiny_bundle_dir, tmp_path):
    server = WebServer("--bundle", str(tiny_bundle_dir), "--formal-bundle", str(tmp_path / "no-formal-bundle"))
    try:
        for path in ("/api/lean/search?q=prime", "/api/lean/deps/lean:Nat.Prime.two_le"):
            msg = one_line_error(server.get(path), 404, "no bundle directory")
            assert "build-lean" in msg
    finally:
        server.stop()
    assert_clean(server)


# ------------------------------------------------------------------------------ OpenAPI

def test_openapi_describes_every_endpoint(web):
    doc = web.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    paths = set(doc["paths"])
    for path in ("/search", "/api/search", "/api/doc/{id}", "/api/lean/search", "/api/lean/deps/{id}", "/api/bundles",
                 "/health", "/mcp", "/", "/doc/{id}", "/openapi.json"):
        assert path in paths, path
    from mathlas.web.app import ServeConfig, create_app

    routes = {getattr(r, "path", "") for r in create_app(ServeConfig()).routes} - {"/static"}
    assert {r.replace("{id:path}", "{id}") for r in routes} <= paths
    schemas = doc["components"]["schemas"]
    from dataclasses import fields

    from mathlas.service import SearchResult

    # the schema is the library's result, field for field (match, confidence and note included)
    assert set(schemas["SearchResult"]["properties"]) == {f.name for f in fields(SearchResult)}
    assert {"query", "bundle", "mode", "hits", "next", "match", "confidence", "note"} <= set(schemas["SearchResult"]["properties"])
    hit = schemas["SearchResult"]["properties"]["hits"]["items"]["$ref"].rsplit("/", 1)[1]
    assert set(schemas[hit]["properties"]) >= {"id", "source", "kind", "score", "ranks"}
    assert {"theorem_id", "paper", "similarity", "score", "has_metadata"} <= set(schemas["TheoremSearchTheorem"]["properties"])
    for path, item in doc["paths"].items():
        for op in item.values():
            assert op.get("summary") and op.get("responses"), path


def test_result_to_json_equals_dataclasses_asdict(tiny):
    # the API's faster asdict gives exactly what dataclasses.asdict gives (the CLI's --json)
    import dataclasses

    from mathlas.hit import Document
    from mathlas.tools.informal import SearchResult
    from mathlas.web.api import _asdict

    hits = tiny.search("finitely generated module over a local ring", 10)
    result = SearchResult(query="q", bundle=tiny.label, mode="hybrid", hits=hits, next=[])
    assert hits and _asdict(result) == dataclasses.asdict(result)
    doc = tiny.get(hits[0].id)
    assert isinstance(doc, Document) and _asdict(doc) == dataclasses.asdict(doc)
    nested = Document(**{**dataclasses.asdict(doc), "fields": {"deps": ["a", "b"], "pair": (1, 2), "n": {"x": None}}})
    assert _asdict(nested) == dataclasses.asdict(nested)
