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


def as_cli_json(answer: dict) -> dict:
    """A REST search answer as ``--json`` gives it: without the ``href`` each ``next`` step that this API
    can make carries (docs/http.md, "mathlas's own API"), which ``test_next_steps_carry_their_request`` checks."""
    return {**answer, "next": [{k: v for k, v in step.items() if k != "href"} for step in answer["next"]]}


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
    assert as_cli_json(r.json()) == want


@pytest.mark.slow
def test_paper_filters_and_priors_are_the_cli_json(web, papers_bundle_dir):
    params = {"q": "finitely generated module local ring", "bundle": "papers", "author": "Terence Tao",
              "year_min": 2000, "k": 5, "prior": "recency=0.001"}
    r = web.get("/api/search", params=params)
    assert r.status_code == 200, r.text
    want = cli_json("search", params["q"], "--json", "--bundle", str(papers_bundle_dir), "--author", "Terence Tao",
                    "--year-min", "2000", "-k", "5", "--prior", "recency=0.001")
    assert as_cli_json(r.json()) == want and want["hits"]


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
    assert as_cli_json(r.json()) == cli_json("lean", "search", "prime two le", "-k", "3", "--json", env=env)
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
    # -1 is an integer: the message says the range (offset + k is at most 1000)
    ("/api/search", {"q": "ring", "offset": -1}, 422, "offset must be an integer from 0 to 990, got '-1'"),
    ("/api/search", {"q": "ring", "k": 5, "offset": 999}, 422, "offset must be an integer from 0 to 995, got '999'"),
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
    """A 405 says what to do instead, not only what was refused."""
    one_line_error(web.post("/api/search"), 405,
                   'POST is not allowed on /api/search; use GET /api/search?q=..., or POST a JSON body {"query": "..."} to /search')
    one_line_error(web.get("/search", params={"q": "x"}), 405,
                   'GET is not allowed on /search; POST a JSON body {"query": "..."} here, or GET /api/search?q=...')
    one_line_error(web.client.delete("/health"), 405, "DELETE is not allowed on /health; use GET")
    one_line_error(web.client.put("/openapi.json"), 405, "PUT is not allowed on /openapi.json; use GET")


# What a CLI user is told of a missing formal bundle, which an HTTP client cannot act on (issue: the walk-through's #5)
LOCAL_ADVICE = ("bundle=PATH", "--bundle PATH", "MATHLAS_FORMAL_BUNDLE", "mathlas-build", "shared/corpora")


@pytest.mark.slow
def test_no_formal_bundle_says_how_to_build_one(tiny_bundle_dir, tmp_path):
    """A ``--formal-bundle`` that is not there: the Lean endpoints, a ``lean:`` document and
    ``/api/bundles`` say why and what whoever runs the server can do, never the CLI's local advice."""
    server = WebServer("--bundle", str(tiny_bundle_dir), "--formal-bundle", str(tmp_path / "no-formal-bundle"))
    try:
        messages = {one_line_error(server.get(path), 404, "no bundle in the directory it was given")
                    for path in ("/api/lean/search?q=prime", "/api/lean/deps/lean:Nat.Prime.two_le",
                                 "/api/doc/lean:Nat.Prime.two_le", "/api/lean/search?q=prime&bundle=mathlib")}
        assert len(messages) == 1, messages
        msg = messages.pop()
        assert msg.startswith("this server's formal (Lean) bundle cannot be opened (no bundle in the directory it "
                              "was given); ") and str(tmp_path) not in msg  # the server's directory is its own
        assert "restart it with `mathlas serve --formal-bundle NAME_OR_DIR`" in msg and "build-lean" in msg
        assert not [a for a in LOCAL_ADVICE if a in msg], msg
        formal = server.get("/api/bundles").json()["formal"]
        assert not formal["available"] and formal["error"] == msg and msg.endswith(formal["how_to_build"])
    finally:
        server.stop()
    assert_clean(server)


def test_next_steps_carry_their_request(web, tiny):
    """Each ``next`` step of a REST search that this API can make carries ``href``: requested as it
    is, it answers 200 with what the step's tool gives (the document, the dependencies, a search)."""
    r = web.get("/api/search", params={"q": "a finitely generated module over a ring", "k": 5}).json()
    steps = [s for s in r["next"] if s["tool"] == "get_by_id"]
    assert steps and all(s["href"] == "/api/doc/" + s["arguments"]["id"] for s in steps)
    for s in steps:
        assert web.get(s["href"]).json()["id"] == s["arguments"]["id"]
    # a search of another served bundle: its documents are read from it
    papers = web.get("/api/search", params={"q": "primes", "bundle": "papers", "k": 2}).json()
    step = papers["next"][0]  # an arXiv theorem's id, arxiv:1801.00042#Theorem 1.2: its # and space encoded
    assert step["href"].startswith("/api/doc/arxiv:") and step["href"].endswith("?bundle=papers")
    assert "#" in step["arguments"]["id"] and not {"#", " "} & set(step["href"])
    doc = web.get(step["href"]).json()
    assert (doc["id"], doc["bundle"]) == (step["arguments"]["id"], "papers-0.1.0")
    # Lean: the declaration and its dependencies
    lean = web.get("/api/lean/search", params={"q": "prime two le", "k": 3}).json()
    by_tool = {s["tool"]: s for s in lean["next"]}
    deps = by_tool["get_dependencies"]
    assert deps["href"] == f"/api/lean/deps/{deps['arguments']['id']}?direction={deps['arguments']['direction']}"
    assert web.get(deps["href"]).json()["id"] == deps["arguments"]["id"]
    assert web.get(by_tool["get_by_id"]["href"]).json()["source"] == "lean"
    assert "href" not in by_tool.get("verify_formal", {})  # no GET checks a proof
    # an id with characters a URL gives another meaning (#, a space, ?) is percent-encoded
    hashed = next((i for i in tiny.table.column("id").to_pylist() if "#" in i), None)
    if hashed is not None:
        from mathlas.web.api import with_hrefs

        href = with_hrefs({"next": [{"tool": "get_by_id", "arguments": {"id": hashed}, "why": ""}]})["next"][0]["href"]
        assert "#" not in href and web.get(href).json()["id"] == hashed


def test_with_hrefs_on_hand_written_steps():
    from mathlas.web.api import with_hrefs

    steps = [{"tool": "identify_constant", "arguments": {"value": "3.14159"}, "why": "a number"},
             {"tool": "get_by_id", "arguments": {"id": "openlogic:a/b#2 x?"}, "why": "the document"},
             {"tool": "search_existing_math", "arguments": {"query": "ring & field"}, "why": "no filters"},
             {"tool": "search_formal_math", "arguments": {"query": "Nat.Prime"}, "why": "everything"},
             {"tool": "get_dependencies", "arguments": {"id": "lean:Nat.Prime.two_le", "direction": "used_by",
                                                        "bundle": "/srv/formal"}, "why": "uses"},
             {"tool": "verify_formal", "arguments": {"statement": "s", "proof": "p"}, "why": "check"}]
    out = with_hrefs({"next": [dict(s) for s in steps]}, "papers")["next"]
    assert [s.get("href") for s in out] == [
        None, "/api/doc/openlogic:a/b%232%20x%3F?bundle=papers", "/api/search?q=ring+%26+field&bundle=papers",
        "/api/lean/search?q=Nat.Prime", "/api/lean/deps/lean:Nat.Prime.two_le?direction=used_by", None]
    assert [{k: v for k, v in s.items() if k != "href"} for s in out] == steps  # the steps themselves unchanged


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
    # /mcp refuses with JSON-RPC errors (an MCP client passes on no other shape), the REST routes with Error
    refs = {path: doc["paths"][path]["post"]["responses"]["401"]["content"]["application/json"]["schema"]["$ref"]
            for path in ("/mcp", "/search")}
    assert refs == {"/mcp": "#/components/schemas/JsonRpcError", "/search": "#/components/schemas/Error"}
    assert schemas["JsonRpcError"]["required"] == ["jsonrpc", "id", "error"]


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
