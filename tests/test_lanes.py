"""The two ways to run the tests (README): ``python -m pytest -q`` runs every test (CI runs exactly
that), ``python -m pytest -q -m "not slow"`` is the fast lane. pyproject.toml must not select markers
for everyone: its former ``addopts = "-m 'not slow'"`` would have dropped every slow test from CI."""
from __future__ import annotations

import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_the_default_run_selects_no_marker():
    options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    addopts = options.get("addopts", "")
    assert "-m" not in shlex.split(addopts if isinstance(addopts, str) else " ".join(addopts))
    assert any(m.startswith("slow:") for m in options["markers"])


def test_the_readme_names_both_runs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "&& python -m pytest -q\n" in readme and 'python -m pytest -q -m "not slow"' in readme
    assert (REPO / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith("&& python -m pytest -q")


@pytest.mark.slow
def test_the_fast_lane_leaves_out_the_slow_tests_and_only_them():
    def collected(*args: str) -> set[str]:
        out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                             cwd=REPO, capture_output=True, text=True, timeout=300).stdout
        return {line for line in out.splitlines() if "::" in line}

    every, slow, fast = collected(), collected("-m", "slow"), collected("-m", "not slow")
    assert slow and fast and slow | fast == every and not slow & fast
    marked = "tests/test_sources_stacks_planetmath_hott.py::test_stacks_counts"  # by its fixture (a full corpus)
    assert marked in slow and "tests/test_lanes.py::test_the_default_run_selects_no_marker" in fast
