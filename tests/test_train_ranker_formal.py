"""scripts/train_ranker_formal.py: the formal learned stage, trained and measured out of fold.

The real run needs the whole Mathlib bundle (docs/formal.md, "Round 4"); here the same script trains on
the tests' formal bundle, with queries made from its own declarations' docstrings, so that every step
it takes (pools, folds by shared target, out-of-fold ranking through ``Bundle.search``, the final
model, the match fit) runs on real parts."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "build"))


def test_folds_keep_queries_that_share_a_target_together():
    from train_ranker_formal import folds_of

    recs = [{"id": f"q{i}", "targets": t} for i, t in enumerate(
        [["lean:A"], ["lean:A"], ["lean:B"], ["lean:B", "lean:C"], ["lean:C"], ["lean:D"], ["lean:E"], ["lean:F"]])]
    fold = folds_of(recs, 3)
    assert fold["q0"] == fold["q1"]
    assert fold["q2"] == fold["q3"] == fold["q4"]          # B and C are joined by q3
    assert set(fold.values()) <= {0, 1, 2}
    assert folds_of(recs, 3) == fold                         # the same folds in every run


def without_model(formal_bundle_dir: Path, tmp_path: Path) -> Path:
    """A copy of the tests' formal bundle without its model (it carries the shipped one; the trainer
    wants a bundle without)."""
    from mathlas.bundle import MANIFEST

    bundle = tmp_path / "formaltest-0.1.0"
    shutil.copytree(formal_bundle_dir, bundle)
    manifest = json.loads((bundle / MANIFEST).read_text(encoding="utf-8"))
    assert manifest.pop("ranker")
    (bundle / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return bundle


def test_trains_on_a_formal_bundle_and_reports_out_of_fold(formal_bundle_dir, tmp_path):
    import mathlas
    from mathlas.ranking.learned import model_from_spec

    bundle = without_model(formal_bundle_dir, tmp_path)
    b = mathlas.open_bundle(bundle)
    ids, texts = b.column("id").to_pylist(), b.column("docstring").to_pylist() if "docstring" in b.table.column_names \
        else b.column("text").to_pylist()
    queries = [{"id": f"t{i}", "query": t.split(". ")[0][:200], "targets": [d], "style": "precise"}
               for i, (d, t) in enumerate(zip(ids, texts)) if t and len(t.split()) >= 6][:36]
    assert len(queries) == 36
    sets = tmp_path / "docstrings.jsonl"
    sets.write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    out, report = tmp_path / "model.json", tmp_path / "report.json"
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "train_ranker_formal.py"), "--bundle", str(bundle),
                          "--sets", str(sets), "--out", str(out), "--report", str(report), "--folds", "3",
                          "--trees", "5", "--leaves", "3", "--min-data", "5"],
                         capture_output=True, text=True, timeout=600, cwd=REPO)
    assert run.returncode == 0, run.stderr[-2000:]
    spec = json.loads(out.read_text(encoding="utf-8"))
    model_from_spec(spec)                                      # the runtime reads it
    assert len(spec["trees"]) == 5 and spec["trained_on"]["folds"] == 3
    assert {"none_below", "strong_at", "weights", "bias"} <= set(spec["match"])
    measured = spec["measured"]
    row = measured["docstrings/all"]
    assert row["n"] == 36 and set(row) >= {"before", "learned, out of fold", "delta_mrr@20"}
    lo, mean, hi = row["delta_mrr@20"][1], row["delta_mrr@20"][0], row["delta_mrr@20"][2]
    assert lo <= mean <= hi
    # every fold's model on the collection's 130 off-topic queries (50 sentences, 80 short)
    assert measured["match, out of fold"]["offtopic_rows"] == 3 * 130
    got = json.loads(report.read_text(encoding="utf-8"))
    assert set(got["oof"]) == {f"docstrings:{q['id']}" for q in queries}  # every query ranked out of fold


def test_refuses_a_bundle_that_has_a_model(formal_bundle_dir):
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "train_ranker_formal.py"), "--bundle",
                          str(formal_bundle_dir), "--sets", "x.jsonl", "--out", "m.json"],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert run.returncode != 0 and "carries a model already" in run.stderr


def test_a_model_that_reads_the_declarations_pagerank(formal_bundle_dir, tmp_path):
    """``--extras log_pagerank,generated``: the model reads two of the bundle's columns after the 34
    features; attached to the bundle, the search reads them too (the bundle's docinfo carries them)."""
    import mathlas
    from mathlas.ranking.learned import FEATURES, bundle_model
    from mathlas_build.training.ltr import attach

    bundle = without_model(formal_bundle_dir, tmp_path)
    b = mathlas.open_bundle(bundle)
    assert "pagerank" in b.table.column_names
    ids, texts = b.column("id").to_pylist(), b.column("text").to_pylist()
    queries = [{"id": f"t{i}", "query": t.split(". ")[0][:200], "targets": [d]}
               for i, (d, t) in enumerate(zip(ids, texts)) if t and len(t.split()) >= 6][:24]
    sets = tmp_path / "texts.jsonl"
    sets.write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    out = tmp_path / "model.json"
    argv = [sys.executable, str(REPO / "scripts" / "train_ranker_formal.py"), "--bundle", str(bundle), "--sets",
            str(sets), "--out", str(out), "--folds", "3", "--trees", "5", "--leaves", "3", "--min-data", "5"]
    run = subprocess.run([*argv, "--extras", "log_pagerank,generated"], capture_output=True, text=True, timeout=600,
                         cwd=REPO)
    assert run.returncode == 0, run.stderr[-2000:]
    spec = json.loads(out.read_text(encoding="utf-8"))
    assert spec["features"] == [*FEATURES, "log_pagerank", "generated"]
    assert spec["trained_on"]["extras"] == ["log_pagerank", "generated"]
    attach(bundle, out)
    b = mathlas.open_bundle(bundle)
    model, info = bundle_model(b)
    assert model.extras == ("log_pagerank", "generated") and set(info.extra) >= {"log_pagerank", "generated"}
    assert b.search(queries[0]["query"], k=5)                       # ranks with the model
    bad = subprocess.run([*argv, "--extras", "generated,log_pagerank"], capture_output=True, text=True, timeout=300,
                         cwd=REPO)
    assert bad.returncode != 0 and "--extras must be some of log_pagerank, deprecated, generated" in bad.stderr
