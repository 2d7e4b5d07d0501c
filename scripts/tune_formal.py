"""The formal bundle's lexical fields and definition-intent rule, measured on the formal dev sets.

    python scripts/tune_formal.py [--bundle mathlib] [--sets formal-dev.jsonl,formal-qr-dev.jsonl]
        [--alias 0,0.5,1,2] [--context 0,0.25,0.5,1] [--gloss 0,0.25,0.5] [--factor 1,1.25,1.5,2] [--prior-factor 1,3]
        [--json OUT]

Issue 22 gave Lean declarations three more BM25 fields: ``alias`` (the names the project's lists and
Stacks tags give a declaration), ``context`` (a def's value, a structure's fields, binders and
notation as words) and ``gloss`` (the definitions a statement mentions, with their docstrings' first
sentences), and a definition-intent rule (a query that
reads as a noun phrase weighs definitions, structures and classes up; mathlas.ranking.intent). This script
measures them on the bundle as built, without rebuilding: stage 1 varies the two fields' boosts with
the rule off, stage 2 the rule's factors with the best boosts of stage 1 (objective: the mean of the
sets' hybrid MRR@20). The first row is the bundle before the issue: the text field alone, no English
words for a query's notation, the rule off (the embedded text did not change, so the dense channel
is the same). Printed per setting: each set's P@1 / Hit@10 / MRR@20, then
for the baseline and the best setting each set's per-style figures with bootstrap intervals and the
paired difference (the same resampled queries for both). Scored as ``mathlas eval`` scores
(restricted to the sources of the targets: the formal bundle has one).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

import mathlas.ranking.query as ranking_query
from mathlas.engine import open_bundle
from mathlas.retrieval_eval import bootstrap_mrr, first_rank, load_queries, metrics

SHARED_EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"
DEFINITION_KINDS = ["def", "abbrev", "structure", "class", "inductive"]


def floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def run(bundle, queries: list[dict], boosts: dict, intent: dict | None, english: bool = True) -> list[int | None]:
    bundle.lexical.boosts = {f: w for f, w in boosts.items() if w}
    bundle.lexical.notation_english = english
    fusion = bundle.manifest.fusion
    if intent is None:
        fusion.pop("definition_intent", None)
    else:
        fusion["definition_intent"] = intent
    ranks = []
    for q in queries:
        hits = bundle.search(q["query"], k=20, mode="hybrid")
        ranks.append(first_rank([h.id for h in hits], q["targets"]))
    return ranks


def mrr(ranks) -> float:
    return metrics(ranks)["mrr@20"]


def paired(a, b, rounds=1000, seed=0):
    ra = np.array([1 / r if r and r <= 20 else 0.0 for r in a])
    rb = np.array([1 / r if r and r <= 20 else 0.0 for r in b])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(ra), size=(rounds, len(ra)))
    d = np.sort((ra[idx] - rb[idx]).mean(axis=1))
    return float(ra.mean() - rb.mean()), float(d[int(0.025 * rounds)]), float(d[int(0.975 * rounds) - 1])


def line(label: str, per_set: dict) -> str:
    cells = []
    for name, ranks in per_set.items():
        m = metrics(ranks)
        cells.append(f"{name} {m['p@1']:.3f}/{m['hit@10']:.3f}/{m['mrr@20']:.3f}")
    return f"{label:<44} " + "   ".join(cells)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", default="mathlib")
    ap.add_argument("--sets", default="formal-dev.jsonl,formal-qr-dev.jsonl")
    ap.add_argument("--alias", default="0,0.5,1,2")
    ap.add_argument("--context", default="0,0.25,0.5,1")
    ap.add_argument("--gloss", default="0,0.25,0.5")
    ap.add_argument("--factor", default="1.25,1.5,2,3")
    ap.add_argument("--prior-factor", default="1,3,10")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    ranking_query.QUERY_VECTORS_KEPT = 10_000  # every query encoded once for the whole grid
    b = open_bundle(args.bundle)
    if "alias" not in (b.manifest.lexical.get("boosts") or {}):
        print(f"bundle {b.label} was built without the alias and context fields: rebuild it with "
              "`mathlas index build-lean`", file=sys.stderr)
        return 2
    sets = {}
    for name in args.sets.split(","):
        path = Path(name) if Path(name).exists() else SHARED_EVAL / name
        sets[path.stem] = load_queries(path)
    text = float(b.lexical.boosts.get("text", 1.0))
    out: dict = {"bundle": b.label, "stage1": [], "stage2": []}
    t0 = time.time()
    results: dict[tuple, dict] = {}
    # before the issue: no alias or context field, no English words for a query's notation, no rule
    base_key = ("before",)
    results[base_key] = {n: run(b, qs, {"text": text}, None, english=False) for n, qs in sets.items()}
    print(line("before (text field only)", results[base_key]), flush=True)
    for a, c, g in itertools.product(floats(args.alias), floats(args.context), floats(args.gloss)):
        per = {n: run(b, qs, {"text": text, "alias": a, "context": c, "gloss": g}, None) for n, qs in sets.items()}
        results[("boosts", a, c, g)] = per
        print(line(f"alias {a:g} context {c:g} gloss {g:g} (no intent)", per), flush=True)
        out["stage1"].append({"alias": a, "context": c, "gloss": g, **{n: metrics(r) for n, r in per.items()}})
    best = max((k for k in results if k[0] == "boosts"),
               key=lambda k: np.mean([mrr(r) for r in results[k].values()]))
    _, a, c, g = best
    print(f"stage 1 best: alias {a:g} context {c:g} gloss {g:g} ({time.time() - t0:.0f} s)", flush=True)
    for f, p in itertools.product(floats(args.factor), floats(args.prior_factor)):
        intent = {"kinds": DEFINITION_KINDS, "factor": f, "prior_factor": p}
        per = {n: run(b, qs, {"text": text, "alias": a, "context": c, "gloss": g}, intent) for n, qs in sets.items()}
        results[("intent", f, p)] = per
        print(line(f"  + intent factor {f:g} prior x{p:g}", per), flush=True)
        out["stage2"].append({"factor": f, "prior_factor": p, **{n: metrics(r) for n, r in per.items()}})
    final = max(results, key=lambda k: np.mean([mrr(r) for r in results[k].values()]))
    print(f"best overall: {final}", flush=True)
    for label, key in (("before (text field only)", base_key), (f"best {final}", final)):
        print(f"\n{label}")
        for n, ranks in results[key].items():
            lo, hi = bootstrap_mrr(ranks)
            m = metrics(ranks)
            print(f"  {n}: P@1 {m['p@1']:.3f} Hit@10 {m['hit@10']:.3f} MRR@20 {m['mrr@20']:.3f} [{lo:.2f}, {hi:.2f}]")
            styles: dict[str, list] = {}
            for q, r in zip(sets[n], ranks):
                styles.setdefault(q.get("style", "?"), []).append(r)
            for s, rs in sorted(styles.items()):
                ms = metrics(rs)
                print(f"    {s} (n={len(rs)}): P@1 {ms['p@1']:.3f} Hit@10 {ms['hit@10']:.3f} MRR@20 {ms['mrr@20']:.3f}")
    print("\npaired MRR@20 difference, best - before [95% interval]:")
    for n in sets:
        d, lo, hi = paired(results[final][n], results[base_key][n])
        print(f"  {n}: {d:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    out["best"] = list(final)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
