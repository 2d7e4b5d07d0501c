#!/usr/bin/env python3
"""Search latency, in process, warm: p50/p95 over the dev queries for hybrid k=10, a new query (the
query encoded: what a person's search costs) and a repeated one (its vector kept by the bundle), with
the lexical channel, the query encoder and the dense channel shown separately. Baseline measured in
the same run: the dense channel as an exact scan over every stored vector (no HNSW).

    python scripts/bench_search.py [--bundle B] [--queries FILE] [--rounds 5]
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import mathlas
from mathlas.retrieval_eval import load_queries
from mathlas.filters import Filters

REPO = Path(__file__).resolve().parents[1]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def timed(fn, rounds, items):
    out = []
    for _ in range(rounds):
        for it in items:
            t0 = time.perf_counter()
            fn(it)
            out.append((time.perf_counter() - t0) * 1000)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bundle")
    ap.add_argument("--queries", default=str(REPO.parent / "shared" / "eval" / "informal-dev.jsonl"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    queries = [q["query"] for q in load_queries(args.queries)]
    b = mathlas.open_bundle(args.bundle)
    for q in queries:  # warm: load everything, touch the pages
        b.search(q, k=args.k)
    vecs = {q: b.encoder.encode_queries([q])[0] for q in queries}
    rows = {
        # what a person's new query costs: its vector is not kept from an earlier call
        "hybrid k=10, new query (end to end)": timed(lambda q: (b.forget_query_vectors(), b.search(q, k=args.k)),
                                                     args.rounds, queries),
        # the same query again (a page of results, a TheoremSearch answer): the vector is kept
        "hybrid k=10, repeated query": timed(lambda q: b.search(q, k=args.k), args.rounds, queries),
        "lexical channel (BM25)": timed(lambda q: b.lexical.search(q, 100, Filters()), args.rounds, queries),
        "query encoder (ONNX)": timed(lambda q: b.encoder.encode_queries([q]), args.rounds, queries),
        "dense channel (HNSW + rescoring)": timed(lambda q: b.dense.search(vecs[q], 100), args.rounds, queries),
        "baseline: dense exact scan": timed(lambda q: b.dense.exact(vecs[q], 100), args.rounds, queries),
    }
    print(f"bundle {b.name}-{b.version}: {len(b):,} documents; {len(queries)} queries x {args.rounds} rounds")
    print(f"{'':<40}{'p50 ms':>9}{'p95 ms':>9}")
    for name, xs in rows.items():
        print(f"{name:<40}{statistics.median(xs):>9.2f}{pct(xs, 95):>9.2f}")
    ratio = statistics.median(rows["baseline: dense exact scan"]) / statistics.median(rows["dense channel (HNSW + rescoring)"])
    print(f"dense channel vs exact scan: {ratio:.1f}x faster (median)")


if __name__ == "__main__":
    main()
