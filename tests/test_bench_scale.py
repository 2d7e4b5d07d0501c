"""scripts/bench_scale.py at a tiny N: every step runs (real writer, real runtime, exact baseline)
and its JSON holds sane figures. Keeps the 1M benchmark from rotting; measures nothing."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_scale.py"


def load_script():
    spec = importlib.util.spec_from_file_location("bench_scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_bench_scale_tiny(tmp_path):
    work = tmp_path / "scale"
    out = subprocess.run([sys.executable, str(SCRIPT), "--docs", "2048", "--work", str(work), "--queries", "20",
                          "--warmup", "5", "--pools", "10,200", "--json", "-"],
                         check=True, capture_output=True, text=True, timeout=120)
    r = json.loads(out.stdout)
    assert r["docs"] == 2048 and r["dims"] == 1024
    files = r["build"]["files_bytes"]
    for name in ("vectors/float.i8.npy", "vectors/binary.usearch", "meta/documents.parquet", "bm25/"):
        assert files[name] > 0, name
    assert files["vectors/float.i8.npy"] >= 2048 * 1024  # one int8 byte per dimension and document
    assert r["build"]["bundle_bytes"] == sum(files.values())
    assert all(s >= 0 for s in r["build"]["seconds"].values())
    serve = r["serve"]
    for stage in ("after_open", "after_warmup", "end"):
        assert serve["memory"][stage]["rss_mb"] > 0
    for lat in [*serve["latency"].values(), *r["exact"]["latency"].values()]:
        assert 0 < lat["p50_ms"] <= lat["p95_ms"]
    recalls = {int(p): v["recall"] for p, v in serve["recall_at_10"].items()}
    assert set(recalls) == {10, 200, serve["default_pool"]}  # the size's default pool joins the curve
    assert all(0.0 <= x <= 1.0 for x in recalls.values())
    # the planted structure is recoverable: a 200-candidate pool over 2,048 documents finds most of
    # the exact top 10, and the hybrid ranking (lexical words + dense vector) finds the planted target
    assert recalls[200] >= 0.9
    assert serve["hybrid_target_in_top10"] >= 0.9
    # the exact float32 baseline is the oracle itself; int8 rescoring of every row is close to it
    assert r["exact"]["recall_at_10"] == 1.0
    assert 0.95 <= r["exact"]["int8_all_rows_recall_at_10"] <= 1.0
    # a rerun reuses every finished step and reports the same result
    again = subprocess.run([sys.executable, str(SCRIPT), "--docs", "2048", "--work", str(work), "--queries", "20",
                            "--warmup", "5", "--pools", "10,200", "--json", "-"],
                           check=True, capture_output=True, text=True, timeout=60)
    assert "running" not in again.stderr
    assert json.loads(again.stdout)["serve"] == serve

    table = load_script().extrapolate({**r, "docs": 1024}, r, 9_200_000)
    assert "9,200,000 extrapolated" in table and "size, whole bundle" in table


@pytest.mark.slow
def test_bench_scale_builds_thermometer_codes(tmp_path):
    work = tmp_path / "thermo"
    out = subprocess.run([sys.executable, str(SCRIPT), "--docs", "2048", "--work", str(work), "--queries", "20",
                          "--warmup", "5", "--pools", "200", "--codes", "thermometer3", "--skip-exact", "--json", "-"],
                         check=True, capture_output=True, text=True, timeout=120)
    r = json.loads(out.stdout)
    manifest = json.loads((work / "bundle" / "manifest.json").read_text())
    assert manifest["vectors"]["binary_codes"] == "thermometer3" and manifest["format_version"] == 2
    assert r["serve"]["recall_at_10"]["200"]["recall"] >= 0.9


def test_bench_scale_refuses_other_parameters(tmp_path):
    (tmp_path / "params.json").write_text(json.dumps({"docs": 4096}))
    res = subprocess.run([sys.executable, str(SCRIPT), "--docs", "2048", "--work", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "other parameters" in res.stderr
