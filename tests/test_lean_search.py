"""The formal bundle: a Lean project (real Mathlib files) -> bundle -> search_formal_math,
get_dependencies, get_by_id, the Stacks bridge, the PageRank prior, ``mathlas lean`` on the CLI.

The project is a handful of real Mathlib files copied with their paths, built by the same recipe as
``mathlas index build-lean`` with the real int8 MiniLM encoder."""
from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO

@pytest.fixture(scope="module")
def formal_dir(formal_bundle_dir) -> Path:
    return formal_bundle_dir


@pytest.fixture(scope="module")
def formal(formal_dir, monkeypatch_module):
    monkeypatch_module.setenv("MATHLAS_FORMAL_BUNDLE", str(formal_dir))
    return str(formal_dir)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_manifest_declares_formal_settings_and_graph(formal_dir):
    from mathlas.bundle import GRAPH, read_manifest
    from mathlas_build.lean_build import FORMAL_FUSION, FORMAL_OPTIONS

    m = read_manifest(formal_dir)
    assert m.sources["lean"]["count"] == m.count > 500
    assert m.lexical["symbols"] == "lean" and m.lexical["boosts"] == FORMAL_OPTIONS["lexical_boosts"]
    assert m.lexical["identifiers"] == "tokenizer" == FORMAL_OPTIONS["lexical_identifiers"]
    assert m.vectors["binary_codes"] == "thermometer3" == FORMAL_OPTIONS["binary_codes"] and m.format_version == 2
    assert m.fusion["priors"]["pagerank"] == FORMAL_FUSION["priors"]["pagerank"]
    assert m.fusion["k_rrf"] == FORMAL_FUSION["k_rrf"]
    assert m.graph["edges"] > 1000
    assert GRAPH in m.files
    # the learned ranking stage every formal bundle carries, with its own match model
    assert m.ranker["features"] and m.ranker["trees"] == 50 and m.ranker["match"]["strong_at"] > 0
    assert m.recipe["ranker"]["sha256"] == m.files["ranker/model.json"].sha256


def test_mathlib_recipe_uses_the_formal_settings():
    from mathlas_build.lean_build import FORMAL_FUSION, FORMAL_OPTIONS, FORMAL_RANKER, FORMAL_RANKER_SHA256

    raw = tomllib.loads((REPO / "build" / "recipes" / "mathlib.toml").read_text(encoding="utf-8"))
    assert raw["options"] == FORMAL_OPTIONS
    assert raw["fusion"] == FORMAL_FUSION
    assert raw["ranker"]["model"] == f"artifacts/rankers/{FORMAL_RANKER}"
    assert raw["ranker"]["sha256"] == FORMAL_RANKER_SHA256


def test_build_lean_refuses_a_changed_ranking_model(tmp_path, monkeypatch):
    """A formal model whose checksum is not the one mathlas ships is refused in one line naming the way out."""
    import mathlas_build.lean_build as lb

    monkeypatch.setattr(lb, "FORMAL_RANKER_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="--no-ranker"):
        lb.formal_ranker()
    (tmp_path / "proj").mkdir()
    recipe = lb.lean_recipe(tmp_path / "proj", tmp_path, name="t", version="0.1.0", ranker=False)
    assert recipe.ranker == {} and "ranker" not in recipe.raw


@pytest.mark.parametrize("query", ["prime two le", "two_le", "Nat.Prime.two_le"])
def test_lexical_finds_a_declaration_by_name_words_or_fragment(formal, query):
    from mathlas.tools.lean_search import search_formal_math

    r = search_formal_math(query, k=5, mode="lexical")
    assert "lean:Nat.Prime.two_le" in [h.id for h in r.hits], [h.id for h in r.hits]


def test_lexical_channel_refuses_an_unknown_identifier_mode(formal_dir):
    from mathlas.errors import BundleCorruptError
    from mathlas.ranking.lexical import LexicalChannel

    with pytest.raises(BundleCorruptError, match="lexical.identifiers"):
        LexicalChannel(formal_dir, 1, symbols="lean", identifiers="camel")


def test_notation_query_meets_naming_words(formal):
    # "a * b ∈ I" -> "mul mem": Ideal.mul_mem_left / mul_mem_right are named after that notation
    from mathlas.tools.lean_search import search_formal_math

    r = search_formal_math("a * b ∈ I", k=10, mode="lexical")
    ids = [h.id for h in r.hits]
    assert any(i.startswith("lean:Ideal.mul_mem") for i in ids), ids
    # without the symbol words the query has only one-letter names: nothing to match
    from mathlas.bundle import symbol_words

    assert symbol_words("a * b ∈ I") == "mul mem"


def test_hybrid_hit_fields_and_next_steps(formal):
    from mathlas.tools.lean_search import search_formal_math

    r = search_formal_math("every prime number is at least two", k=10)
    assert r.mode == "hybrid" and r.hits
    h = next(h for h in r.hits if h.id == "lean:Nat.Prime.two_le")
    assert h.name == "Nat.Prime.two_le" and h.kind == "theorem"
    assert h.source == "lean" and h.fields["module"] == "Mathlib.Data.Nat.Prime.Defs"  # formal fields ride in fields
    assert "2 ≤ p" in h.fields["signature"]
    assert "Mathlib/Data/Nat/Prime/Defs.lean#L" in h.link
    assert set(h.ranks) == {"lexical", "dense"}
    assert r.next[0].tool == "get_by_id"


def test_module_and_kind_filters_apply_before_the_cut(formal):
    from mathlas.errors import UsageError
    from mathlas.tools.lean_search import search_formal_math

    r = search_formal_math("mul", k=20, modules=["Mathlib.RingTheory"])
    assert len(r.hits) == 20 and all(h.fields["module"].startswith("Mathlib.RingTheory.") for h in r.hits)
    r = search_formal_math("prime", k=15, kinds=["def"], mode="lexical")
    assert r.hits and all(h.kind == "def" for h in r.hits)
    with pytest.raises(UsageError, match="module"):
        search_formal_math("prime", modules=["Mathlib.NoSuchArea"])
    with pytest.raises(UsageError):
        search_formal_math("prime", modules="")


def test_stacks_bridge_both_ways(formal):
    from mathlas.formal import stacks_to_lean
    from mathlas.tools.lean_search import search_formal_math
    from mathlas.tools.informal import get_by_id

    # Module.Finite.right carries @[stacks 09G5]; its alias FiniteDimensional.right (same statement)
    # ranks above it, so by default the alias takes their rank and names both on its also-in line
    shown = search_formal_math("tower law finite dimensional", k=20)
    assert any({"lean:Module.Finite.right", "stacks:09G5"} <= {c["id"] for c in h.also_in} for h in shown.hits), \
        [(h.id, h.also_in) for h in shown.hits if h.also_in]
    r = search_formal_math("tower law finite dimensional", k=20, all_copies=True)
    tagged = [h for h in r.hits if h.fields["stacks"]]
    assert tagged and "stacks:09G5" in tagged[0].fields["stacks"]
    lean_ids = stacks_to_lean("09G5")
    assert tagged[0].id in lean_ids
    doc = get_by_id("stacks:09G5")  # the informal default bundle's Stacks statement links back
    assert tagged[0].id in doc.fields.get("formal", [])


def test_get_by_id_routes_lean_ids_to_the_formal_bundle(formal):
    from mathlas.tools.informal import get_by_id

    doc = get_by_id("lean:Nat.Prime.two_le")
    assert doc.source == "lean" and doc.fields["module"] == "Mathlib.Data.Nat.Prime.Defs"
    assert "2 ≤ p" in doc.fields["signature"]
    assert isinstance(doc.fields["dependencies"], list)


def test_dependencies_both_directions(formal):
    from mathlas.errors import UsageError
    from mathlas.tools.lean_search import get_dependencies

    uses = get_dependencies("lean:Nat.Prime.two_le")
    assert uses.total == len(uses.declarations) > 0
    assert "lean:Nat.Prime" in [d.id for d in uses.declarations]
    assert "dot notation" in uses.note  # the walk under-reports, and says so in every answer (JSON, HTTP, MCP)
    back = get_dependencies("lean:Nat.Prime", direction="used_by")
    assert "lean:Nat.Prime.two_le" in [d.id for d in back.declarations]
    deep = get_dependencies("lean:Nat.Prime", direction="used_by", depth=2)
    assert deep.total >= back.total
    assert {d.distance for d in deep.declarations} <= {1, 2}
    assert len({d.id for d in deep.declarations}) == len(deep.declarations)
    small = get_dependencies("lean:Nat.Prime", direction="used_by", limit=1)
    assert len(small.declarations) == 1 and small.truncated == (small.total > 1)
    with pytest.raises(UsageError):
        get_dependencies("lean:Nat.Prime", direction="sideways")
    with pytest.raises(UsageError):
        get_dependencies("lean:Nat.Prime", depth=0)
    with pytest.raises(UsageError, match="no document"):
        get_dependencies("lean:No.Such.Decl")


def test_pagerank_prior_changes_scores_only_when_on(formal):
    import mathlas
    from mathlas.tools.lean_search import search_formal_math

    b = mathlas.open_bundle(formal)
    pr = np.asarray(b.table.column("pagerank").to_pylist(), dtype=float)
    assert pr.min() > 0 and pr.max() > 5  # some declarations are used far more than the average
    off = search_formal_math("prime", k=10, prior_weight=0.0)
    on = search_formal_math("prime", k=10, prior_weight=0.05)
    assert off.prior_weight == 0.0 and on.prior_weight == 0.05
    assert [h.score for h in on.hits] != [h.score for h in off.hits]


def test_graph_matches_the_dependencies_column(formal):
    import mathlas
    from mathlas.graph import graph_of

    b = mathlas.open_bundle(formal)
    g = graph_of(b)
    ids = b.table.column("id").to_pylist()
    deps = b.table.column("dependencies").to_pylist()
    for key in range(0, len(ids), 97):
        assert [ids[j] for j in g.neighbours(key, "uses")] == (deps[key] or [])
    assert g.edges == sum(len(d or []) for d in deps)


def test_a_non_formal_bundle_is_refused(formal, default_bundle_dir):
    from mathlas.errors import UsageError
    from mathlas.tools.lean_search import get_dependencies, search_formal_math

    with pytest.raises(UsageError, match="not a formal"):
        search_formal_math("prime", bundle=str(default_bundle_dir))
    with pytest.raises(UsageError):
        get_dependencies("stacks:00DV", bundle=str(default_bundle_dir))


def test_missing_formal_bundle_says_how_to_build_it(monkeypatch):
    from mathlas.errors import BundleNotFoundError
    from mathlas.tools.lean_search import search_formal_math

    monkeypatch.delenv("MATHLAS_FORMAL_BUNDLE", raising=False)
    with pytest.raises(BundleNotFoundError, match="build-lean"):
        search_formal_math("prime", bundle="mathlib-9.9.9")


@pytest.mark.slow
def test_cli_lean_search_and_deps(formal):
    env_cmd = [sys.executable, "-m", "mathlas"]
    out = subprocess.run(env_cmd + ["lean", "search", "prime two le", "-k", "3", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["hits"][0]["id"] == "lean:Nat.Prime.two_le"
    out = subprocess.run(env_cmd + ["lean", "deps", "Nat.Prime.two_le", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["total"] > 0
    out = subprocess.run(env_cmd + ["lean", "deps", "Nat.Prime.two_le", "--depth", "9"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "depth" in out.stderr


def test_build_lean_of_a_missing_project_is_one_line(tmp_path):
    """A path that is no Lean project: one line naming it and exit 2, no traceback."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "mathlas", "index", "build-lean", str(tmp_path / "nowhere"), "--no-install",
                          "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "MATHLAS_DATA_DIR": str(tmp_path / "data")})
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines() == [f"mathlas-build lean: Lean project not found at {tmp_path / 'nowhere'}; pass the project folder"]
