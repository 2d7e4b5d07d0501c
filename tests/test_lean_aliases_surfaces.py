"""A Lean hit says why it matched: the declaration's aliases (the names people use that its own name
lacks, from the project's docs/*.yaml lists and Stacks tags; the bundle's ``aliases`` column) on
every surface: the library's hits and ``--json`` (``fields.aliases``, a list), the CLI's listing and
``mathlas show`` ("also known as: ..."), the MCP answer (summaries' ``aliases`` and the text line)
and ``/api/lean/search``. The bundle is the toy project's (tests/data/lean-project), whose
docs/100.yaml names ``Toy.gauss_sum`` "Gauss's Summation Formula" and docs/overview.yaml
``Toy.sumTo`` "triangular number". The page's Lean card: tests/test_web_browser_lean.py."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mathlas.hit import KNOWN_AS, KNOWN_AS_CHARS, Hit, LeanHitSummary, known_as, summarize

GAUSS = "Gauss's Summation Formula"
QUERY = "Gauss's Summation Formula"


def mathlas(*args: str) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "mathlas", *args], capture_output=True, text=True,
                       env=dict(os.environ), timeout=300)
    assert p.returncode == 0, p.stderr
    return p


def lean_hit(aliases: list[str] | None) -> Hit:
    fields = {"module": "Toy", "signature": "(n : ℕ) : 2 * sumTo n = n * (n + 1)", "docstring": "",
              "stacks": [], "generated": ""}
    if aliases is not None:
        fields["aliases"] = aliases
    return Hit(id="lean:Toy.gauss_sum", source="lean", kind="theorem", name="Toy.gauss_sum", title="Toy",
               text="", link="", license="MIT", score=0.5, fields=fields)


@pytest.mark.slow
def test_library_and_json_hits_carry_aliases(lean_project_bundle_dir):
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    r = lean_search(LeanSearchRequest.make(QUERY, 5), str(lean_project_bundle_dir))
    by_id = {h.id: h for h in r.hits}
    assert r.hits[0].id == "lean:Toy.gauss_sum" and r.hits[0].fields["aliases"] == [GAUSS]
    assert all(isinstance(h.fields["aliases"], list) for h in r.hits)
    assert any(h.fields["aliases"] == [] for h in r.hits)  # a declaration no list names: an empty list
    hits = json.loads(mathlas("lean", "search", QUERY, "-k", "5", "--bundle", str(lean_project_bundle_dir),
                              "--json").stdout)["hits"]
    assert [h["fields"]["aliases"] for h in hits] == [by_id[h["id"]].fields["aliases"] for h in hits]
    assert hits[0]["fields"]["aliases"] == [GAUSS]
    topic = lean_search(LeanSearchRequest.make("triangular number", 3, mode="lexical"), str(lean_project_bundle_dir))
    assert topic.hits[0].id == "lean:Toy.sumTo" and topic.hits[0].fields["aliases"] == ["triangular number"]


def test_a_bundle_without_the_aliases_column_gives_empty_lists(lean_project_bundle_dir):
    from mathlas.engine import Bundle
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    b = Bundle.open(lean_project_bundle_dir)
    b.table = b.table.drop_columns(["aliases"])  # as a bundle built before the column was
    r = lean_search(LeanSearchRequest.make(QUERY, 5), b)
    assert r.hits and all(h.fields["aliases"] == [] for h in r.hits)


@pytest.mark.slow
def test_cli_listing_and_show_say_also_known_as(lean_project_bundle_dir):
    out = mathlas("lean", "search", QUERY, "-k", "5", "--bundle", str(lean_project_bundle_dir)).stdout
    first, rest = out.split("\n\n", 1)
    assert first.startswith(" 1. lean:Toy.gauss_sum")
    assert f"    also known as: {GAUSS}" in first.splitlines()
    assert out.count("also known as:") == sum(1 for h in json.loads(mathlas(
        "lean", "search", QUERY, "-k", "5", "--bundle", str(lean_project_bundle_dir), "--json").stdout)["hits"]
        if h["fields"]["aliases"])
    shown = mathlas("show", "lean:Toy.gauss_sum", "--bundle", str(lean_project_bundle_dir)).stdout
    assert f"also known as: {GAUSS}" in shown.splitlines()


def test_listing_line_and_summary_are_bounded():
    from mathlas.render import line, listing

    many = [f"name {i} " + "word " * 30 for i in range(5)]
    shown = known_as(many)
    assert len(shown) == KNOWN_AS and all(len(a) <= KNOWN_AS_CHARS + 2 for a in shown)
    hit = lean_hit(many)
    aka = next(x for x in listing([vars(hit)]).splitlines() if "also known as:" in x)
    assert aka == "    also known as: " + "; ".join(shown) and "name 3" not in aka
    assert f"[also known as: {'; '.join(shown)}]" in line(1, vars(hit))
    s = summarize(hit)
    assert isinstance(s, LeanHitSummary) and s.aliases == shown
    none = summarize(lean_hit([]))
    assert none.aliases == [] and "also known as" not in line(1, vars(none)) and "also known as" not in listing([vars(lean_hit([]))])
    # a hit that is not a Lean hit's (no aliases field): the summary an informal answer has
    assert not isinstance(summarize(lean_hit(None)), LeanHitSummary)


@pytest.mark.slow
def test_mcp_answer_carries_aliases(lean_project_bundle_dir, tiny_bundle_dir):
    pytest.importorskip("mcp")
    from test_mcp import McpServer, ok, server_env

    server = McpServer(server_env(MATHLAS_BUNDLE=str(tiny_bundle_dir),
                                  MATHLAS_FORMAL_BUNDLE=str(lean_project_bundle_dir)))
    try:
        answer = server.call("search_formal_math", query=QUERY, k=3)
        top = ok(answer)["hits"][0]
        assert top["id"] == "lean:Toy.gauss_sum" and top["aliases"] == [GAUSS]
        text = answer.content[0].text.splitlines()
        assert text[1].startswith(f"1. lean:Toy.gauss_sum theorem [also known as: {GAUSS}]: ")
        full = ok(server.call("search_formal_math", query=QUERY, k=3, detail="full"))["hits"][0]
        assert full["fields"]["aliases"] == [GAUSS]
        informal = ok(server.call("search_existing_math", query="a local ring", k=3))["hits"]
        assert informal and all("aliases" not in h for h in informal)  # informal summaries keep their shape
    finally:
        server.close()


def test_http_lean_search_carries_aliases(lean_project_bundle_dir):
    from mathlas.web import api

    r = api.lean_search(QUERY, k=3, bundle=str(lean_project_bundle_dir))
    assert r["hits"][0]["id"] == "lean:Toy.gauss_sum" and r["hits"][0]["fields"]["aliases"] == [GAUSS]
