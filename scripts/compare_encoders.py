#!/usr/bin/env python3
"""Choose the default encoder by measurement: dense retrieval quality of candidate encoder
directories on the dev queries, over the same corpus (all documents of a recipe, or a fixed
subset: every target plus N seeded random distractors, for candidates too slow to embed it all).

    python scripts/compare_encoders.py work/encoders/minilm-l6-v2 work/encoders/e5-small-math \
        [--recipe build/recipes/informal.toml] [--distractors 4000] [--queries FILE]

Documents are embedded with each candidate's ``fp32/model.onnx`` when present (as the build
does), queries with its ``model.onnx``; embeddings are cached in work/embed-cache.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "build"))

from mathlas.encoder import Encoder  # noqa: E402
from mathlas.retrieval_eval import bootstrap_mrr, first_rank, label_prefixes, load_queries, metrics  # noqa: E402
from mathlas_build.pipeline import read_sources  # noqa: E402
from mathlas_build.embed import embed_documents  # noqa: E402
from mathlas_build.recipe import load_recipe  # noqa: E402
from mathlas_build.retrieval_text import retrieval_text  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("encoders", nargs="+", type=Path)
    ap.add_argument("--recipe", type=Path, default=REPO / "build" / "recipes" / "informal.toml")
    ap.add_argument("--queries", type=Path, default=REPO.parent / "shared" / "eval" / "informal-dev.jsonl")
    ap.add_argument("--distractors", type=int, default=0, help="0 = the whole corpus")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    queries = load_queries(args.queries)
    recipe = load_recipe(args.recipe)
    docs, _ = read_sources(recipe)
    docs = [d for d in docs if d.source in label_prefixes(queries)]  # the sources the set was labelled on
    if args.distractors:
        targets = {t for q in queries for t in q["targets"]}
        keep = [d for d in docs if d.id in targets]
        rest = [d for d in docs if d.id not in targets]
        docs = keep + random.Random(0).sample(rest, min(args.distractors, len(rest)))
    ids = [d.id for d in docs]
    texts = [retrieval_text(d) for d in docs]
    print(f"{len(docs):,} documents, {len(queries)} queries")
    rows = []
    for enc_dir in args.encoders:
        doc_model = "fp32/model.onnx" if (enc_dir / "fp32" / "model.onnx").is_file() else None
        t0 = time.perf_counter()
        vecs = embed_documents(texts, enc_dir, cache_dir=REPO / "work" / "embed-cache", threads=args.threads,
                               model_file=doc_model)
        t_docs = time.perf_counter() - t0
        enc = Encoder(enc_dir, threads=args.threads)
        q = np.vstack([enc.encode_queries([x["query"]]) for x in queries])
        scores = q @ vecs.T
        ranks = []
        for qi, x in enumerate(queries):
            top = np.argsort(-scores[qi])[:20]
            ranks.append(first_rank([ids[i] for i in top], x["targets"]))
        m = metrics(ranks)
        lo, hi = bootstrap_mrr(ranks)
        size = sum(p.stat().st_size for p in enc_dir.iterdir() if p.is_file())
        rows.append((enc.config.name, m, lo, hi, size / 1e6, t_docs))
    print("\n| encoder | P@1 | Hit@10 | Hit@20 | MRR@20 (95% CI) | bundle encoder MB |")
    print("|---|---|---|---|---|---|")
    for name, m, lo, hi, mb, _ in rows:
        print(f"| {name} | {m['p@1']:.3f} | {m['hit@10']:.3f} | {m['hit@20']:.3f} | "
              f"{m['mrr@20']:.3f} ({lo:.2f}–{hi:.2f}) | {mb:.1f} |")


if __name__ == "__main__":
    main()
