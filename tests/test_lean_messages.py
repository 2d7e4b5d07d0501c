"""What a first-time Lean user reads: `mathlas lean deps --help` gives the ranges of --depth and
--limit, a project bundle built with `--name` is described by that name, and the Lean HTTP errors name
their query parameter in words."""
from __future__ import annotations

import shutil
import subprocess
import sys

from test_web_api import one_line_error


def test_lean_deps_help_gives_the_ranges():
    run = subprocess.run([sys.executable, "-m", "mathlas", "lean", "deps", "--help"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    text = " ".join(run.stdout.split())
    assert "1 to 5 (default: 1)" in text and "1 to 5000 (default: 100" in text, text


def test_build_lean_describes_the_bundle_by_its_chosen_name(lean_project_dir, tmp_path):
    from mathlas_build.lean_build import lean_recipe

    project = tmp_path / "leanproj"
    shutil.copytree(lean_project_dir, project)
    recipe = lean_recipe(project, project / "no-encoder", name="toyproj", version="0.1.0")
    assert recipe.description.startswith("Lean declarations of toyproj "), recipe.description
    assert "leanproj" not in recipe.description
    assert recipe.raw["description"] == recipe.description


def test_http_lean_errors_name_their_query_parameter(web):
    err = one_line_error(web.get("/api/lean/search", params={"q": "prime", "module": "NumberTheory"}), 422,
                         "lies in the module (query parameter `module`) NumberTheory (modules look like")
    assert "(query parameter) " not in err
    one_line_error(web.get("/api/lean/search", params={"q": "prime", "kind": "theorm"}), 422,
                   "unknown kind 'theorm' in the `kind` query parameter")
