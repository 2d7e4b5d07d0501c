"""Search collapses the copies of one theorem (mathlas.ranking.collapse) and every hit says where else
its fact is stated (``also_in``): the library, the CLI, the MCP tool and its text, /api/search, and
the links across bundles."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from mathlas import groups as G
from mathlas.errors import UsageError
from mathlas.hit import summarize
from mathlas.render import line, listing
from mathlas.request import SearchRequest

FTA = "fundamental theorem of algebra"


@pytest.fixture(scope="module")
def default(default_bundle_dir):
    import mathlas

    b = mathlas.open_bundle(default_bundle_dir)
    return b, G.groups_of(b)


def _groups_shown(b, g, hits) -> list[int]:
    return [int(g.of[b.key_of(h.id)]) for h in hits if int(g.of[b.key_of(h.id)]) >= 0]


@pytest.mark.slow
def test_one_theorem_takes_one_rank_and_the_freed_ranks_are_filled(default):
    b, g = default
    hits = b.search(FTA, k=10)
    every = b.search(FTA, k=10, collapse=False)
    assert len(hits) == len(every) == 10
    shown = _groups_shown(b, g, hits)
    assert len(shown) == len(set(shown))                      # no group twice
    all_shown = _groups_shown(b, g, every)
    assert len(all_shown) > len(set(all_shown))               # today's ranking shows copies
    assert hits[0].id == every[0].id                          # the best-ranked copy stays where it was
    folded = {h.id for h in every} - {h.id for h in hits}
    assert folded and all(int(g.of[b.key_of(x)]) >= 0 for x in folded)
    # where the copies went: the shown member's also_in
    top = hits[0]
    assert {c["id"] for c in top.also_in} >= folded & {m for m in (g.ids[k] for k in g.group(b.key_of(top.id)))}
    assert all(set(c) == {"source", "label", "id"} for c in top.also_in)
    # the second page continues the first without showing a copy of it
    page2 = b.search(FTA, k=10, offset=10)
    both = _groups_shown(b, g, hits + page2)
    assert len(both) == len(set(both))


def test_also_in_is_the_same_with_or_without_collapsing(default):
    b, _ = default
    every = {h.id: h.also_in for h in b.search(FTA, k=20, collapse=False)}
    for h in b.search(FTA, k=20):
        if h.id in every:
            assert h.also_in == every[h.id]
    # the theorem takes one rank, whichever copy the ranking puts first; it names the other
    pair = {"metamath:fta": ("PlanetMath", "FundamentalTheoremOfAlgebra", "planetmath:FundamentalTheoremOfAlgebra"),
            "planetmath:FundamentalTheoremOfAlgebra": ("Metamath", "fta", "metamath:fta")}
    shown = [h for h in b.search(FTA, k=10) if h.id in pair]
    assert len(shown) == 1, [h.id for h in shown]
    fta = shown[0]
    source, label, other = pair[fta.id]
    assert {"source": source, "label": label, "id": other} in fta.also_in
    text = listing([dataclasses.asdict(fta)])
    assert f"{source} `{label}`" in text and "    also in " in text
    # a summary carries the ids; the MCP line names the sources
    s = summarize(fta)
    assert other in s.also_in
    assert "[also in " in line(1, dataclasses.asdict(s)) and f"{source} `{label}`" in line(1, dataclasses.asdict(s))


def test_collapse_and_all_copies_must_be_booleans():
    assert SearchRequest.make("ring").collapse is True
    assert SearchRequest.make("ring", collapse=False).collapse is False
    with pytest.raises(UsageError, match="collapse must be true or false"):
        SearchRequest.make("ring", collapse="no")
    from mathlas.tools.informal import search_existing_math

    with pytest.raises(UsageError, match="all_copies must be true or false"):
        search_existing_math("ring", all_copies="yes")


def _cli(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MATHLAS_BUNDLE"}
    return subprocess.run([sys.executable, "-m", "mathlas", *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow
def test_cli_all_copies_and_the_also_in_line(default_bundle_dir):
    one = _cli("search", FTA, "-k", "10", "--json")
    every = _cli("search", FTA, "-k", "10", "--json", "--all-copies")
    assert one.returncode == every.returncode == 0, one.stderr + every.stderr
    ids = [h["id"] for h in json.loads(one.stdout)["hits"]]
    all_ids = [h["id"] for h in json.loads(every.stdout)["hits"]]
    assert ids != all_ids and len(ids) == len(all_ids) == 10
    assert all("also_in" in h for h in json.loads(one.stdout)["hits"])
    text = _cli("search", FTA, "-k", "3")
    assert text.returncode == 0 and ("also in PlanetMath `FundamentalTheoremOfAlgebra`" in text.stdout
                                     or "also in Metamath `fta`" in text.stdout), text.stdout


@pytest.mark.slow
def test_links_across_bundles_are_the_explicit_ones(default, formal_bundle_dir, monkeypatch):
    """The test formal bundle has Mathlib's FieldTheory/Tower.lean, which tags a declaration
    ``@[stacks 09G5]``: each side names the other, and nothing else crosses."""
    import mathlas

    b, _ = default
    monkeypatch.setenv("MATHLAS_FORMAL_BUNDLE", str(formal_bundle_dir))
    G._CACHE.pop(b, None)
    informal = G.groups_of(b, cache=False)
    lean_copies = informal.also_in(b.key_of("stacks:09G5"))
    assert lean_copies and all(c.id.startswith("lean:") and c.source == "Lean" for c in lean_copies)
    assert all(b.column("id")[k].as_py().startswith(("stacks:", "metamath:")) for k in informal.external)
    f = mathlas.open_bundle(formal_bundle_dir)
    formal = G.groups_of(f, cache=False)
    decl = f.key_of(lean_copies[0].id)
    assert G.Copy("Stacks", "09G5", "stacks:09G5") in formal.also_in(decl)
    G._CACHE.pop(b, None)                   # the other tests' groups: without the test formal bundle




@pytest.mark.slow
def test_api_all_copies_is_the_cli_flag(web, tiny_bundle_dir):
    r = web.get("/api/search", params={"q": "a finitely generated module over a ring", "k": 5, "all_copies": "true"})
    assert r.status_code == 200, r.text
    cli = _cli("search", "a finitely generated module over a ring", "-k", "5", "--all-copies", "--json",
               "--bundle", str(tiny_bundle_dir))
    assert cli.returncode == 0, cli.stderr
    from test_web_api import as_cli_json  # less the href REST adds to each next step (docs/http.md)

    assert as_cli_json(r.json()) == json.loads(cli.stdout)
    bad = web.get("/api/search", params={"q": "ring", "all_copies": "maybe"})
    assert bad.status_code == 422 and "all_copies must be true or false" in bad.json()["error"]
    params = {p["name"] for p in web.get("/openapi.json").json()["paths"]["/api/search"]["get"]["parameters"]}
    assert "all_copies" in params


@pytest.mark.slow  # seconds on its own (conftest: the fast lane leaves it out)
def test_a_lean_alias_and_its_target_take_one_rank(formal_bundle_dir):
    """Mathlib's ``alias division_def := div_eq_mul_inv`` (Algebra/Group/Defs.lean, in the test formal
    bundle) states the same: one rank by default, the other in ``also_in``; both with all copies."""
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search
    from mathlas.tools.lean_search import search_formal_math

    q = "division equals multiplication by the inverse"
    one = lean_search(LeanSearchRequest.make(q, 10), str(formal_bundle_dir))
    every = lean_search(LeanSearchRequest.make(q, 10, collapse=False), str(formal_bundle_dir))
    ids, all_ids = [h.id for h in one.hits], [h.id for h in every.hits]
    assert "lean:div_eq_mul_inv" in ids and "lean:division_def" not in ids, ids
    assert {"lean:div_eq_mul_inv", "lean:division_def"} <= set(all_ids), all_ids
    shown = one.hits[ids.index("lean:div_eq_mul_inv")]
    assert {"source": "Lean", "label": "division_def", "id": "lean:division_def"} in shown.also_in
    # the alias asked for by name is first all the same
    assert lean_search(LeanSearchRequest.make("division_def", 5), str(formal_bundle_dir)).hits[0].id == "lean:division_def"
    with pytest.raises(UsageError, match="all_copies must be true or false"):
        search_formal_math(q, all_copies="yes", bundle=str(formal_bundle_dir))
    tool = search_formal_math(q, k=10, all_copies=True, bundle=str(formal_bundle_dir))
    assert [h.id for h in tool.hits] == all_ids
    cli = _cli("lean", "search", q, "-k", "10", "--all-copies", "--json", "--bundle", str(formal_bundle_dir))
    assert cli.returncode == 0, cli.stderr
    assert [h["id"] for h in json.loads(cli.stdout)["hits"]] == all_ids
    text = _cli("lean", "search", q, "-k", "10", "--bundle", str(formal_bundle_dir))
    assert text.returncode == 0 and "lean:division_def" not in text.stdout.split("also in")[0], text.stdout
    assert "division_def" in text.stdout  # named on the also-in line of its target


def test_a_deprecated_alias_gives_its_place_to_what_it_stands_for():
    """``mellin_inversion`` (deprecated, an alias of ``mellinInv_mellin_eq``) ranked above its target:
    the target is shown in its place and the alias folded under it; a live alias (``Nat.bertrand``)
    keeps its place."""
    from mathlas.ranking.collapse import _targets_shown

    cols = {"id": ["lean:mellin_inversion", "lean:mellinInv_mellin_eq", "lean:Nat.bertrand", "lean:Nat.exists_prime"],
            "alias_of": ["lean:mellinInv_mellin_eq", None, "lean:Nat.exists_prime", None],
            "deprecated": ["since 2025-11-16", None, None, None], "replaced_by": [None, None, None, None]}

    class Columns:
        def has_column(self, name):
            return name in cols

        def strings(self, name):
            return lambda keys: [cols[name][k] for k in keys]

    kept = [(0, [1]), (2, [3])]
    assert _targets_shown(Columns(), kept) == [(1, [0]), (2, [3])]
    del cols["deprecated"], cols["replaced_by"]
    assert _targets_shown(Columns(), kept) == kept  # a bundle that records no deprecation: as ranked


@pytest.mark.slow
def test_http_lean_search_all_copies(formal_bundle_dir, tiny_bundle_dir):
    from test_web_serve import WebServer, assert_clean

    q = "division equals multiplication by the inverse"
    server = WebServer("--bundle", str(tiny_bundle_dir), "--formal-bundle", str(formal_bundle_dir))
    try:
        one = [h["id"] for h in server.get("/api/lean/search", params={"q": q, "k": 10}).json()["hits"]]
        every = [h["id"] for h in server.get("/api/lean/search", params={"q": q, "k": 10, "all_copies": "true"}).json()["hits"]]
        assert "lean:division_def" not in one and "lean:division_def" in every, (one, every)
        bad = server.get("/api/lean/search", params={"q": q, "all_copies": "maybe"})
        assert bad.status_code == 422 and "all_copies must be true or false" in bad.json()["error"]
        spec = server.get("/openapi.json").json()["paths"]["/api/lean/search"]["get"]["parameters"]
        assert {"all_copies", "deprecated"} <= {p["name"] for p in spec}
    finally:
        server.stop()
    assert_clean(server)
