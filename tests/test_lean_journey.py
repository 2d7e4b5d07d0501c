"""The Lean journey as a person takes it: ``mathlas index build-lean PATH`` on a project of their own
(tests/data/lean-project, whose lake-manifest.json names no mathlib), then ``mathlas lean search`` and
``mathlas lean deps`` on what it installed; the project linked and licensed as itself (git remote and
commit, LICENSE file, ``--license``), its packages as themselves; ``mathlas-build train-encoder``
without the build extra. Real subprocesses, real git, the real pipeline and encoder."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPORA, EVAL, LEAN_PROJECT, REPO


def command(name: str) -> list[str]:
    """The console script as a person types it (beside this Python), else ``python -m``."""
    script = Path(sys.executable).with_name(name)
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", {"mathlas": "mathlas", "mathlas-build": "mathlas_build.cli"}[name]]


def copy_project(tmp_path: Path, name: str = "toy") -> Path:
    project = tmp_path / name
    shutil.copytree(LEAN_PROJECT, project)
    return project


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), "-c", "user.name=t", "-c", "user.email=t@example.org",
                           "-c", "commit.gpgsign=false", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def read(project: Path, **kw):
    """The documents and the manifest's ``sources`` block of a build-lean recipe (reading only: the same
    recipe ``mathlas index build-lean`` builds, without embedding)."""
    from mathlas_build.lean_build import lean_recipe
    from mathlas_build.pipeline import read_sources

    recipe = lean_recipe(project, project / "no-encoder", version="0.1.0", **kw)
    docs, info = read_sources(recipe, quiet=True)
    return {d.id: d for d in docs}, info


@pytest.mark.slow
def test_build_lean_on_a_project_without_mathlib_then_search_and_deps(tmp_path):
    """The whole command path: the build (it died with NameError: subprocess on a project whose
    manifest names no mathlib), its output in the data directory and nowhere else, then search and deps."""
    project = copy_project(tmp_path)
    data, cwd = tmp_path / "data", tmp_path / "cwd"
    cwd.mkdir()
    env = {**os.environ, "MATHLAS_DATA_DIR": str(data)}
    proc = subprocess.run(command("mathlas") + ["index", "build-lean", str(project), "--threads", "1"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    # stdout is the installed bundle's directory, nothing else; the talk is on stderr
    installed = Path(proc.stdout.strip())
    assert proc.stdout.strip().count("\n") == 0 and installed.parent == data / "bundles"
    # named after its Lake package, not "mathlib"; outside git: no commit in its version (issue 31 item 15)
    assert installed.name.startswith("toy-0.") and "+" not in installed.name and "[embed]" in proc.stderr
    # the one bundle installed is the one built: the default informal bundle is not installed on the way
    assert sorted(p.name for p in (data / "bundles").iterdir() if not p.name.startswith(".")) == [installed.name]
    # nothing written where the command ran; the build's own folder holds the embedding cache and the
    # default release unpacked for its encoder
    assert list(cwd.iterdir()) == []
    assert sorted(p.name for p in (data / "build").iterdir()) == ["default-bundle", "embed-cache"]
    manifest = json.loads((installed / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["sources"]["lean"]["license"] == "MIT"
    assert manifest["sources"]["lean"]["attribution"] == "toy (no repository, MIT)"

    def mathlas(*args: str) -> dict:  # no --bundle: the formal tools search every installed formal bundle
        out = subprocess.run(command("mathlas") + list(args) + ["--json"], cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    hits = mathlas("lean", "search", "twice the sum of the first n natural numbers", "-k", "5")["hits"]
    gauss = next(h for h in hits if h["id"] == "lean:Toy.gauss_sum")
    assert gauss["license"] == "MIT" and gauss["link"] == ""
    assert "mathlib" not in json.dumps(hits).lower()
    uses = mathlas("lean", "deps", "lean:Toy.gauss_sum")
    assert {d["id"] for d in uses["declarations"]} == {
        "lean:Toy.double", "lean:Toy.double_eq_two_mul", "lean:Toy.sumTo", "lean:Toy.sumTo_succ"}
    used_by = mathlas("lean", "deps", "Toy.gauss_sum", "--used-by")
    assert [d["id"] for d in used_by["declarations"]] == ["lean:Toy.isEven_mul_succ"]


def test_the_lean_project_bundle_fixture(lean_project_bundle_dir, lean_project_dir):
    """What other tests build on: docstrings on every declaration written, binders, a structure with
    fields, an instance, a @[simp] lemma, dependencies both ways; the project's licence, no link."""
    import mathlas

    assert (lean_project_dir / "lake-manifest.json").is_file()
    rows = {r["id"]: r for r in mathlas.open_bundle(lean_project_bundle_dir).table.to_pylist()}
    assert len(rows) == 30 and {r["license"] for r in rows.values()} == {"MIT"}
    assert {r["link"] for r in rows.values()} == {""}
    written = [r for r in rows.values() if not r["generated"] and r["kind"] != "instance"]
    assert len(written) == 25 and all(r["docstring"] for r in written)
    assert {r["kind"] for r in rows.values()} >= {"def", "theorem", "structure", "field", "constructor", "instance"}
    assert rows["lean:Toy.double_zero"]["attributes"] == "simp"
    assert rows["lean:Toy.IsEven.add"]["signature"].startswith("{m n : Nat} (hm : IsEven m)")
    used_by = {i for i, r in rows.items() if "lean:Toy.gauss_sum" in r["dependencies"]}
    assert used_by == {"lean:Toy.isEven_mul_succ"} and "lean:Toy.sumTo" in rows["lean:Toy.gauss_sum"]["dependencies"]


def test_a_git_project_links_to_its_own_repository_and_packages_to_theirs(tmp_path):
    """Linked and licensed as itself: origin remote + HEAD, LICENSE (MIT); a package under .lake/packages
    from its lake-manifest entry (url, rev) and its own LICENSE; Mathlib as Mathlib (Apache-2.0)."""
    project = copy_project(tmp_path)
    helper = project / ".lake" / "packages" / "helper"
    (helper / "Helper").mkdir(parents=True)
    (helper / "Helper" / "Util.lean").write_text(
        "namespace Helper\n\n/-- The identity. -/\ndef ident (n : Nat) : Nat := n\n\nend Helper\n", encoding="utf-8")
    (helper / "COPYING").write_text("                    GNU GENERAL PUBLIC LICENSE\n"
                                    "                       Version 3, 29 June 2007\n", encoding="utf-8")
    mathlib = project / ".lake" / "packages" / "mathlib"
    (mathlib / "Mathlib").mkdir(parents=True)
    (mathlib / "Mathlib" / "Logic.lean").write_text("/-- Truth. -/\ntheorem truth : True := trivial\n",
                                                    encoding="utf-8")
    manifest = json.loads((project / "lake-manifest.json").read_text(encoding="utf-8"))
    manifest["packages"] = [
        {"url": "https://github.com/someone/helper.git", "type": "git", "subDir": None, "rev": "1" * 40,
         "name": "helper", "inherited": False},
        {"url": "https://github.com/leanprover-community/mathlib4", "type": "git", "subDir": None, "rev": "2" * 40,
         "name": "mathlib", "inherited": False}]
    (project / "lake-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    git(project, "init", "-q")
    git(project, "remote", "add", "origin", "git@github.com:someone/toy.git")
    git(project, "add", "Toy", "Toy.lean", "LICENSE", "lakefile.toml", "lake-manifest.json")
    git(project, "commit", "-q", "-m", "toy")
    head = git(project, "rev-parse", "HEAD")

    docs, info = read(project)
    gauss = docs["lean:Toy.gauss_sum"]
    line = next(i for i, t in enumerate((project / "Toy/Sum.lean").read_text().splitlines(), 1)
                if t.startswith("theorem gauss_sum"))
    assert gauss.link == f"https://github.com/someone/toy/blob/{head}/Toy/Sum.lean#L{line}"
    assert gauss.license == "MIT"
    assert docs["lean:Toy.Interval.lo"].link.startswith(f"https://github.com/someone/toy/blob/{head}/Toy/")
    ident = docs["lean:Helper.ident"]
    assert (ident.link, ident.license) == (f"https://github.com/someone/helper/blob/{'1' * 40}/Helper/Util.lean#L4",
                                           "GPL-3.0")
    truth = docs["lean:truth"]
    assert (truth.link, truth.license) == (
        f"https://github.com/leanprover-community/mathlib4/blob/{'2' * 40}/Mathlib/Logic.lean#L2", "Apache-2.0")
    assert info["lean"]["license"] == "MIT"
    assert info["lean"]["attribution"] == (
        f"toy (https://github.com/someone/toy @ {head[:8]}, MIT); packages: "
        f"helper (https://github.com/someone/helper @ 11111111, GPL-3.0), "
        f"mathlib (https://github.com/leanprover-community/mathlib4 @ 22222222, Apache-2.0)")


def test_a_project_in_a_subfolder_of_a_repository_links_with_its_folder(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    project = copy_project(repo, "lean")
    git(repo, "init", "-q")
    git(repo, "remote", "add", "origin", "https://gitlab.com/someone/monorepo")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "all")
    head = git(repo, "rev-parse", "HEAD")
    docs, _ = read(project)
    assert docs["lean:Toy.double"].link == f"https://gitlab.com/someone/monorepo/-/blob/{head}/lean/Toy/Basic.lean#L10"


def test_without_git_or_licence_file_no_link_and_unknown_licence_unless_given(tmp_path):
    project = copy_project(tmp_path)
    (project / "LICENSE").unlink()
    docs, info = read(project)
    assert {(d.link, d.license) for d in docs.values()} == {("", "unknown")}
    assert (info["lean"]["license"], info["lean"]["attribution"]) == ("unknown", "toy (no repository, unknown)")
    docs, info = read(project, license="CC-BY-4.0")
    assert {d.license for d in docs.values()} == {"CC-BY-4.0"}
    assert info["lean"]["license"] == "CC-BY-4.0"


@pytest.mark.parametrize(("remote", "url"), [
    ("git@github.com:o/r.git", "https://github.com/o/r"),
    ("https://github.com/o/r.git", "https://github.com/o/r"),
    ("https://github.com/o/r", "https://github.com/o/r"),
    ("ssh://git@github.com/o/r.git", "https://github.com/o/r"),
    ("https://token@github.com/o/r.git/", "https://github.com/o/r"),
    ("git@gitlab.com:o/r.git", "https://gitlab.com/o/r"),
    ("https://example.org/o/r.git", ""),
    ("/srv/git/r.git", ""),
])
def test_web_url_of_git_remotes(remote, url):
    from mathlas_build.sources.lean import web_url

    assert web_url(remote) == url


@pytest.mark.parametrize(("text", "spdx"), [
    ("Apache License\nVersion 2.0, January 2004", "Apache-2.0"),
    ("MIT License\n\nPermission is hereby granted, free of charge, to any person", "MIT"),
    ("Redistribution and use in source and binary forms ... Neither the name of", "BSD-3-Clause"),
    ("Redistribution and use in source and binary forms, with or without modification", "BSD-2-Clause"),
    ("GNU GENERAL PUBLIC LICENSE\nVersion 2, June 1991", "GPL-2.0"),
    # the first title decides: the GPL's text names the LGPL, the MPL's the GPL family
    ("GNU GENERAL PUBLIC LICENSE\nVersion 2, June 1991\n... Some other Free Software Foundation software is "
     "covered by the GNU Lesser General Public License instead.", "GPL-2.0"),
    ("Mozilla Public License Version 2.0\n1.12. Secondary License means either the GNU General Public License, "
     "Version 2.0, the GNU Lesser General Public License, Version 2.1, the GNU Affero General Public License", "MPL-2.0"),
    ("GNU Free Documentation License\nVersion 1.2, November 2002", "GFDL-1.2"),
    ("text licensed under [CC-by-SA-4.0](https://creativecommons.org/licenses/by-sa/4.0/)", "CC-BY-SA-4.0"),
    ("GNU LESSER GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007", "LGPL-3.0"),
    ("Attribution 4.0 International ... Creative Commons", "CC-BY-4.0"),
    ("Creative Commons Attribution-ShareAlike 3.0", "CC-BY-SA-3.0"),
    ("// SPDX-License-Identifier: MPL-2.0", "MPL-2.0"),
    ("All rights reserved.", "unknown"),
])
def test_licence_guess(text, spdx):
    from mathlas_build.sources.lean import spdx_of

    assert spdx_of(text) == spdx


@pytest.mark.parametrize("cmd", ["train-encoder", "train-reranker"])
def test_training_without_the_build_extra_says_what_to_install(tmp_path, cmd):
    """A real run of the command in a Python where importing torch fails (a finder put first on
    sys.meta_path by a sitecustomize), as on the runtime-only install: one line, exit 2."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        "class _NoBuildExtra:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, _NoBuildExtra())\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO / "build")])}
    # a recipe that loads (with the corpora), so that before the guard the run got as far as `import torch`
    recipe = [str(REPO / "build" / "recipes" / "pairs.toml"), "--corpora", str(CORPORA), "--eval-dir", str(EVAL)]
    proc = subprocess.run(command("mathlas-build") + [cmd, *recipe],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"mathlas-build: {cmd} needs the build extra: pip install 'mathlas[build]'\n"
