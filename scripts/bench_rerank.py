#!/usr/bin/env python3
"""The reranker of a bundle that carries one: dev-set quality and warm hybrid latency, with and
without reranking, measured in one run (issue 12 part 4; docs/training.md, "Reranker").

Quality: ``mathlas eval``'s protocol (``retrieval_eval.evaluate``: restricted to the sources of the
targets, deduplicated, k=20), hybrid mode, without reranking and with it at each ``--top-n``: P@1,
Hit@10, MRR@20 with its bootstrap 95% interval, and a paired bootstrap interval of the MRR@20
change (the same queries with and without, resampled together).

Latency: hybrid k=10 end to end, warm, p50 / p95 over queries x rounds; the configurations take
turns query by query, so a busy machine slows them alike; each is also given as a ratio to no
reranking measured in the same run. "reranker alone" is the scoring of the top_n documents
(tokenising included). The script sets ``top_n`` on its own unshared ``Bundle``.

Issue 12's rule: on by default only if dev MRR@20 rises by >= 0.03 and warm hybrid p50 stays <= 25 ms.

    python scripts/bench_rerank.py --bundle DIR [--queries FILE] [--top-n 30 50] [--rounds 3] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path

import mathlas
from mathlas.bundle import RERANKER_DIR
from mathlas.errors import UsageError
from mathlas.retrieval_eval import evaluate, load_queries

REPO = Path(__file__).resolve().parents[1]
MRR_GAIN, P50_MS = 0.03, 25.0  # the rule for "on by default"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def paired_mrr_change(base: list, other: list, rounds: int = 1000, seed: int = 0) -> tuple[float, float, float]:
    """Mean change of reciprocal rank at 20 over the queries, and its paired bootstrap 95% interval."""
    rr = [1 / r if r is not None and r <= 20 else 0.0 for r in base]
    ro = [1 / r if r is not None and r <= 20 else 0.0 for r in other]
    d = [b - a for a, b in zip(rr, ro)]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(d) for _ in d) / len(d) for _ in range(rounds))
    return sum(d) / len(d), means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", required=True, help="a bundle with a reranker (mathlas-build add-reranker)")
    ap.add_argument("--queries", default=str(REPO.parent / "shared" / "eval" / "informal-dev.jsonl"))
    ap.add_argument("--top-n", type=int, nargs="+", default=[30, 50])
    ap.add_argument("--rounds", type=int, default=3, help="latency rounds (0: quality only)")
    ap.add_argument("--no-quality", action="store_true", help="latency only")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    queries = load_queries(args.queries)
    b = mathlas.open_bundle(args.bundle, shared=False)
    if not b.manifest.reranker:
        raise UsageError(f"bundle {b.label} has no reranker (mathlas-build add-reranker BUNDLE_DIR RERANKER_DIR)")
    meta = b.reranker.config
    out: dict = {"bundle": b.label, "documents": len(b), "queries": len(queries), "rounds": args.rounds,
                 "reranker": {"name": meta.name, "layers": meta.extra.get("layers"), "max_tokens": meta.max_tokens,
                              "bytes": (b.root / RERANKER_DIR / meta.model_file).stat().st_size},
                 "load_before": os.getloadavg()[0]}
    configs = [("no rerank", 0)] + [(f"rerank top {n}", n) for n in args.top_n]

    def search(q: str, n: int, k: int, **kw):
        if n:
            b.manifest.reranker["top_n"] = n
        return b.search(q, k=k, rerank=bool(n), **kw)

    if not args.no_quality:
        quality, ranks = {}, {}
        for name, n in configs:
            if n:
                b.manifest.reranker["top_n"] = n
            res = evaluate(b, queries, k=20, modes=("hybrid",), rerank=bool(n))
            quality[name] = {m: res["hybrid"][m] for m in ("p@1", "hit@10", "mrr@20", "mrr@20_ci95")}
            ranks[name] = [row["hybrid"] for row in res["per_query"]]
        for name, _ in configs[1:]:
            mean, lo, hi = paired_mrr_change(ranks["no rerank"], ranks[name])
            quality[name]["mrr@20_change"] = [round(mean, 4), round(lo, 4), round(hi, 4)]
        out["quality"] = quality

    if args.rounds > 0:
        out.update(latency(b, queries, configs, args.top_n, args.rounds, search))
    out["load_after"] = os.getloadavg()[0]
    out["on_by_default"] = {name: bool(out.get("quality") and out.get("latency_ms")
                                       and out["quality"][name]["mrr@20_change"][0] >= MRR_GAIN
                                       and out["latency_ms"][name]["p50"] <= P50_MS) for name, _ in configs[1:]}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    report(out, len(queries), args.rounds)


def latency(b, queries: list[dict], configs: list[tuple[str, int]], top_ns: list[int], rounds: int, search) -> dict:
    """Warm p50 / p95 of each configuration (taking turns query by query) and of the reranker alone."""
    texts = {}
    for q in queries:  # warm every path; the documents the reranker alone scores
        for _, n in configs:
            search(q["query"], n, 10)
        top = b.search(q["query"], k=max(top_ns), rerank=False)
        texts[q["query"]] = [b.get(h.id).text for h in top]
    times: dict[str, list[float]] = {name: [] for name, _ in configs}
    alone: dict[int, list[float]] = {n: [] for n in top_ns}
    for _ in range(rounds):
        for q in queries:
            for name, n in configs:
                t0 = time.perf_counter()
                search(q["query"], n, 10)
                times[name].append((time.perf_counter() - t0) * 1000)
            for n in top_ns:
                t0 = time.perf_counter()
                b.reranker.score(q["query"], texts[q["query"]][:n])
                alone[n].append((time.perf_counter() - t0) * 1000)
    base = statistics.median(times["no rerank"])
    return {"latency_ms": {name: {"p50": round(statistics.median(xs), 2), "p95": round(pct(xs, 95), 2),
                                  "p50_ratio": round(statistics.median(xs) / base, 2)} for name, xs in times.items()},
            "reranker_alone_ms": {f"top {n}": {"p50": round(statistics.median(xs), 2), "p95": round(pct(xs, 95), 2)}
                                  for n, xs in alone.items()}}


def report(out: dict, queries: int, rounds: int) -> None:
    r = out["reranker"]
    print(f"bundle {out['bundle']}: {out['documents']:,} documents; reranker {r['name']} ({r['layers']} layers, "
          f"{r['max_tokens']} tokens, {r['bytes'] / 1e6:.1f} MB); {queries} queries x {rounds} rounds; "
          f"load average {out['load_before']:.1f} -> {out['load_after']:.1f}")
    if "quality" in out:
        print(f"\n{'hybrid, k=20':<18}{'P@1':>7}{'Hit@10':>8}{'MRR@20':>8}   95% CI        change (paired 95% CI)")
        for name, m in out["quality"].items():
            lo, hi = m["mrr@20_ci95"]
            change = m.get("mrr@20_change")
            tail = f"   {change[0]:+.3f} [{change[1]:+.3f}, {change[2]:+.3f}]" if change else ""
            print(f"{name:<18}{m['p@1']:>7.3f}{m['hit@10']:>8.3f}{m['mrr@20']:>8.3f}   [{lo:.3f}, {hi:.3f}]{tail}")
    if "latency_ms" in out:
        print(f"\n{'hybrid k=10, warm':<18}{'p50 ms':>9}{'p95 ms':>9}{'p50 x':>8}")
        for name, m in out["latency_ms"].items():
            print(f"{name:<18}{m['p50']:>9.1f}{m['p95']:>9.1f}{m['p50_ratio']:>8.2f}")
        for name, m in out["reranker_alone_ms"].items():
            print(f"{'reranker alone ' + name.split()[-1]:<18}{m['p50']:>9.1f}{m['p95']:>9.1f}")
    verdict = ", ".join(f"{k}: {'on' if v else 'off'}" for k, v in out["on_by_default"].items())
    print(f"\non by default (MRR@20 +{MRR_GAIN} and p50 <= {P50_MS:g} ms): {verdict}")


if __name__ == "__main__":
    main()
