"""Fusion settings of a bundle measured on several query sets at once.

    python scripts/tune_fusion.py SET.jsonl [SET.jsonl ...] [--bundle B] [--k-rrf 5,10,20,60]
                                  [--lexical 0.5,1,2] [--dense 1] [--prior NAME=W1,W2] [--top 15] [--json]

Every combination of RRF ``k``, channel weights and (optionally) one document prior's weight is
run as hybrid search over every set, scored the way ``mathlas eval`` scores (ranked lists restricted
to the sources of each set's targets; ``mathlas.retrieval_eval``). The objective is the mean of
the sets' MRR@20, each set counting once however many queries it has, so that tuning on titles
alone (formal-dev) cannot win by losing the way people ask (formal-qr-dev). Printed: the best
``--top`` settings with each set's MRR@20 and Hit@10, the bundle's own setting (from its manifest)
for comparison, and the bootstrap interval of the best and of the bundle's setting on each set --
prefer the simplest setting whose intervals overlap the best's.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

from mathlas.engine import open_bundle
from mathlas.retrieval_eval import bootstrap_mrr, first_rank, label_prefixes, load_queries, metrics


def floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"not a comma-separated list of numbers: {text!r}") from None


def score(bundle, queries: list[dict], **opts) -> tuple[dict, list]:
    wanted = label_prefixes(queries)
    sources = [s for s in bundle.source_names if s in wanted]
    if not sources:
        raise SystemExit(f"bundle {bundle.label} has none of the sources {', '.join(wanted)}")
    ranks = [first_rank([h.id for h in bundle.search(q["query"], 20, mode="hybrid", sources=sources, **opts)],
                        q["targets"]) for q in queries]
    return metrics(ranks), ranks


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sets", nargs="+", type=Path, help="query sets (JSONL: query, targets)")
    p.add_argument("--bundle", help="bundle (default: the default bundle)")
    p.add_argument("--k-rrf", default="5,10,20,60", help="RRF k values (default 5,10,20,60)")
    p.add_argument("--lexical", default="0.5,0.7,1,1.5,2", help="lexical channel weights")
    p.add_argument("--dense", default="1", help="dense channel weights")
    p.add_argument("--prior", help="NAME=W1,W2,...: weights of one of the bundle's document priors")
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    bundle = open_bundle(args.bundle)
    sets = {path.stem: load_queries(path) for path in args.sets}
    prior_name, prior_values = None, [None]
    if args.prior:
        prior_name, _, values = args.prior.partition("=")
        if prior_name not in bundle.priors:
            raise SystemExit(f"bundle {bundle.label} declares no prior {prior_name!r} "
                             f"(it has: {', '.join(bundle.priors) or 'none'})")
        prior_values = floats(values)
    fusion = bundle.fusion
    own = {"k_rrf": float(fusion["k_rrf"]), "lexical": float(fusion["weights"].get("lexical", 1.0)),
           "dense": float(fusion["weights"].get("dense", 1.0)),
           "prior": bundle.priors[prior_name]["weight"] if prior_name else None}
    grid = [dict(k_rrf=k, lexical=lw, dense=dw, prior=pw) for k, lw, dw, pw in
            itertools.product(floats(args.k_rrf), floats(args.lexical), floats(args.dense), prior_values)]
    if own not in grid:
        grid.append(own)
    rows = []
    t0 = time.perf_counter()
    for i, g in enumerate(grid, 1):
        opts = {"k_rrf": g["k_rrf"], "channel_weights": {"lexical": g["lexical"], "dense": g["dense"]}}
        if prior_name:
            opts["priors"] = {prior_name: g["prior"]}
        per_set = {name: score(bundle, qs, **opts) for name, qs in sets.items()}
        rows.append({**g, "own": g == own, "objective": sum(m["mrr@20"] for m, _ in per_set.values()) / len(per_set),
                     "sets": {name: m for name, (m, _) in per_set.items()},
                     "ranks": {name: r for name, (_, r) in per_set.items()}})
        print(f"[tune] {i}/{len(grid)} {g}: {rows[-1]['objective']:.3f} ({time.perf_counter() - t0:.0f} s)",
              file=sys.stderr, flush=True)
    rows.sort(key=lambda r: -r["objective"])
    best, mine = rows[0], next(r for r in rows if r["own"])
    for r in (best, mine):
        r["ci95"] = {name: [round(x, 3) for x in bootstrap_mrr(ranks)] for name, ranks in r["ranks"].items()}
    if args.json:
        print(json.dumps({"bundle": bundle.label, "rows": [{k: v for k, v in r.items() if k != "ranks"} for r in rows]},
                         indent=2))
        return 0
    names = list(sets)
    print(f"bundle {bundle.label}; sets: " + ", ".join(f"{n} ({len(sets[n])})" for n in names)
          + "; objective = mean MRR@20 over the sets")
    print("| k_rrf | lexical | dense | " + (f"{prior_name} | " if prior_name else "") + "objective | "
          + " | ".join(f"{n} MRR@20 / Hit@10" for n in names) + " |")
    print("|" + "---:|" * (4 + bool(prior_name) + len(names)))
    for r in rows[:args.top] + ([mine] if mine not in rows[:args.top] else []):
        mark = " (bundle's)" if r["own"] else ""
        print(f"| {r['k_rrf']:g}{mark} | {r['lexical']:g} | {r['dense']:g} | "
              + (f"{r['prior']:g} | " if prior_name else "") + f"{r['objective']:.3f} | "
              + " | ".join(f"{r['sets'][n]['mrr@20']:.3f} / {r['sets'][n]['hit@10']:.3f}" for n in names) + " |")
    for label, r in (("best", best), ("bundle's", mine)):
        print(f"{label}: " + ", ".join(f"{n} MRR@20 {r['sets'][n]['mrr@20']:.3f} {r['ci95'][n]}" for n in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
