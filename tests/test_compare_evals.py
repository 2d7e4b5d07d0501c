"""scripts/compare_evals.py: two ``mathlas eval --json`` runs compared query by query (paired bootstrap)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "compare_evals.py"


def _run(tmp_path: Path, name: str, ranks: list) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"bundle": name, "per_query": [{"id": f"q{i}", "hybrid": r} for i, r in
                                                              enumerate(ranks)]}))
    return path


def _main(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, argv)], capture_output=True, text=True, timeout=120)


def test_a_uniform_gain_is_measured_with_an_interval_clear_of_zero(tmp_path):
    before = _run(tmp_path, "old", [2, 2, 2, 2, 2, None, 1, 3] * 5)    # 40 queries
    after = _run(tmp_path, "new", [1, 1, 1, 1, 1, None, 1, 3] * 5)
    p = _main(before, after, "--json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["mode"] == "hybrid" and row["n"] == 40
    assert row["before"]["p@1"] == pytest.approx(5 / 40) and row["after"]["p@1"] == pytest.approx(30 / 40)
    d, lo, hi = row["d_mrr@20"]
    assert d == pytest.approx(25 * 0.5 / 40) and 0 < lo < d < hi
    assert row["d_hit@10"] == [0.0, 0.0, 0.0]
    text = _main(before, after).stdout
    assert "old -> new: 40 queries" in text and "+0.312" in text


def test_styles_split_the_rows_and_mismatched_runs_are_refused(tmp_path):
    before = _run(tmp_path, "old", [1, None, 4, 2])
    after = _run(tmp_path, "new", [1, 5, 4, 2])
    qs = tmp_path / "set.jsonl"
    qs.write_text("".join(json.dumps({"id": f"q{i}", "style": s}) + "\n" for i, s in
                          enumerate(["name", "vague", "vague", "name"])))
    rows = json.loads(_main(before, after, "--styles", qs, "--json").stdout)
    assert [(r["group"], r["n"]) for r in rows] == [("all", 4), ("name", 2), ("vague", 2)]
    vague = rows[2]
    assert vague["d_hit@10"][0] == pytest.approx(0.5) and vague["d_mrr@20"][0] == pytest.approx(0.1)
    md = _main(before, after, "--markdown").stdout
    assert md.splitlines()[1].startswith("| mode | group |")
    other = _run(tmp_path, "other", [1, 2, 3])
    p = _main(before, other)
    assert p.returncode != 0 and "same queries" in p.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    p = _main(before, bad)
    assert p.returncode != 0 and "per_query" in p.stderr and p.stderr[-1:] == "\n" and p.stderr.count("\n") == 1
