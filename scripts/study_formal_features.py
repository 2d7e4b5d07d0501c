"""Features a formal bundle knows and the learned stage does not read, measured out of fold.

    python scripts/study_formal_features.py --bundle DIR --cache work/formal-pools.npz [--seeds 0,1,2]

The learned stage reads the same 34 features on every bundle (``mathlas.ranking.learned.FEATURES``).
A Lean bundle knows more of each declaration: its PageRank in the dependency graph (how much of
Mathlib rests on it), whether it is deprecated, whether a tool generated it (``@[simps]`` lemmas,
``to_additive`` twins). Each is added as a column of the candidate pools of both formal dev sets
(``mathlas_build.training.ltr.pool`` on ``--bundle``, a formal bundle built without a model, so the
pools are RRF's), and a model trained with the shipped formal settings (50 trees of 7 leaves, learning
rate .1, at least 100 rows a leaf) orders each query's pool out of fold (the folds of
``scripts/train_ranker_formal.py``: queries that share a target in one fold), seed by seed, against the
same training on today's features. Printed: P@1 / Hit@10 / MRR@20 per set, and the paired MRR@20 and
Hit@10 differences over both sets with 95% bootstrap intervals. docs/formal.md has what it measured.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

import train_ranker as TR  # noqa: E402
from mathlas_build.training import collection as C  # noqa: E402
from mathlas_build.training import ltr  # noqa: E402
from train_ranker_formal import folds_of, read_sets  # noqa: E402

SETS = [str(ROOT.parent / "shared" / "eval" / f"{s}.jsonl") for s in ("formal-qr-dev", "formal-dev")]
OPTS = dict(trees=50, leaves=7, learning_rate=0.1, min_data=100)


def columns(b) -> dict[str, np.ndarray]:
    """Per document: log PageRank (the bundle's column is N x PageRank), deprecated, generated."""
    t = b.table
    have = t.column_names
    n = len(b)
    out = {}
    if "pagerank" in have:
        pr = np.nan_to_num(np.asarray(t.column("pagerank").to_numpy(zero_copy_only=False), dtype=np.float64))
        out["log_pagerank"] = np.log(np.maximum(pr, 1e-6)).astype(np.float32)
    for c in ("deprecated", "generated"):
        if c in have:
            v = t.column(c).to_pylist()
            out[c] = np.array([1.0 if x not in (None, "", False, 0) else 0.0 for x in v], dtype=np.float32)
    assert all(len(v) == n for v in out.values())
    return out


def train(X, y, groups, seed):
    from mathlas.ranking.learned import FEATURES

    names = [*FEATURES, *(f"extra_{i}" for i in range(X.shape[1] - len(FEATURES)))]
    return ltr.train(X, y, groups, **OPTS, seed=seed, feature_names=names)


def out_of_fold(b, recs, P, fold, seed) -> dict[str, dict]:
    ids = b.column("id")
    got = {}
    for f in sorted(set(fold.values())):
        X, y, groups = [], [], []
        for r in recs:
            if fold[r["id"]] == f:
                continue
            p = P[r["id"]]
            lab = ltr.labels_for(b, p, set(r["targets"]), set())
            if lab.max():
                X.append(p.X)
                y.append(lab)
                groups.append(len(lab))
        model = train(np.concatenate(X), np.concatenate(y), groups, seed)
        for r in recs:
            if fold[r["id"]] == f:
                p = P[r["id"]]
                order = p.keys[np.argsort(-model.predict(p.X), kind="stable")]
                got[r["id"]] = C.metrics_of([ids[k].as_py() for k in order[:20].tolist()], set(r["targets"]))
    return got


def summary(recs, got, name) -> str:
    rows = [got[r["id"]] for r in recs if name in ("all", r["set"])]
    return f"{name} " + " / ".join(f"{np.mean([x[m] for x in rows]):.3f}" for m in ("p@1", "hit@10", "mrr@20"))


def paired(recs, a, b_, metric, n=2000, seed=0):
    d = np.array([b_[r["id"]][metric] - a[r["id"]][metric] for r in recs])
    rng = np.random.default_rng(seed)
    boots = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(n)]
    return f"{d.mean():+.3f} [{np.percentile(boots, 2.5):+.3f}, {np.percentile(boots, 97.5):+.3f}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", required=True, help="a formal bundle without a learned model (its pools are RRF's)")
    ap.add_argument("--cache", default=str(ROOT / "work" / "formal-pools.npz"))
    ap.add_argument("--seeds", default="0,1,2")
    a = ap.parse_args(argv)

    from mathlas.engine import open_bundle

    b = open_bundle(a.bundle)
    recs = read_sets(SETS)
    P = TR.pools(b, recs, Path(a.cache))
    fold = folds_of(recs, 5)
    cols = columns(b)
    sets = ["formal-qr-dev", "formal-dev", "all"]
    seeds = [int(s) for s in a.seeds.split(",")]
    base = {s: out_of_fold(b, recs, P, fold, s) for s in seeds}
    for s in seeds:
        print(f"base seed {s}: " + "; ".join(summary(recs, base[s], x) for x in sets), flush=True)
    variants = [(name, [name]) for name in cols] + [("all three", list(cols))]
    for label, names in variants:
        Pv = {q: ltr.Pool(p.keys, np.concatenate([p.X, np.stack([cols[c][p.keys] for c in names], axis=1)], axis=1),
                          p.rrf_order) for q, p in P.items()}
        for s in seeds:
            got = out_of_fold(b, recs, Pv, fold, s)
            print(f"{label} seed {s}: " + "; ".join(summary(recs, got, x) for x in sets), flush=True)
            qr = [r for r in recs if r["set"] == "formal-qr-dev"]
            print(f"    formal-qr-dev MRR@20 {paired(qr, base[s], got, 'mrr@20')}, Hit@10 {paired(qr, base[s], got, 'hit@10')}; "
                  f"both sets MRR@20 {paired(recs, base[s], got, 'mrr@20')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
