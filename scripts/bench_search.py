#!/usr/bin/env python3
"""Search latency, in process, warm: p50/p95 over the dev queries for hybrid k=10, a new query (the
query encoded: what a person's search costs) and a repeated one (its vector kept by the bundle), with
the lexical channel, the query encoder and the dense channel shown separately, and the pipeline's own
share beside them (the hybrid search less its channels: planning, fusion, stages, hits). Baseline
measured in the same run: the dense channel as an exact scan over every stored vector (no HNSW).

Every round times each query through every row back to back (not one row after another), so a
machine whose load changes during the run loads every row alike; the pipeline's own share is given
twice: p50(hybrid) - p50(encoder) - p50(lexical) - p50(dense), and the median over (round, query)
of the same difference measured on that query in that round. Each row is timed in wall-clock time
and in the CPU time of the thread that ran it: on a loaded machine a step longer than the
scheduler's time slice waits for the CPU, so wall-clock time grows with the load and CPU time much
less (the p50 columns say which).

``--steps`` prints instead where the pipeline's own share goes: the median CPU time of each of its
steps on a repeated query (request and plan, fusion, each stage, the hits and their ``also_in``),
run one by one as ``Pipeline.rank`` runs them.

    python scripts/bench_search.py [--bundle B] [--queries FILE] [--rounds 5] [--json] [--steps]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import mathlas
from mathlas.ranking.filters import Filters
from mathlas.ranking.pipeline import make_hits, pipeline_for
from mathlas.retrieval_eval import load_queries

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


def interleaved(rows: dict, rounds: int, items) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each row's wall-clock and CPU times (ms), every item through every row back to back, round after round."""
    wall: dict[str, list[float]] = {name: [] for name in rows}
    cpu: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(rounds):
        for it in items:
            for name, fn in rows.items():
                c0, t0 = time.thread_time(), time.perf_counter()
                fn(it)
                wall[name].append((time.perf_counter() - t0) * 1000)
                cpu[name].append((time.thread_time() - c0) * 1000)
    return wall, cpu


def own_share(times: dict[str, list[float]]) -> dict[str, float]:
    """The pipeline's own share: p50 of the search less the p50s of its channels, and the median of
    that difference measured per query and round (paired)."""
    p50 = {name: statistics.median(xs) for name, xs in times.items()}
    return {"new": p50[NEW] - p50[ENCODER] - p50[LEXICAL] - p50[DENSE],
            "repeated": p50[REPEATED] - p50[LEXICAL] - p50[DENSE],
            "new_paired": statistics.median(n - e - lx - d for n, e, lx, d in
                                            zip(times[NEW], times[ENCODER], times[LEXICAL], times[DENSE])),
            "repeated_paired": statistics.median(r - lx - d for r, lx, d in
                                                 zip(times[REPEATED], times[LEXICAL], times[DENSE]))}


def steps(b, queries, rounds: int, k: int) -> dict[str, float]:
    """Median CPU time (ms) of each step of the pipeline on a repeated query, each step timed alone
    as ``Pipeline.rank`` runs it (the channels too, for scale)."""
    from mathlas.ranking.collapse import with_also_in
    from mathlas.ranking.stages import StageContext
    from mathlas.request import SearchRequest

    pipeline = pipeline_for(b)
    times: dict[str, list[float]] = {}

    def lap(name: str, t0: float) -> float:
        t = time.thread_time()
        times.setdefault(name, []).append((t - t0) * 1000)
        return t

    for _ in range(rounds):
        for q in queries:
            t = start = time.thread_time()
            req = SearchRequest.make(q, k)
            plan = pipeline.plan(req)
            t = lap("request and plan", t)
            own, rankings = pipeline.channel_rankings(plan)
            t = lap("channels (not the pipeline's)", t)
            pool = pipeline.fuse(rankings, plan.depth, k_rrf=plan.k_rrf, channel_weights=plan.channel_weights,
                                 key_weights=plan.key_weights)
            if len(rankings) == 1 and len(pool):
                pool = pool.rescored(pool.raw[:, 0])
            t = lap("fusion", t)
            ctx = StageContext(b, plan)
            for stage in pipeline.stages:
                pool = stage(pool, ctx)
                t = lap(f"stage {stage.name}", t)
            top = pool.head(plan.top)
            hits = make_hits(b, top, (), plan.extra)
            t = lap("hits", t)
            with_also_in(b, hits, top.keys.tolist())
            t = lap("also_in", t)
            times.setdefault("the pipeline's own, in all", []).append(
                (t - start) * 1000 - times["channels (not the pipeline's)"][-1])
    return {name: statistics.median(xs) for name, xs in times.items()}


NEW, REPEATED = "hybrid k=10, new query (end to end)", "hybrid k=10, repeated query"
LEXICAL, ENCODER, DENSE = "lexical channel (BM25)", "query encoder (ONNX)", "dense channel (HNSW + rescoring)"
EXACT = "baseline: dense exact scan"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle")
    ap.add_argument("--queries", default=str(REPO.parent / "shared" / "eval" / "informal-dev.jsonl"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--steps", action="store_true", help="where the pipeline's own share goes, step by step")
    args = ap.parse_args()
    queries = [q["query"] for q in load_queries(args.queries)]
    b = mathlas.open_bundle(args.bundle)
    pipeline = pipeline_for(b)
    for q in queries:  # warm: load everything, touch the pages
        b.search(q, k=args.k)
    if args.steps:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        got = steps(b, queries, args.rounds, args.k)
        if args.json:
            print(json.dumps({"bundle": b.label, "queries": len(queries), "rounds": args.rounds, "load_1min": load,
                              "cpu_p50_ms": {k: round(v, 3) for k, v in got.items()}}, indent=2))
            return
        print(f"bundle {b.label}: {len(queries)} repeated queries x {args.rounds} rounds, CPU ms per search (median)"
              + (f"; load average {load:.2f}" if load is not None else ""))
        for name, ms in got.items():
            print(f"{name:<46}{ms:>9.3f}")
        return
    vecs = {q: b.encoder.encode_queries([q])[0] for q in queries}
    # (an older mathlas, timed by this script for a comparison, keeps only vectors)
    forget = getattr(pipeline, "forget_queries", pipeline.forget_query_vectors)
    rows = {
        # what a person's new query costs: neither its vector nor its words' counts are kept from an earlier call
        NEW: lambda q: (forget(), b.search(q, k=args.k)),
        # the same query again (a page of results, a TheoremSearch answer): the vector is kept
        REPEATED: lambda q: b.search(q, k=args.k),
        LEXICAL: lambda q: b.lexical.search(q, 100, Filters()),
        ENCODER: lambda q: b.encoder.encode_queries([q]),
        DENSE: lambda q: b.dense.search(vecs[q], 100),
    }
    times, cpu = interleaved(rows, args.rounds, queries)
    times[EXACT] = timed(lambda q: b.dense.exact(vecs[q], 100), max(1, args.rounds // 2), queries)
    p50 = {name: statistics.median(xs) for name, xs in times.items()}
    cpu50 = {name: statistics.median(xs) for name, xs in cpu.items()}
    own, own_cpu = own_share(times), own_share(cpu)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if args.json:
        print(json.dumps({"bundle": b.label, "documents": len(b), "queries": len(queries), "rounds": args.rounds,
                          "load_1min": load, "p50_ms": {k: round(v, 3) for k, v in p50.items()},
                          "p95_ms": {k: round(pct(v, 95), 3) for k, v in times.items()},
                          "cpu_p50_ms": {k: round(v, 3) for k, v in cpu50.items()},
                          "pipeline_own_ms": {k: round(v, 3) for k, v in own.items()},
                          "pipeline_own_cpu_ms": {k: round(v, 3) for k, v in own_cpu.items()}}, indent=2))
        return
    print(f"bundle {b.label}: {len(b):,} documents; {len(queries)} queries x {args.rounds} rounds"
          + (f"; load average {load:.2f} at the end" if load is not None else ""))
    print(f"{'':<46}{'p50 ms':>9}{'p95 ms':>9}{'CPU p50':>9}")
    for name, xs in times.items():
        print(f"{name:<46}{p50[name]:>9.2f}{pct(xs, 95):>9.2f}" + (f"{cpu50[name]:>9.2f}" if name in cpu50 else ""))
    for label, key in (("new query (hybrid - channels)", "new"), ("repeated (hybrid - lex - dense)", "repeated")):
        print(f"{'pipeline own, ' + label:<46}{own[key]:>9.2f}{'':>9}{own_cpu[key]:>9.2f}   paired medians "
              f"{own[key + '_paired']:.2f} / CPU {own_cpu[key + '_paired']:.2f}")
    ratio = p50[EXACT] / p50[DENSE]
    print(f"dense channel vs exact scan: {ratio:.1f}x faster (median)")


if __name__ == "__main__":
    main()
