"""A Lean declaration name asked of the informal search (walkthrough: ``search_existing_math("Nat.add_comm")``
answered ``none`` over unrelated hits, with nothing pointing at the formal search): with a formal bundle,
the first next step is ``search_formal_math``; without one, the note says the query looks like a Lean
name and that no formal bundle is installed."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mathlas.service import LEAN_NAME_NOTE, _looks_like_lean_name


@pytest.mark.parametrize("query, lean", [
    ("Nat.add_comm", True), ("mul_comm", True), ("`Finset.sum_range_succ`", True), ("mul_comm'", True),
    ("mul_inv_cancel₀", True), ("geom_sum₂_Ico", True), ("lean:Nat.add_comm", True),
    ("www.example.com", False), ("node.js", False), ("file_name.txt", False), ("https://x.org", False),
    ("x_n", False), ("a_n", False), ("e.g.", False), ("stacks:00DV", False), ("Nakayama lemma", False),
    ("L^2", False), ("H^1(X, F)", False),
])
def test_what_reads_as_a_lean_name(query, lean):
    assert _looks_like_lean_name(query) is lean


def search(query: str, tmp_path, bundle, *extra: str, **env: str) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k != "MATHLAS_FORMAL_BUNDLE"}
    e.update(MATHLAS_DATA_DIR=str(tmp_path / "data"), **env)   # nothing installed there: no formal bundle
    return subprocess.run([sys.executable, "-m", "mathlas", "search", query, "--bundle", str(bundle), "-k", "3",
                           *extra], capture_output=True, text=True, env=e, timeout=300)


@pytest.mark.slow
def test_without_a_formal_bundle_the_note_says_so(default_bundle_dir, tmp_path):
    p = search("Nat.add_comm", tmp_path, default_bundle_dir)
    assert p.returncode == 0, p.stderr
    assert LEAN_NAME_NOTE in p.stderr and "(match: " in p.stderr     # the human form's match line
    p = search("Nat.add_comm", tmp_path, default_bundle_dir, "--json")
    got = json.loads(p.stdout)
    assert LEAN_NAME_NOTE in got["note"] and all(s["tool"] != "search_formal_math" for s in got["next"])
    # a query that is not a name gets no such note
    p = search("Nakayama lemma", tmp_path, default_bundle_dir, "--json")
    assert LEAN_NAME_NOTE not in json.loads(p.stdout)["note"]


@pytest.mark.slow
def test_with_a_formal_bundle_the_first_next_step_is_the_formal_search(default_bundle_dir, formal_bundle_dir,
                                                                      tmp_path):
    p = search("mul_comm", tmp_path, default_bundle_dir, "--json", MATHLAS_FORMAL_BUNDLE=str(formal_bundle_dir))
    got = json.loads(p.stdout)
    assert got["next"][0] == {"tool": "search_formal_math", "arguments": {"query": "mul_comm"},
                              "why": "it looks like a Lean declaration name"}
    assert LEAN_NAME_NOTE not in got["note"]
