"""Near-duplicates in the top ten, measured: the learned stage's order with a penalty for a candidate
close to one already placed above it (maximal marginal relevance over the stored vectors).

    python scripts/study_diversity.py --cache work/pools.npz [--fresh] [--window 30]

The collection's misses of the top ten are mostly ranking (docs/training.md): the first ten often hold
several statements of one neighbouring fact (five "extensions of Q are undecidable" above the second
incompleteness theorem). Over each query's pool, ordered by the bundle's model (the shipped one:
in-sample on tune, held out on check, informal-dev and the second round), the first ``--window``
candidates are placed one at a time: the first as the model has it, then each time the candidate with
the highest z-scored model score less ``mu`` times how far its highest cosine with a placed candidate
exceeds ``tau`` (cosines of the stored int8 vectors, scaled as the dense channel scores them). P@1 is
unchanged by construction; Hit@10 and MRR@20 per set, and the pooled paired difference with a 95%
bootstrap interval. docs/training.md has what it measured.
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


def diversified(order_keys: np.ndarray, scores: np.ndarray, vecs: np.ndarray, mu: float, tau: float,
                window: int) -> np.ndarray:
    """``order_keys`` (best first, ``scores`` aligned) with its first ``window`` placed greedily."""
    w = min(window, len(order_keys))
    if w < 3 or mu == 0:
        return order_keys
    s = scores[:w]
    z = (s - s.mean()) / (s.std() + 1e-9)
    sim = vecs[:w] @ vecs[:w].T
    placed = [0]
    left = list(range(1, w))
    closest = sim[0].copy()
    while left:
        vals = [z[i] - mu * max(0.0, closest[i] - tau) for i in left]
        j = left.pop(int(np.argmax(vals)))
        placed.append(j)
        closest = np.maximum(closest, sim[j])
    return np.concatenate([order_keys[placed], order_keys[w:]])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--fresh", action="store_true", help="the second round's queries too")
    ap.add_argument("--window", type=int, default=30)
    ap.add_argument("--mus", default="0.5,1,2,4")
    ap.add_argument("--taus", default="0.7,0.8,0.85,0.9")
    a = ap.parse_args(argv)
    from mathlas.ranking.learned import bundle_model

    b, _, recs, P, _ = TR.collection_pools(Path(a.cache), rounds=(1, 2) if a.fresh else (1,))
    model = bundle_model(b)[0]
    dense = b.dense
    ids = b.column("id")
    prepared = {}
    for r in recs:
        p = P[r["id"]]
        sc = model.score(p.X)
        o = np.argsort(-sc, kind="stable")
        keys, s = p.keys[o], sc[o]
        top = keys[:a.window]
        v = dense._rows[top].astype(np.float32) * dense._scales[top][:, None]
        prepared[r["id"]] = (keys, s, v)

    def evaluate(mu, tau):
        out = {}
        for r in recs:
            keys, s, v = prepared[r["id"]]
            ks = diversified(keys, s, v, mu, tau, a.window)
            out[r["id"]] = C.metrics_of([ids[k].as_py() for k in ks[:20].tolist()], set(r["relevant"]))
        return out

    sets = sorted({set_of(r) for r in recs})
    held = [r for r in recs if set_of(r) != "tune"]
    base = evaluate(0, 1)
    print("base: " + "; ".join(f"{n} ({sum(set_of(r) == n for r in recs)}) " + S.summary(
        [r for r in recs if set_of(r) == n], base, "all") for n in sets), flush=True)
    for mu in [float(x) for x in a.mus.split(",")]:
        for tau in [float(x) for x in a.taus.split(",")]:
            got = evaluate(mu, tau)
            line = "; ".join(f"{n} " + S.summary([r for r in recs if set_of(r) == n], got, "all") for n in sets)
            d = {m: S.paired(held, base, got, m) for m in ("hit@10", "mrr@20")}
            print(f"mu {mu} tau {tau}: {line}\n    held out ({len(held)}): " + ", ".join(
                f"{m} {x:+.3f} [{lo:+.3f}, {hi:+.3f}]" for m, (x, lo, hi) in d.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
