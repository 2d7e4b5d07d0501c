"""Do `@[to_additive]` declarations answer a query in their own notation? (docs/formal.md, "What is indexed")

Draws ``--n`` additive twins (``generated`` = ``to_additive``) at random (``--seed``) from the ``--new``
formal bundle, keeps those under the same id in the ``--old`` one whose statement (the type after the
signature's top-level ``:``) has ``+``, ``-``, ``∑`` or ``•`` and ``=`` and is 8–80
characters long, asks that conclusion as typed (``c + (a ⊔ b) = c + a ⊔ c + b``) through
``mathlas.service.lean_search`` of each bundle, and reports the twin's first place, top ten and
MRR@20 in each, with the paired 95% bootstrap interval of the differences.

    python scripts/bench_additive.py --old OLD_BUNDLE --new NEW_BUNDLE [--n 150] [--seed 0] [--json rows.json]
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "build"))


def conclusion(signature: str) -> str:
    """What a signature states: the type after its top-level colon (``lean_generated.header_parts``)."""
    from mathlas_build.sources.lean_generated import header_parts

    return header_parts(signature)[2]


def paired(diffs: list[float], seed: int = 0, rounds: int = 2000) -> tuple[float, float, float]:
    rng, n = random.Random(seed), len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    return sum(diffs) / n, means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", required=True, help="the formal bundle before (a name or a directory)")
    ap.add_argument("--new", required=True, help="the formal bundle after")
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write every query's ranks here")
    a = ap.parse_args(argv)

    from mathlas.formal import open_formal
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    old, new = open_formal(a.old), open_formal(a.new)
    if "generated" not in new.table.column_names:
        print(f"bench_additive: {new.label} records no generated declarations; build it with mathlas-build",
              file=sys.stderr)
        return 2
    ids = new.table.column("id").to_pylist()
    generated = new.table.column("generated").to_pylist()
    signature = new.table.column("signature").to_pylist()
    before = set(old.table.column("id").to_pylist())
    drawn = [i for i, g in enumerate(generated) if g == "to_additive" and ids[i] in before]
    random.Random(a.seed).shuffle(drawn)
    picked = []
    for i in drawn:
        c = conclusion(signature[i] or "")
        if any(x in c for x in "+-∑•") and "=" in c and 8 <= len(c) <= 80:
            picked.append((ids[i], c))
        if len(picked) >= a.n:
            break

    def rank(b, query: str, target: str) -> int | None:
        hits = [h.id for h in lean_search(LeanSearchRequest.make(query, k=20), b).hits]
        return hits.index(target) + 1 if target in hits else None

    rows = [{"id": t, "query": q, "old": rank(old, q, t), "new": rank(new, q, t)} for t, q in picked]
    rr = lambda r: 1 / r if r else 0.0  # noqa: E731
    top10 = lambda r: float(r is not None and r <= 10)  # noqa: E731
    for which, b in (("old", old), ("new", new)):
        ranks = [x[which] for x in rows]
        print(f"{which} {b.label}: first {sum(r == 1 for r in ranks)}/{len(rows)}, top ten "
              f"{sum(top10(r) for r in ranks):.0f}/{len(rows)}, MRR@20 {sum(map(rr, ranks)) / len(rows):.3f}")
    d_mrr = paired([rr(x["new"]) - rr(x["old"]) for x in rows])
    d_hit = paired([top10(x["new"]) - top10(x["old"]) for x in rows])
    print(f"new - old, paired 95%: MRR@20 {d_mrr[0]:+.3f} [{d_mrr[1]:+.3f}, {d_mrr[2]:+.3f}], "
          f"Hit@10 {d_hit[0]:+.3f} [{d_hit[1]:+.3f}, {d_hit[2]:+.3f}]; "
          f"{sum(rr(x['new']) > rr(x['old']) for x in rows)} better, {sum(rr(x['new']) < rr(x['old']) for x in rows)} worse")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, ensure_ascii=False, indent=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
