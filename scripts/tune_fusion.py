"""Fusion settings of a bundle measured on several query sets at once: RRF against score fusion.

    python scripts/tune_fusion.py SET.jsonl [SET.jsonl ...] [--bundle B] [--unrestricted]
        [--k-rrf 5,10,15,20,30,45,60] [--lexical 0.3,0.5,0.7,1,1.5,2] [--dense 0.5,0.7,1]
        [--calibrations minmax,zscore,logistic] [--alpha 0.1,...,0.9] [--top-n 0,20]
        [--prior NAME=W1,W2] [--folds 5] [--top 15] [--json]

Every setting is run as hybrid search over every set, scored the way ``mathlas eval`` scores (ranked
lists restricted to the sources of each set's targets; ``mathlas.retrieval_eval``;
``--unrestricted`` adds each set again over the whole bundle, as ``mathlas eval --no-restrict``).
Settings: RRF (``mathlas.ranking.fusion.rrf``) over every ``k_rrf`` x lexical x dense weight, and score
fusion (``mathlas.ranking.fusion.convex``) for every calibration x lexical share ``alpha`` (dense
``1 - alpha``) x ``top_n`` (0: the channel's whole list). The ``logistic`` calibration is fitted on
the sets themselves, so it is measured by cross-validation: each query is fused with the fit of
the ``--folds`` - 1 folds it is not in (folds by query text; the fit pools every set).

Each channel's ranking is computed once per query and set (the pipeline's ``channel_rankings``,
remembered) and fused again in memory for every setting (``Pipeline.fuse``); everything after
fusion (the stages: priors, the statement-first rule; the cut) is the pipeline's own
(``mathlas.ranking.pipeline``).

The objective is the mean of the sets' MRR@20, each set counting once however many queries it has.
Printed: the best ``--top`` settings, then for the best setting of each method and for the bundle's
own (from its manifest), each set's MRR@20 with its bootstrap 95% interval and the paired
difference against the bundle's setting with its interval (the same resampled queries for both).
Prefer the bundle's setting unless a difference's interval excludes 0.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import zlib
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from mathlas.engine import open_bundle
from mathlas.errors import UsageError
from mathlas.ranking.fusion import CALIBRATIONS, convex, fit_logistic, rrf
from mathlas.ranking.pipeline import Pipeline
from mathlas.request import SearchRequest
from mathlas.retrieval_eval import (bootstrap_mrr, first_rank, label_prefixes, load_queries, metrics, paired_diff,
                                    reciprocal)

ROUNDS = 1000


def floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"not a comma-separated list of numbers: {text!r}") from None


class Channels:
    """The pipeline's ``channel_rankings``, remembered per set scope and query, for re-fusion."""

    def __init__(self, pipeline) -> None:
        self.search = pipeline.channel_rankings
        self.scope: str = ""
        self.seen: dict[tuple, tuple] = {}

    def __call__(self, plan):
        key = (self.scope, plan.query.text, plan.depth, plan.request.mode, plan.request.pool)
        got = self.seen.get(key)
        if got is None:
            got = self.seen[key] = self.search(plan)
        return got


@contextmanager
def fusing_with(pipeline, fuse):
    """``pipeline`` fusing with ``fuse`` (the signature of ``rrf``) instead of RRF."""
    real = pipeline.fuse
    pipeline.fuse = fuse
    try:
        yield
    finally:
        pipeline.fuse = real


def fuser(g: dict, params: dict | None):
    if g["method"] == "rrf":
        weights = {"lexical": g["lexical"], "dense": g["dense"]}
        return lambda rankings, k, *, k_rrf, channel_weights, key_weights: rrf(
            rankings, k, k_rrf=g["k_rrf"], channel_weights={**channel_weights, **weights}, key_weights=key_weights)
    weights = {"lexical": g["alpha"], "dense": 1 - g["alpha"]}
    return lambda rankings, k, *, k_rrf, channel_weights, key_weights: convex(
        rankings, k, calibration=g["method"], channel_weights={**channel_weights, **weights},
        top_n=int(g["top_n"]) or None, params=params, key_weights=key_weights)


def fold_of(query: str, folds: int) -> int:
    return zlib.crc32(query.encode("utf-8")) % folds


def target_keys(bundle, targets) -> set[int]:
    out = set()
    for t in targets:
        try:
            out.add(bundle.key_of(t))
        except UsageError:
            pass
    return out


def fit_folds(bundle, sets: dict, channels: Channels, folds: int) -> dict[int, dict]:
    """Per fold, each channel's logistic (a, b) fitted on the queries of the other folds."""
    examples: dict[int, dict[str, list]] = {f: {} for f in range(folds)}
    for name, (queries, _sources) in sets.items():
        for q in queries:
            wanted = target_keys(bundle, q["targets"])
            for (scope, text, *_), (rankings, _) in channels.seen.items():
                if scope != name or text != q["query"]:
                    continue
                for c, r in rankings.items():
                    rel = np.isin(r.keys, list(wanted))
                    examples[fold_of(text, folds)].setdefault(c, []).append((r.scores, rel))
    out = {}
    for f in range(folds):
        params = {}
        for c in ("lexical", "dense"):
            train = [ex for g in range(folds) if g != f for ex in examples[g].get(c, [])]
            params[c] = fit_logistic(np.concatenate([s for s, _ in train]), np.concatenate([y for _, y in train]))
        out[f] = params
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sets", nargs="+", type=Path, help="query sets (JSONL: query, targets)")
    p.add_argument("--bundle", help="bundle (default: the default bundle)")
    p.add_argument("--unrestricted", action="store_true",
                   help="also score each set over the whole bundle (as mathlas eval --no-restrict)")
    p.add_argument("--k-rrf", default="5,10,15,20,30,45,60", help="RRF k values")
    p.add_argument("--lexical", default="0.3,0.5,0.7,1,1.5,2", help="RRF lexical channel weights")
    p.add_argument("--dense", default="0.5,0.7,1", help="RRF dense channel weights")
    p.add_argument("--calibrations", default=",".join(CALIBRATIONS),
                   help=f"score-fusion calibrations ({', '.join(CALIBRATIONS)}; empty: RRF only)")
    p.add_argument("--alpha", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9",
                   help="score fusion: the lexical channel's share (dense: 1 - alpha)")
    p.add_argument("--top-n", default="0,20", help="score fusion: calibrate over each list's first N (0: all)")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds of the logistic calibration")
    p.add_argument("--prior", help="NAME=W1,W2,...: weights of one of the bundle's document priors")
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    bundle = open_bundle(args.bundle)
    sets: dict[str, tuple[list[dict], tuple[str, ...]]] = {}
    for path in args.sets:
        queries = load_queries(path)
        wanted = label_prefixes(queries)
        sources = tuple(s for s in bundle.source_names if s in wanted)
        if not sources:
            raise SystemExit(f"bundle {bundle.label} has none of the sources {', '.join(wanted)}")
        sets[path.stem] = (queries, sources)
        if args.unrestricted:
            sets[path.stem + " (all)"] = (queries, ())
    prior_name, prior_values = None, [None]
    if args.prior:
        prior_name, _, values = args.prior.partition("=")
        if prior_name not in bundle.priors:
            raise SystemExit(f"bundle {bundle.label} declares no prior {prior_name!r} "
                             f"(it has: {', '.join(bundle.priors) or 'none'})")
        prior_values = floats(values)
    calibrations = [c for c in args.calibrations.split(",") if c.strip()]
    if set(calibrations) - set(CALIBRATIONS):
        raise SystemExit(f"unknown calibration in {args.calibrations!r}; known: {', '.join(CALIBRATIONS)}")
    fusion = bundle.fusion
    own = {"method": fusion.get("method", "rrf"), "k_rrf": float(fusion["k_rrf"]),
           "lexical": float(fusion["weights"].get("lexical", 1.0)), "dense": float(fusion["weights"].get("dense", 1.0)),
           "alpha": None, "top_n": None, "prior": bundle.priors[prior_name]["weight"] if prior_name else None}
    if own["method"] != "rrf":
        raise SystemExit(f"bundle {bundle.label} fuses by {own['method']}; this script compares against RRF")
    grid = [dict(method="rrf", k_rrf=k, lexical=lw, dense=dw, alpha=None, top_n=None, prior=pw) for k, lw, dw, pw in
            itertools.product(floats(args.k_rrf), floats(args.lexical), floats(args.dense), prior_values)]
    if own not in grid:
        grid.insert(0, own)
    grid += [dict(method=c, k_rrf=None, lexical=None, dense=None, alpha=a, top_n=n, prior=pw) for c, a, n, pw in
             itertools.product(calibrations, floats(args.alpha), floats(args.top_n), prior_values)]
    pipeline = Pipeline(bundle)
    channels = Channels(pipeline)
    pipeline.channel_rankings = channels  # the instance's own: every setting re-fuses the same rankings
    folds = None
    rows = []
    t0 = time.perf_counter()
    for i, g in enumerate(grid, 1):
        if g["method"] == "logistic" and folds is None:
            folds = fit_folds(bundle, sets, channels, args.folds)
            print(f"[tune] logistic fits per fold (a, b): {folds}", file=sys.stderr, flush=True)
        opts = {"priors": {prior_name: g["prior"]}} if prior_name else {}
        per_set = {}
        for name, (queries, sources) in sets.items():
            channels.scope = name
            ranks = []
            for q in queries:
                params = folds[fold_of(q["query"], args.folds)] if g["method"] == "logistic" else None
                with fusing_with(pipeline, fuser(g, params)):
                    hits = pipeline.rank(SearchRequest.make(q["query"], 20, mode="hybrid", sources=sources,
                                                            **opts)).hits
                ranks.append(first_rank([h.id for h in hits], q["targets"]))
            per_set[name] = (metrics(ranks), ranks)
        rows.append({**g, "own": g == own, "objective": sum(m["mrr@20"] for m, _ in per_set.values()) / len(per_set),
                     "sets": {name: m for name, (m, _) in per_set.items()},
                     "ranks": {name: r for name, (_, r) in per_set.items()}})
        print(f"[tune] {i}/{len(grid)} {describe(g)}: {rows[-1]['objective']:.3f} ({time.perf_counter() - t0:.0f} s)",
              file=sys.stderr, flush=True)
    mine = next(r for r in rows if r["own"])
    rows.sort(key=lambda r: -r["objective"])
    shown = [rows[0]] + [next(r for r in rows if r["method"] == m) for m in ["rrf", *calibrations]] + [mine]
    shown = [r for i, r in enumerate(shown) if all(r is not s for s in shown[:i])]
    for r in shown:
        r["ci95"] = {n: [round(x, 3) for x in bootstrap_mrr(ranks, ROUNDS)] for n, ranks in r["ranks"].items()}
        r["vs_bundle"] = {n: [round(x, 3) for x in paired_diff(ranks, mine["ranks"][n], ROUNDS)] for n, ranks in r["ranks"].items()}
    tuned = {m: tuned_by_cv(rows, m, sets, args.folds) for m in ["rrf", *calibrations]}
    for t in tuned.values():
        t["ci95"] = {n: [round(x, 3) for x in bootstrap_mrr(ranks, ROUNDS)] for n, ranks in t["ranks"].items()}
        t["vs_bundle"] = {n: [round(x, 3) for x in paired_diff(ranks, mine["ranks"][n], ROUNDS)] for n, ranks in t["ranks"].items()}
    if args.json:
        print(json.dumps({"bundle": bundle.label, "sets": {n: len(q) for n, (q, _) in sets.items()},
                          "tuned_by_cv": {m: {k: v for k, v in t.items() if k != "ranks"} for m, t in tuned.items()},
                          "rows": [{k: v for k, v in r.items() if k != "ranks"} for r in rows]}, indent=2))
        return 0
    names = list(sets)
    print(f"bundle {bundle.label}; sets: " + ", ".join(f"{n} ({len(sets[n][0])})" for n in names)
          + "; objective = mean MRR@20 over the sets")
    print("| setting | objective | " + " | ".join(f"{n} MRR@20 / Hit@10" for n in names) + " |")
    print("|---|" + "---:|" * (1 + len(names)))
    for r in rows[:args.top] + [r for r in shown if r not in rows[:args.top]]:
        print(f"| {describe(r)}{' (bundle' + chr(39) + 's)' if r['own'] else ''} | {r['objective']:.3f} | "
              + " | ".join(f"{r['sets'][n]['mrr@20']:.3f} / {r['sets'][n]['hit@10']:.3f}" for n in names) + " |")
    print()
    print("| setting | " + " | ".join(f"{n}: MRR@20 [95%] ; minus bundle's [95%]" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for r in shown:
        print(f"| {describe(r)}{' (bundle' + chr(39) + 's)' if r['own'] else ''} | " + " | ".join(
            f"{r['sets'][n]['mrr@20']:.3f} [{r['ci95'][n][0]:.3f}, {r['ci95'][n][1]:.3f}] ; "
            f"{r['vs_bundle'][n][0]:+.3f} [{r['vs_bundle'][n][1]:+.3f}, {r['vs_bundle'][n][2]:+.3f}]" for n in names) + " |")
    print()
    print(f"Each method tuned by {args.folds}-fold cross-validation (each fold's queries ranked by the setting "
          "best on the other folds; the best-of-grid figures above are optimistic by the choice):")
    print("| method | " + " | ".join(f"{n}: MRR@20 [95%] ; minus bundle's [95%]" for n in names) + " | settings chosen |")
    print("|---|" + "---|" * (len(names) + 1))
    for m, t in tuned.items():
        print(f"| {m} | " + " | ".join(
            f"{t['sets'][n]['mrr@20']:.3f} [{t['ci95'][n][0]:.3f}, {t['ci95'][n][1]:.3f}] ; "
            f"{t['vs_bundle'][n][0]:+.3f} [{t['vs_bundle'][n][1]:+.3f}, {t['vs_bundle'][n][2]:+.3f}]" for n in names)
              + " | " + "; ".join(t["chosen"]) + " |")
    return 0


def tuned_by_cv(rows: list[dict], method: str, sets: dict, folds: int) -> dict:
    """``method``'s grid tuned without seeing the queries it is scored on: each fold's queries take
    the ranks of the setting with the best objective on the other folds."""
    family = [r for r in rows if r["method"] == method]
    fold = {n: np.array([fold_of(q["query"], folds) for q in queries]) for n, (queries, _) in sets.items()}
    rr = [{n: reciprocal(r["ranks"][n]) for n in sets} for r in family]
    ranks = {n: [None] * len(queries) for n, (queries, _) in sets.items()}
    chosen = []
    for f in range(folds):
        objective = [np.mean([x[n][fold[n] != f].mean() for n in sets]) for x in rr]
        best = family[int(np.argmax(objective))]
        chosen.append(describe(best))
        for n in sets:
            for i in np.flatnonzero(fold[n] == f):
                ranks[n][i] = best["ranks"][n][i]
    return {"sets": {n: metrics(r) for n, r in ranks.items()}, "ranks": ranks, "chosen": chosen}


def describe(g: dict) -> str:
    if g["method"] == "rrf":
        text = f"rrf k {g['k_rrf']:g}, lexical {g['lexical']:g} / dense {g['dense']:g}"
    else:
        text = (f"{g['method']} lexical {g['alpha']:g} / dense {1 - g['alpha']:g}"
                + (f", top {g['top_n']:g}" if g["top_n"] else ""))
    return text + (f", prior {g['prior']:g}" if g.get("prior") is not None else "")


if __name__ == "__main__":
    sys.exit(main())
