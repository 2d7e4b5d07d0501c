"""The dry-run planner: its measured cost table agrees with the real bundle, and the arithmetic scales."""
from __future__ import annotations

import json

import pytest

from mathlas import bundle as fmt
from mathlas_build import plan as pl
from mathlas_build.cli import main


def test_cost_table_matches_the_shipped_bundle(default_bundle_dir):
    """The per-document figures were measured on the default bundle: when it is rebuilt this fails,
    and the figures are re-measured (bundle_bytes_per_doc, bundle_tokens_per_doc), not skipped."""
    m = fmt.read_manifest(default_bundle_dir)
    assert f"{m.name}-{m.version}" == pl.MEASURED_BUNDLE, (
        f"the default bundle is {m.name}-{m.version}, the cost table was measured on {pl.MEASURED_BUNDLE}: "
        "re-measure plan.BYTES_PER_DOC / TOKENS_PER_DOC / MODELS['minilm'].encoder_bytes from it")
    assert pl.MEASURED_CORPUS.startswith(f"{pl.MEASURED_BUNDLE} ({m.count:,} documents")
    got = pl.bundle_bytes_per_doc(default_bundle_dir)
    for key, want in pl.BYTES_PER_DOC.items():
        assert got[key] == pytest.approx(want, abs=0.05), key
    enc = sum(e.size for f, e in m.files.items() if f.startswith("encoder/"))
    assert pl.MODELS["minilm"].encoder_bytes == enc


@pytest.mark.slow
def test_tokens_per_doc_is_the_shipped_bundles(default_bundle_dir):
    assert pl.bundle_tokens_per_doc(default_bundle_dir) == pytest.approx(pl.TOKENS_PER_DOC, abs=0.05)


def test_plan_predicts_the_shipped_bundle_size(default_bundle_dir):
    m = fmt.read_manifest(default_bundle_dir)
    enc = sum(e.size for f, e in m.files.items() if f.startswith("encoder/"))
    p = pl.make_plan(m.count, "minilm", gpu="cpu", dims=m.vectors["dims"], from_bundle=default_bundle_dir,
                     encoder_bytes=enc)
    real = sum(e.size for e in m.files.values())
    assert p.total_bytes == pytest.approx(real, rel=0.01)
    vec = sum(e.size for f, e in m.files.items() if f.startswith("vectors/"))
    assert p.sizes["binary vectors (HNSW)"] + p.sizes["int8 float vectors"] == pytest.approx(vec, rel=0.01)


def test_plan_scales():
    one = pl.make_plan(1_000_000, "qwen3-0.6b", gpus=1)
    eight = pl.make_plan(1_000_000, "qwen3-0.6b", gpus=8)
    assert eight.embed_hours == pytest.approx(one.embed_hours / 8)
    assert eight.write_hours == one.write_hours  # the merge writes on one machine
    assert pl.make_plan(2_000_000, "qwen3-0.6b").sizes["BM25"] == 2 * one.sizes["BM25"]
    big = pl.make_plan(1_000_000, "qwen3-8b")
    assert big.docs_per_s_per_device < one.docs_per_s_per_device / 10
    assert pl.make_plan(1_000_000, "qwen3-8b", gpu="a100").embed_hours > big.embed_hours
    full, cut = pl.make_plan(1000, "qwen3-8b"), pl.make_plan(1000, "qwen3-8b", dims=1024)
    assert full.sizes["int8 float vectors"] == 1000 * (4096 + 4) and cut.sizes["int8 float vectors"] == 1000 * 1028
    assert cut.sizes["binary vectors (HNSW)"] == round(1000 * (1024 / 8 + pl.BYTES_PER_DOC["hnsw_graph"]))
    # at the tokens per document it was measured with, the CPU rate is the measured one
    cpu = pl.make_plan(27_264, "minilm", gpu="cpu", tokens_per_doc=pl.CPU_MINILM_TOKENS_PER_DOC)
    assert cpu.docs_per_s_per_device == pytest.approx(pl.CPU_MINILM_DOCS_PER_S, rel=0.01)
    # and the GPU rate is the one measured on an H200, said to be measured; other GPUs scale from it
    h200 = pl.make_plan(288_733, "minilm", gpu="h200", tokens_per_doc=pl.GPU_MINILM_TOKENS_PER_DOC)
    assert h200.docs_per_s_per_device == pytest.approx(pl.GPU_MINILM_DOCS_PER_S, rel=0.001)
    assert h200.sources["throughput"].startswith("MEASURED: 1.3% MFU")
    a100 = pl.make_plan(288_733, "minilm", gpu="a100", tokens_per_doc=pl.GPU_MINILM_TOKENS_PER_DOC)
    assert a100.sources["throughput"].startswith("ESTIMATED from the rate MEASURED on an H200")
    assert "ESTIMATED: 35% MFU (assumed)" in one.sources["throughput"]


def test_plan_errors():
    for kw, msg in (({"docs": 0}, "--docs"), ({"gpus": 0}, "--gpus"), ({"dims": 5000}, "Matryoshka"),
                    ({"model": "bert"}, "unknown model"), ({"gpu": "tpu"}, "unknown device")):
        args = {"docs": 10, "model": "qwen3-0.6b", **kw}
        with pytest.raises(ValueError, match=msg):
            pl.make_plan(args.pop("docs"), args.pop("model"), **args)


def test_plan_cli_labels_estimates(capsys):
    assert main(["plan", "--docs", "9200000", "--model", "qwen3-4b", "--gpus", "4", "--gpu", "h100", "--dims", "1024"]) == 0
    out = capsys.readouterr().out
    assert "ESTIMATED" in out and "989.4 TFLOPS" in out and "MFU (assumed)" in out
    assert f"MEASURED on {pl.MEASURED_BUNDLE}" in out
    for part in ("binary vectors", "int8 float vectors", "BM25", "metadata", "encoder", "embedding", "writing"):
        assert part in out
    assert main(["plan", "--docs", "1000", "--model", "minilm", "--gpu", "cpu", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["docs"] == 1000 and data["dims"] == 384 and data["sources"]["throughput"].startswith("MEASURED")
    assert main(["plan", "--docs", "10", "--model", "qwen3-0.6b", "--dims", "0"]) == 2
    with pytest.raises(SystemExit):
        main(["plan", "--docs", "10", "--model", "nope"])


def test_dry_run_reads_the_recipe(tmp_path, encoder_dir, capsys):
    rows = [{"id": f"r{i}", "name": f"lemma {i}", "body": f"every ring of rank {i} is noetherian"} for i in range(12)]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    recipe = tmp_path / "r.toml"
    recipe.write_text(f"name='dry'\nversion='1'\n[encoder]\npath='{encoder_dir.as_posix()}'\n"
                      "[[sources]]\nreader='generic'\npath='rows.jsonl'\noptions={source='toy'}\n")
    assert main([str(recipe), "--corpora", str(tmp_path), "--dry-run", "--gpus", "2", "--gpu", "cpu", "--json", "-q"]) == 0
    data = json.loads(capsys.readouterr().out)
    enc_bytes = sum(f.stat().st_size for f in encoder_dir.iterdir() if f.is_file())
    assert data["docs"] == 12 and data["dims"] == 384 and data["devices"] == 2 and data["model"] == "minilm"
    assert data["sizes"]["encoder"] == enc_bytes
    assert 5 < data["tokens_per_doc"] < 30  # measured with the recipe's own tokenizer
    assert not (tmp_path / "work").exists()  # nothing embedded or written
