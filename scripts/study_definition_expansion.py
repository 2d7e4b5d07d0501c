"""A described concept searched by its name too, measured: the query's nearest definition's name appended.

    python scripts/study_definition_expansion.py --cache work/pools.npz [--taus 0.8,0.75,0.7,0.65]

A loose description often paraphrases a named concept ("regular local rings have no zero divisors":
an integral domain; "biggest collection of subsets where none is contained in another": an antichain).
For each query of the collection (both judged rounds) and informal-dev, its nearest definition among
the bundle's documents of kind ``definition`` with a name (exact cosine of the stored vectors); when the
cosine is at least ``tau`` and the name is not already in the query, the query is searched with the
name appended (its pool made again, ``mathlas_build.training.ltr.pool``) and ordered by the bundle's
model; otherwise its own pool is. P@1 / Hit@10 / MRR@20 per set and the paired MRR@20 difference over
the held-out sets (every set but the first round's tune split) with a 95% bootstrap interval; with
``--show N`` the first N vague queries' nearest definitions. docs/training.md has what it measured.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

import study_prf_feature as S  # noqa: E402
import train_ranker as TR  # noqa: E402
from mathlas_build.training import collection as C  # noqa: E402
from mathlas_build.training import ltr  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--taus", default="0.8,0.75,0.7,0.65")
    ap.add_argument("--show", type=int, default=0)
    a = ap.parse_args(argv)
    from mathlas.ranking.learned import bundle_model

    b, _, recs, P, _ = TR.collection_pools(Path(a.cache), rounds=(1, 2))
    model = bundle_model(b)[0]
    ids, kinds, names = b.column("id"), b.column("kind").to_pylist(), b.column("name").to_pylist()
    defs = np.array([i for i, k in enumerate(kinds) if k == "definition" and names[i]], dtype=np.int64)

    def metrics(pool, r):
        return C.metrics_of(S.top_ids(ids, pool, model), set(r["relevant"]))

    base = {r["id"]: metrics(P[r["id"]], r) for r in recs}
    vectors = b.encoder.encode_queries([r["query"] for r in recs])
    cos = np.stack([b.dense.rescore(v, defs) for v in vectors])
    best, best_cos = cos.argmax(1), cos.max(1)
    sets = sorted({S.set_of(r) for r in recs})
    held = [r for r in recs if S.set_of(r) != "tune"]
    print(f"{len(defs)} definitions; base: " + "; ".join(
        f"{n} " + S.summary([r for r in recs if S.set_of(r) == n], base, "all") for n in sets), flush=True)
    made: dict[str, ltr.Pool] = {}
    for tau in [float(x) for x in a.taus.split(",") if x]:
        got, changed = {}, 0
        for i, r in enumerate(recs):
            name = names[defs[best[i]]]
            if best_cos[i] >= tau and name.lower() not in r["query"].lower():
                q = f"{r['query']} {name}"
                if q not in made:
                    made[q] = ltr.pool(b, q)
                got[r["id"]], changed = metrics(made[q], r), changed + 1
            else:
                got[r["id"]] = base[r["id"]]
        d, lo, hi = S.paired(held, base, got)
        print(f"tau {tau}: {changed} queries searched with a name; " + "; ".join(
            f"{n} " + S.summary([r for r in recs if S.set_of(r) == n], got, "all") for n in sets)
            + f"\n    held out ({len(held)}) MRR@20 {d:+.3f} [{lo:+.3f}, {hi:+.3f}]", flush=True)
    vague = [(i, r) for i, r in enumerate(recs) if r.get("style") == "vague"][:a.show]
    for i, r in vague:
        print(f"  {r['id']} {r['query'][:60]!r} -> {names[defs[best[i]]]!r} ({best_cos[i]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
