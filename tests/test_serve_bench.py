"""scripts/bench_serve.py, whose figures docs/http.md and the README quote, runs end to end: a real
server on the test bundle, both endpoints at two levels against the in-process baselines, and the
sequential comparison of the routes with ``--compare`` serving this same tree as the second version.

Small numbers, and nothing timed is asserted (speed is measured by running the script, never in a
test): only that it runs, answers every request and reports what the docs read of it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def bench(tiny_bundle_dir: Path, tmp_path: Path, *args: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MATHLAS_TOKEN", "MATHLAS_BUNDLE")}
    env["MATHLAS_DATA_DIR"] = str(tmp_path)
    p = subprocess.run([sys.executable, "scripts/bench_serve.py", "--bundle", str(tiny_bundle_dir), "--json", *args],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("endpoint", ["api", "theoremsearch"])
def test_the_load_benchmark_runs_on_both_endpoints(tiny_bundle_dir, tmp_path, endpoint):
    out = bench(tiny_bundle_dir, tmp_path, "--levels", "1,2", "--endpoint", endpoint, "--requests", "20",
                "--baseline-requests", "10", "--warmup", "4", "--repeat", "2")
    assert out["endpoint"] == endpoint and out["cpus"] >= 1 and len(out["load_average"]) == 3
    assert [(r["server"], r["concurrency"]) for r in out["levels"]] == [("this tree", 1), ("this tree", 2)]
    for r in out["levels"]:
        assert r["repeats"] == 2 and r["requests"] == 40 and r["errors"] == 0
        assert r["throughput"] > 0 and r["server_cpu_ms"] >= 0 and r["service_1_cpu_ms"] >= 0 and r["rss_after_mb"] > 0
        assert len(r["over_one_service_thread_each"]) == 2 and len(r["load_average"]) == 2


@pytest.mark.slow
def test_the_sequential_comparison_runs(tiny_bundle_dir, tmp_path):
    out = bench(tiny_bundle_dir, tmp_path, "--sequential", "--rounds", "1", "--compare", str(REPO))
    assert set(out["post_over_get_p50"]) == {"this tree", "compared"}
    routes = [name for name, v in out.items() if isinstance(v, dict) and "p50_ms" in v]
    for label in ("this tree", "compared"):
        assert f"GET /health (does nothing), at once [{label}]" in routes
        assert f"POST /search (TheoremSearch) [{label}]" in routes
    assert "GET /health of a bare ASGI app (the floor), after idle" in routes
