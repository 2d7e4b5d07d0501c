"""Issue 22 part 3: an abbreviation in a query (CRT, FTA, ...) is searched with its expansions
(mathlas.ranking.abbreviations), and every surface says so: the library's answer, the CLI in its human form
and --json, the MCP listing, /api/search."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from mathlas.request import SearchRequest
from mathlas.service import search

CRT = "expanded CRT: Chinese remainder theorem"


def run(*args):
    return subprocess.run([sys.executable, "-m", "mathlas", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=300)


@pytest.mark.slow
def test_the_abbreviation_finds_what_its_expansion_names(default_bundle_dir):
    from mathlas.engine import open_bundle

    r = search(SearchRequest.make("CRT", 5), findings=False)
    assert r.expanded == CRT
    assert any("chinese" in (h.name + " " + h.title).lower() for h in r.hits[:5]), [h.id for h in r.hits]
    # BM25 on the bare token finds no Chinese remainder theorem: the expansion is what finds it
    b = open_bundle()
    bare = b.lexical.search("CRT", 5)
    names = [str(b.column("name")[int(k)]).lower() for k in bare.keys]
    assert not any("chinese" in n for n in names)
    plain = search(SearchRequest.make("Chinese remainder theorem", 5), findings=False)
    assert plain.expanded == ""


def test_lowercase_and_code_are_left_alone(default_bundle_dir):
    assert search(SearchRequest.make("crt", 3), findings=False).expanded == ""
    assert search(SearchRequest.make("`CRT.lemma`", 3), findings=False).expanded == ""


@pytest.mark.slow
def test_cli_says_it_in_both_forms(default_bundle_dir):
    p = run("search", "CRT", "-k", "3")
    assert p.returncode == 0, p.stderr
    assert f"mathlas: {CRT}" in p.stderr.splitlines()
    assert p.stdout.lstrip().startswith("1. ")
    data = json.loads(run("search", "CRT", "-k", "3", "--json").stdout)
    assert data["expanded"] == CRT
    assert "expanded" not in run("search", "Nakayama lemma", "-k", "3").stderr


def test_mcp_listing_and_http_json_say_it(default_bundle_dir):
    from mathlas.mcp.registry import search_answer
    from mathlas.mcp.text import render
    from mathlas.web.api import search as api_search

    answer = dataclasses.asdict(search_answer("search_existing_math",
                                              search(SearchRequest.make("CRT", 10), findings=False), "summary"))
    assert answer["expanded"] == CRT
    assert f" {CRT};" in render("search_existing_math", answer, {}).splitlines()[0]
    assert api_search("CRT", k=3)["expanded"] == CRT
