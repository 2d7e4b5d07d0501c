#!/usr/bin/env python3
"""Formal tools, in process, warm: search_formal_math (hybrid, k=10; with a module filter; with the
PageRank prior) and get_dependencies (uses / used_by, depth 1 and 2) over the formal-dev queries and
their targets. Baseline measured in the same run: the bundle's plain hybrid ``Bundle.search`` (the
tool's overhead is the ratio), and an exact dense scan instead of the binary HNSW. ``pipeline_own_ms``
and ``pipeline_own_cpu_ms``: the ranking pipeline's own share of a hybrid search, as
``scripts/bench_search.py`` measures it (each query through the search and its channels back to back,
round after round; the search less its encoder's, lexical's and dense's time: the difference of the
p50s, and the median of the per-query differences, ``_paired``), in wall-clock and in CPU time.

    python scripts/bench_formal.py [--bundle mathlib] [--queries FILE] [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def stats(ms: list[float]) -> dict:
    a = np.asarray(ms)
    return {"p50_ms": round(float(np.percentile(a, 50)), 2), "p95_ms": round(float(np.percentile(a, 95)), 2), "n": len(a)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bundle", default=os.environ.get("MATHLAS_FORMAL_BUNDLE", "mathlib"))
    ap.add_argument("--queries", default=str(REPO.parent / "shared" / "eval" / "formal-dev.jsonl"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    # the same timing loops as bench_search (scripts/ is on sys.path)
    from bench_search import DENSE, ENCODER, LEXICAL, NEW, REPEATED, interleaved, own_share
    from bench_search import timed as _timed

    def timed(fn, items, rounds):
        return _timed(fn, rounds, items)

    from mathlas.retrieval_eval import load_queries
    from mathlas.ranking.filters import Filters
    from mathlas.formal import open_formal
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas.tools.lean_search import get_dependencies, search_formal_math

    queries = [q["query"] for q in load_queries(args.queries)]
    targets = [t for q in load_queries(args.queries) for t in q["targets"]]
    t0 = time.perf_counter()
    b = open_formal(args.bundle)
    t_open = time.perf_counter() - t0
    for q in queries[:20]:  # warm: BM25 reader, encoder session, HNSW pages, module column
        search_formal_math(q, k=10, bundle=args.bundle)
    search_formal_math("ring", k=10, modules=["Mathlib.RingTheory"], bundle=args.bundle)
    get_dependencies(targets[0], bundle=args.bundle)

    res: dict = {"bundle": f"{b.name}-{b.version}", "documents": len(b), "open_s": round(t_open, 2),
                 "queries": len(queries), "rounds": args.rounds}
    # every timed search encodes its query and counts its words, as a person's new query does (the
    # bundle keeps the last 256 query vectors; a repeated query is timed apart, bundle_search_hybrid_repeated)
    pipeline = pipeline_for(b)
    # (an older mathlas, timed by this script for a comparison, keeps only vectors)
    forget = getattr(pipeline, "forget_queries", pipeline.forget_query_vectors)
    enc = [b.encoder.encode_queries([q])[0] for q in queries]
    vecs = dict(zip(queries, enc))
    rows = {NEW: lambda q: (forget(), b.search(q, k=10)), REPEATED: lambda q: b.search(q, k=10),
            LEXICAL: lambda q: b.lexical.search(q, 100), ENCODER: lambda q: b.encoder.encode_queries([q]),
            DENSE: lambda q: b.dense.search(vecs[q], 100, Filters())}
    wall, cpu = interleaved(rows, args.rounds, queries)
    res["bundle_search_hybrid"] = stats(wall[NEW])
    res["bundle_search_hybrid_repeated"] = stats(wall[REPEATED])
    res["search_formal_math"] = stats(timed(lambda q: (forget(), search_formal_math(q, k=10, bundle=args.bundle)),
                                            queries, args.rounds))
    res["search_formal_math_module_filter"] = stats(timed(
        lambda q: (forget(), search_formal_math(q, k=10, modules=["Mathlib.Algebra", "Mathlib.NumberTheory"],
                                                bundle=args.bundle)),
        queries, args.rounds))
    res["search_formal_math_prior_0.01"] = stats(timed(
        lambda q: (forget(), search_formal_math(q, k=10, prior_weight=0.01, bundle=args.bundle)), queries,
        args.rounds))
    res["lexical"], res["encoder"], res["dense_hnsw"] = stats(wall[LEXICAL]), stats(wall[ENCODER]), stats(wall[DENSE])
    # baseline: exact scan over every int8 vector (what the dense channel does without HNSW)
    res["dense_exact_scan"] = stats(timed(lambda v: b.dense.exact(v, 100), enc, 1))
    res["dense_speedup_vs_exact"] = round(res["dense_exact_scan"]["p50_ms"] / res["dense_hnsw"]["p50_ms"], 1)
    res["tool_overhead_ratio"] = round(res["search_formal_math"]["p50_ms"] / res["bundle_search_hybrid"]["p50_ms"], 2)
    # the ranking pipeline's own share (planning, fusion, stages, hits): the hybrid search less its channels
    res["pipeline_own_ms"] = {k: round(v, 2) for k, v in own_share(wall).items()}
    res["pipeline_own_cpu_ms"] = {k: round(v, 2) for k, v in own_share(cpu).items()}
    res["load_1min"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    for direction in ("uses", "used_by"):
        for depth in (1, 2):
            res[f"get_dependencies_{direction}_d{depth}"] = stats(timed(
                lambda t: get_dependencies(t, direction=direction, depth=depth, bundle=args.bundle), targets, 1))
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(res, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
