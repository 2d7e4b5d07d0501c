"""What an agent pays for mathlas, in characters, measured by scripts/bench_mcp_size.py with the
official MCP client over stdio (issue 13): tools/list at most 20,200, without a formal bundle (the
formal tools left out) and with one (every tool); a k=10 search answer at most 2,500 characters of
text content and 3,000 of structured content on the default bundle. A change that grows a
description, a schema or a hit past these budgets fails here, not in an agent's context.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_mcp_size.py"
# queries of the benchmarks (bench_mcp.py's and docs/benchmarks.md's), all held to the same budget
QUERIES = [
    "a finitely generated module M over a local ring with M = mM is zero",
    "every compact metric space is separable",
    "a type with decidable equality is a set",
    "Hilbert basis theorem",
    "the compactness theorem for first-order logic",
    "a group of prime order is cyclic",
]


def load_script():
    spec = importlib.util.spec_from_file_location("bench_mcp_size", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def env(**extra: str) -> dict[str, str]:
    out = {k: os.environ[k] for k in ("MATHLAS_DATA_DIR", "MATHLAS_ARTIFACTS", "HOME", "PATH") if k in os.environ}
    return {**out, **extra}


@pytest.fixture(scope="module")
def bench():
    return load_script()


@pytest.mark.slow
def test_tools_list_and_a_search_on_the_tiny_bundle(bench, tiny_bundle_dir):
    r = bench.measure(str(tiny_bundle_dir), env=env())
    assert r["tools_list"] <= bench.BUDGETS["tools_list"], r
    assert r["search"]["hits"] > 0
    assert r["search"]["text"] <= bench.BUDGETS["search_text"], r
    assert r["search"]["structured"] <= bench.BUDGETS["search_structured"], r
    # summaries are what makes the answer small: detail="full" is the library's shape, larger
    assert r["search_full"]["structured"] > r["search"]["structured"]


@pytest.mark.slow
def test_tools_list_with_a_formal_bundle_fits_the_budget(bench, tiny_bundle_dir, formal_bundle_dir):
    """A formal bundle named: the two formal tools are listed too, and the whole list fits."""
    from mathlas.mcp.registry import FACTS

    formal = {name for name, f in FACTS.items() if f.needs_formal_bundle}
    without = bench.measure(str(tiny_bundle_dir), env=env())
    r = bench.measure(str(tiny_bundle_dir), env=env(MATHLAS_FORMAL_BUNDLE=str(formal_bundle_dir)))
    assert r["n_tools"] == without["n_tools"] + len(formal) and r["tools_list"] > without["tools_list"]
    assert r["tools_list"] <= bench.BUDGETS["tools_list"], r


@pytest.mark.slow
def test_default_bundle_search_answers_fit_the_budget(bench):
    from mathlas.releases.catalog import shipped
    from mathlas.releases.install import DEFAULT_BUNDLE, installed

    if not any(r.name == DEFAULT_BUNDLE for r in shipped()) and not any(b.name == DEFAULT_BUNDLE for b in installed()):
        pytest.skip("no default bundle shipped in artifacts/ or installed")
    for query in QUERIES:
        r = bench.measure(query=query, env=env())
        assert r["bundle"].startswith(DEFAULT_BUNDLE + "-") and r["search"]["hits"] == 10
        assert r["tools_list"] <= bench.BUDGETS["tools_list"], r
        assert r["search"]["text"] <= bench.BUDGETS["search_text"], (query, r)
        assert r["search"]["structured"] <= bench.BUDGETS["search_structured"], (query, r)


@pytest.mark.slow
def test_the_script_prints_its_measures(tiny_bundle_dir):
    out = subprocess.run([sys.executable, str(SCRIPT), "--bundle", str(tiny_bundle_dir), "-k", "3"],
                         capture_output=True, text=True, timeout=120, env=env(), check=False)
    assert out.returncode == 0, out.stderr
    assert "tools/list" in out.stdout and "search k=3 text content" in out.stdout and "budget" in out.stdout
