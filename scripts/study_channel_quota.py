"""Each channel's best candidates kept in the top ten, measured: does a quota for what BM25 or the
dense channel alone ranks first lift Hit@10 without costing the first ranks?

    python scripts/study_channel_quota.py --cache work/pools.npz [--quotas 1,2,3,5] [--fresh]

A walkthrough of the collection's second round found targets that one channel ranks in its first five
and the other not at all, placed 11th or lower by the learned stage (which prefers what both channels
found): "every number field other than Q has |d_K| > 1" (BM25's 2nd, the stage's 11th), "an analytic
function whose absolute value is constant on a connected domain must be constant" (the dense channel's
5th, the stage's 11th). Over each query's pool ordered by the bundle's model, the first ``q``
candidates of each channel that are not in the first ten are moved into it, each taking the place of
the lowest-placed candidate there that no quota holds (so the first ``10 - 2q`` ranks never move); P@1
is unchanged for ``q`` <= 4. Reported per set: the first round's tune split (in sample for the shipped
model), check split, informal-dev and, with ``--fresh``, the second round (held out from it): P@1 /
Hit@10 / MRR@20, and the paired Hit@10 and MRR@20 differences over the held-out sets with 95% bootstrap
intervals. docs/training.md has what it measured.
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


set_of = S.set_of


def with_quota(order: np.ndarray, lex_rank: np.ndarray, dense_rank: np.ndarray, q: int, top: int = 10) -> np.ndarray:
    """``order`` (pool rows, best first) with the first ``q`` rows of each channel (by ``*_rank``, 0 = absent)
    moved into its first ``top``."""
    if q == 0:
        return order
    wanted = []
    for rank in (lex_rank, dense_rank):
        present = np.flatnonzero(rank > 0)
        wanted += present[np.argsort(rank[present], kind="stable")][:q].tolist()
    head = order[:top].tolist()
    missing = [r for r in dict.fromkeys(wanted) if r not in head]
    if not missing:
        return order
    held = set(wanted)
    for r in missing:  # replace the lowest-placed row of the head that no quota holds
        for i in range(len(head) - 1, -1, -1):
            if head[i] not in held:
                head[i] = r
                break
    chosen = set(head)
    # the head keeps the stage's order among its rows, the moved rows at the places they took
    rest = [r for r in order.tolist() if r not in chosen]
    return np.array(head + rest, dtype=order.dtype)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--quotas", default="1,2,3,5")
    ap.add_argument("--fresh", action="store_true", help="the second round's queries too")
    a = ap.parse_args(argv)
    from mathlas.ranking.learned import F, bundle_model

    b, _, recs, P, _ = TR.collection_pools(Path(a.cache), rounds=(1, 2) if a.fresh else (1,))
    model = bundle_model(b)[0]
    ids = b.column("id")

    def ranks(p, logrank, present):
        return np.where(p.X[:, F[present]] > 0, np.rint(np.expm1(p.X[:, F[logrank]])) + 1, 0)

    prepared = {}
    for r in recs:
        p = P[r["id"]]
        prepared[r["id"]] = (p.keys, np.argsort(-model.score(p.X), kind="stable"),
                             ranks(p, "lex_logrank", "in_lex"), ranks(p, "dense_logrank", "in_dense"))

    def evaluate(q):
        out = {}
        for r in recs:
            keys, order, lr, dr = prepared[r["id"]]
            o = with_quota(order, lr, dr, q)
            out[r["id"]] = C.metrics_of([ids[k].as_py() for k in keys[o][:20].tolist()], set(r["relevant"]))
        return out

    sets = sorted({set_of(r) for r in recs})
    held = [r for r in recs if set_of(r) != "tune"]
    base = evaluate(0)
    print("base: " + "; ".join(f"{n} ({sum(set_of(r) == n for r in recs)}) " + S.summary(
        [r for r in recs if set_of(r) == n], base, "all") for n in sets), flush=True)
    for q in [int(x) for x in a.quotas.split(",") if x]:
        got = evaluate(q)
        line = "; ".join(f"{n} " + S.summary([r for r in recs if set_of(r) == n], got, "all") for n in sets)
        d = {m: S.paired(held, base, got, m) for m in ("hit@10", "mrr@20", "p@1")}
        print(f"quota {q}: {line}\n    held out ({len(held)}): " + ", ".join(
            f"{m} {x:+.3f} [{lo:+.3f}, {hi:+.3f}]" for m, (x, lo, hi) in d.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
