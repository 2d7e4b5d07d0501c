"""Formal bundles of one's own Lean projects (issue 31 item 15): ``build-lean`` names a bundle after
its project (only Mathlib is ``mathlib``), gives a project outside git no commit, installs nothing
but the bundle it built, and the formal tools search every installed formal bundle when none is
named. (The whole command path on tests/data/lean-project: tests/test_lean_journey.py.)"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import LEAN_PROJECT

OTHER = {"Other/Cubes.lean": '''/-- The sum of the first `n` cubes. -/
def sumCubes : Nat → Nat
  | 0 => 0
  | n + 1 => sumCubes n + (n + 1) ^ 3

/-- Nicomachus's theorem: the sum of the first `n` cubes is the square of the `n`-th triangular number. -/
theorem nicomachus (n : Nat) : 4 * sumCubes n = (n * (n + 1)) ^ 2 := by
  sorry
''', "Other.lean": "import Other.Cubes\n", "lakefile.toml": 'name = "other"\n'}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), "-c", "user.name=t", "-c", "user.email=t@example.org",
                           "-c", "commit.gpgsign=false", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


# ------------------------------------------------------------------------------ names and versions

def test_a_project_is_named_after_its_package_or_folder(tmp_path):
    from mathlas_build.lean_build import project_name

    assert project_name(LEAN_PROJECT) == "toy"  # lake-manifest.json / lakefile.toml name
    lean = tmp_path / "whatever"
    lean.mkdir()
    (lean / "lakefile.lean").write_text("import Lake\nopen Lake DSL\n\npackage «My_Proj» where\n")
    assert project_name(lean) == "my_proj"
    bare = tmp_path / "Number Theory!"
    bare.mkdir()
    assert project_name(bare) == "number-theory"
    mathlib = tmp_path / "mathlib4"
    mathlib.mkdir()
    (mathlib / "lakefile.lean").write_text("package mathlib where\n")
    assert project_name(mathlib) == "mathlib"  # Mathlib itself, and only it


def test_a_project_outside_git_gets_no_commit(tmp_path):
    from mathlas_build.lean_build import project_version
    from mathlas_build.sources.lean import tree_origin

    copy = tmp_path / "toy"
    shutil.copytree(LEAN_PROJECT, copy)
    assert "+" not in project_version(copy)
    # in place, inside this checkout: a commit only if `index info` names a repository for it
    # (the checkout's origin remote); it was the enclosing checkout's commit either way
    in_place = project_version(LEAN_PROJECT)
    assert ("+" in in_place) == bool(tree_origin(LEAN_PROJECT).url), in_place
    # a repository of its own: its commit
    git(copy, "init", "-q")
    git(copy, "add", ".")
    git(copy, "commit", "-q", "-m", "toy")
    assert project_version(copy).endswith("+" + git(copy, "rev-parse", "HEAD")[:8])


@pytest.mark.slow
def test_the_build_finds_an_encoder_without_installing_the_default_bundle(tmp_path, monkeypatch):
    from mathlas.releases.catalog import shipped
    from mathlas.releases.install import DEFAULT_BUNDLE

    if not any(r.name == DEFAULT_BUNDLE for r in shipped()):
        pytest.skip("no default release shipped in artifacts/")
    from mathlas_build.lean_build import default_encoder

    data = tmp_path / "data"
    monkeypatch.setenv("MATHLAS_DATA_DIR", str(data))
    monkeypatch.delenv("MATHLAS_BUNDLE", raising=False)
    encoder = default_encoder(data / "build", quiet=True)
    assert (encoder / "encoder.json").is_file() and encoder.is_relative_to(data / "build" / "default-bundle")
    assert not (data / "bundles").exists()  # the user's data directory gained no bundle
    assert default_encoder(data / "build", quiet=True) == encoder  # unpacked once


# ------------------------------------------------------------------------------ every installed formal bundle

@pytest.fixture(scope="module")
def two_formal(tmp_path_factory, lean_project_bundle_dir, encoder_dir):
    """A data directory with two formal bundles installed, ``toy`` and ``other``, and no mathlib."""
    from mathlas_build.lean_build import lean_recipe
    from mathlas_build.pipeline import build

    project = tmp_path_factory.mktemp("leanother") / "other"
    for rel, text in OTHER.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text, encoding="utf-8")
    recipe = lean_recipe(project, encoder_dir, version="0.1.0")
    assert recipe.name == "other"
    data = tmp_path_factory.mktemp("formal-data")
    build(recipe, data / "bundles" / "other-0.1.0", cache_dir=None, quiet=True)
    shutil.copytree(lean_project_bundle_dir, data / "bundles" / "toy-0.1.0")
    return data


@pytest.mark.slow
def test_the_formal_tools_search_every_installed_formal_bundle(two_formal, monkeypatch):
    from mathlas.formal import formal_bundle_specs
    from mathlas.tools.informal import get_by_id
    from mathlas.tools.lean_search import get_dependencies, search_formal_math

    monkeypatch.setenv("MATHLAS_DATA_DIR", str(two_formal))
    monkeypatch.delenv("MATHLAS_FORMAL_BUNDLE", raising=False)
    assert formal_bundle_specs(None) == ["other", "toy"]
    r = search_formal_math("the sum of the first n cubes is a square", k=5)
    ids = [h.id for h in r.hits]
    # the hits merge by the learned model's score, which reads each declaration's PageRank in its own
    # bundle (docs/formal.md, "Round 5"): the toy project's most used sum function (Toy.sumTo, 2.5x its
    # bundle's average) comes before the other project's theorem, which nothing uses; both lead
    assert ids[:2] == ["lean:Toy.sumTo", "lean:nicomachus"] and "lean:Toy.gauss_sum" in ids, ids
    assert r.bundle == "other-0.1.0, toy-0.1.0" and len(set(ids)) == len(ids)
    r = search_formal_math("twice the sum of the first n natural numbers", k=5)
    assert "lean:Toy.gauss_sum" in [h.id for h in r.hits] and r.hits[0].id.startswith("lean:Toy.")
    # paging goes on across the bundles
    first, second = (search_formal_math("sum", k=2, offset=o) for o in (0, 2))
    assert not {h.id for h in first.hits} & {h.id for h in second.hits}
    # a declaration is read from the bundle that holds it, none named
    assert get_by_id("lean:Toy.gauss_sum").bundle == "toy-0.1.0"
    assert get_by_id("lean:nicomachus").bundle == "other-0.1.0"
    assert {d.id for d in get_dependencies("lean:nicomachus").declarations} == {"lean:sumCubes"}
    # one named: that one alone
    only = search_formal_math("the sum of the first n cubes is a square", k=5, bundle="toy")
    assert only.bundle == "toy-0.1.0" and "lean:nicomachus" not in [h.id for h in only.hits]


def test_no_formal_bundle_installed_says_so(tmp_path, monkeypatch):
    from mathlas.errors import BundleNotFoundError
    from mathlas.tools.lean_search import search_formal_math

    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("MATHLAS_FORMAL_BUNDLE", raising=False)
    with pytest.raises(BundleNotFoundError, match="no formal bundle is installed; build it with `mathlas index build-lean"):
        search_formal_math("prime two le")


def test_index_path_no_install(tmp_path):
    import os
    import sys

    env = {**os.environ, "MATHLAS_DATA_DIR": str(tmp_path)}
    env.pop("MATHLAS_BUNDLE", None)
    run = subprocess.run([sys.executable, "-m", "mathlas", "index", "path", "--no-install"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert run.returncode == 1 and run.stdout == "" and not (tmp_path / "bundles").exists()
