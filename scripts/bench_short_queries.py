#!/usr/bin/env python3
"""Very short keyword queries (1-2 content words: "Nakayama", "Sylow", "Heine Borel"): lexical vs
dense vs hybrid, with and without the short-query rule of ``mathlas.ranking.query`` (the query repeated
for the dense channel), and hybrid under other channel weights, on the informal bundle.

Each query names a theorem; its targets are the bundle's canonical statements of it (checked to
exist before anything runs). Metrics as ``mathlas eval``: P@1, Hit@10, Hit@20, MRR@20.

    python scripts/bench_short_queries.py [--bundle informal] [--json]
    python scripts/bench_short_queries.py --weights 0.7,1.0 1.5,1.0 3,1   # hybrid under these lexical,dense weights
"""
from __future__ import annotations

import argparse
import json
import sys

import mathlas
import mathlas.ranking.query
from mathlas.retrieval_eval import first_rank, metrics

# (query, targets): any target counts. Stable ids of the informal bundle (docs/papers.md).
QUERIES = [
    ("Nakayama", ["stacks:00DV", "planetmath:NakayamasLemma", "planetmath:EquivalentFormulationOfNakayamasLemma"]),
    ("Sylow", ["planetmath:SylowTheorems"]),
    ("compactness", ["planetmath:Compactness"]),
    ("Hilbert basis", ["planetmath:HilbertBasisTheorem", "stacks:00FN"]),
    ("Zorn", ["planetmath:ZornsLemma", "napkin:set-theory/zorn-lemma:2"]),
    ("Tychonoff", ["planetmath:TychonoffsTheorem"]),
    ("Krull intersection", ["stacks:00IP", "planetmath:KrullIntersectionTheorem"]),
    ("Hensel", ["planetmath:HenselsLemma"]),
    ("Yoneda", ["stacks:001P", "planetmath:YonedaLemma"]),
    ("Baire", ["planetmath:BaireCategoryTheorem"]),
    ("Chinese remainder", ["planetmath:ChineseRemainderTheorem", "stacks:00DT"]),
    ("Lagrange", ["planetmath:LagrangesTheorem"]),
    ("univalence", ["hott:axiom:univalence"]),
    ("Bezout", ["planetmath:BezoutsLemmanumberTheory"]),
    ("Fermat little", ["planetmath:FermatsLittleTheorem"]),
    ("Heine Borel", ["planetmath:HeineBorelTheorem", "hott:classical-Heine-Borel"]),
    ("Jordan Holder", ["planetmath:JordanHolderDecompositionTheorem"]),
    ("Artin-Rees", ["stacks:00IN", "planetmath:ArtinReesTheorem"]),
    ("Cayley-Hamilton", ["planetmath:CayleyHamiltonTheorem", "napkin:linalg/dets:6"]),
    ("Urysohn", ["planetmath:UrysohnsLemma"]),
    ("incompleteness", ["planetmath:GodelsIncompletenessTheorems",
                        "openlogic:incompleteness/incompleteness-provability/first-incompleteness-thm"
                        "#thm:first-incompleteness"]),
    ("Wilson", ["planetmath:WilsonsTheorem"]),
    ("Schroeder Bernstein", ["planetmath:SchroderBernsteinTheorem"]),
    ("Hahn Banach", ["planetmath:HahnBanachTheorem"]),
    # concept names: the definition is the answer (guards against a theorem-only bias)
    ("Zariski topology", ["planetmath:ZariskiTopology", "stacks:00E1"]),
    ("Noetherian ring", ["planetmath:NoetherianRing"]),
    ("Banach space", ["planetmath:BanachSpace"]),
    ("Hausdorff", ["planetmath:HausdorffSpace", "stacks:027C", "napkin:topology/top-more:6"]),
    ("normal subgroup", ["planetmath:NormalSubgroup"]),
    ("prime ideal", ["planetmath:PrimeIdeal", "napkin:H113/ring-flavors:3"]),
    ("free module", ["planetmath:FreeModule"]),
    ("ultrafilter", ["planetmath:Ultrafilter"]),
    ("local ring", ["planetmath:LocalRing", "stacks:07BI"]),
    ("flat module", ["planetmath:FlatModule", "stacks:00HB"]),
    ("tensor product", ["planetmath:TensorProduct", "stacks:065W", "napkin:linalg/dual-trace:1"]),
    ("sheaf", ["planetmath:Sheaf"]),
    ("manifold", ["planetmath:Manifold"]),
    ("matroid", ["planetmath:Matroid"]),
    ("Dedekind domain", ["planetmath:DedekindDomain", "stacks:034W", "napkin:alg-NT/dedekind:4"]),
    ("totient", ["planetmath:Totient"]),
]
K = 20


def run(b, label: str, repeat: int = mathlas.ranking.query.SHORT_QUERY_REPEAT, **kwargs) -> dict:
    saved, mathlas.ranking.query.SHORT_QUERY_REPEAT = mathlas.ranking.query.SHORT_QUERY_REPEAT, repeat
    try:
            ranks = [first_rank([h.id for h in b.search(q, k=K, **kwargs)], targets) for q, targets in QUERIES]
    finally:
        mathlas.ranking.query.SHORT_QUERY_REPEAT = saved
    return {"run": label, **{m: round(v, 3) for m, v in metrics(ranks).items()}, "ranks": ranks}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bundle", default="informal")
    p.add_argument("--weights", nargs="*", default=["0.7,1", "1,1", "1.5,1", "2,1", "3,1", "1,0.5"],
                   metavar="LEX,DENSE", help="hybrid channel weights to compare")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    b = mathlas.open_bundle(args.bundle)
    missing = [t for _, targets in QUERIES for t in targets if t not in set(b.table.column("id").to_pylist())]
    if missing:
        print(f"targets missing from {b.name}-{b.version}: {', '.join(missing)}", file=sys.stderr)
        return 1
    rows = [run(b, "lexical", mode="lexical"), run(b, "dense (no rule)", repeat=1, mode="dense"),
            run(b, "hybrid (no rule)", repeat=1, mode="hybrid"), run(b, "dense", mode="dense"),
            run(b, "hybrid", mode="hybrid")]
    for w in args.weights:
        lex, dense = (float(x) for x in w.split(","))
        rows.append(run(b, f"hybrid (no rule) lex={lex:g} dense={dense:g}", repeat=1,
                        channel_weights={"lexical": lex, "dense": dense}))
    if args.json:
        json.dump({"bundle": f"{b.name}-{b.version}", "n": len(QUERIES), "fusion": b.fusion, "runs": rows},
                  sys.stdout, indent=1)
        print()
        return 0
    print(f"{len(QUERIES)} short queries on {b.name}-{b.version} (fusion defaults {b.fusion})")
    print(f"{'run':<36} {'P@1':>5} {'Hit@10':>7} {'Hit@20':>7} {'MRR@20':>7}")
    for r in rows:
        print(f"{r['run']:<36} {r['p@1']:>5.3f} {r['hit@10']:>7.3f} {r['hit@20']:>7.3f} {r['mrr@20']:>7.3f}")
    print("\nper query ranks: lexical / dense, hybrid without the rule / dense, hybrid with it")
    for i, (q, _) in enumerate(QUERIES):
        print(f"  {q:<22}" + "".join(f" {rows[j]['ranks'][i]!s:>5}" for j in range(5)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
