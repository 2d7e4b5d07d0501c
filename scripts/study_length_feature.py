"""The learned stage's document length, measured by retraining: raw, dropped, within its source, capped.

    python scripts/study_length_feature.py --cache work/pools.npz [--seeds 0,1,2] [--cap 6.5]

``doc_loglen`` is log(1 + characters of the text). Lengths differ by source (PlanetMath's median
entry is some 1,160 characters, ProofWiki's statement 170), so a tree that splits on it reads the
source as much as the length, and a walkthrough found the model putting long PlanetMath entries that
match words above the short statement the dense channel ranks first. Holding the column at a constant
without retraining raised check and informal-dev and lowered tune; only retraining says whether the
length generalises. The variants, each on the same pools:

- ``base``: today's features;
- ``drop``: the ``doc_loglen`` column left out;
- ``pct``: the length as a percentile within its source, over the bundle's documents of that source
  (mid-rank of ties, in [0, 1]), in the column's place;
- ``cap``: the log length capped at ``--cap`` (6.5, about 660 characters: longer are 75% of
  PlanetMath's entries, 8% of Stacks', 5% of Metamath's, 1% of ProofWiki's), so the long entries look
  alike to the trees.

Each is trained with the shipped settings (100 trees of 15 leaves, learning rate .1, 50 a leaf) and
compared with ``base`` of the same seed, as ``scripts/study_prf_feature.py`` does: out of fold on tune
(the five folds of ``scripts/train_ranker.py``), then check and informal-dev by the model trained on
all of tune; P@1 / Hit@10 / MRR@20 per split, the paired MRR@20 and P@1 differences over all 464
queries with 95% bootstrap intervals, and each split's MRR@20 difference. Every model, ``base`` too,
scores with LightGBM itself. ``--show`` prints the first three of one query (not a collection query)
by the bundle's model and by each variant's model of the first seed. docs/training.md has what it measured.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

import study_prf_feature as S  # noqa: E402
import train_ranker as TR  # noqa: E402
from mathlas_build.training import collection as C  # noqa: E402
from mathlas_build.training import ltr  # noqa: E402

SPLITS = ("tune", "check", "dev", "all")


def within_source_percentile(source: np.ndarray, loglen: np.ndarray) -> np.ndarray:
    """Per document: the share of its source's documents shorter than it, ties counted half, in [0, 1]."""
    out = np.zeros(len(loglen), dtype=np.float32)
    for s in np.unique(source):
        idx = np.flatnonzero(source == s)
        v = loglen[idx]
        srt = np.sort(v)
        below = np.searchsorted(srt, v, side="left")
        upto = np.searchsorted(srt, v, side="right")
        out[idx] = ((below + upto) / 2.0 / len(v)).astype(np.float32)
    return out


def variants(b, cap: float) -> dict:
    """name -> (feature names, function of a pool's keys and X giving the variant's X)."""
    from mathlas.ranking.learned import F, FEATURES

    info = ltr.doc_info(b)
    col = F["doc_loglen"]
    pct = within_source_percentile(info.source, info.loglen)
    dropped = [n for n in FEATURES if n != "doc_loglen"]

    def replaced(values):
        def f(keys, X):
            X = X.copy()
            X[:, col] = values(keys, X)
            return X
        return f

    return {
        "base": (list(FEATURES), lambda keys, X: X),
        "drop": (dropped, lambda keys, X: np.delete(X, col, axis=1)),
        "pct": ([*FEATURES[:col], "doc_len_pct", *FEATURES[col + 1:]], replaced(lambda keys, X: pct[keys])),
        "cap": ([*FEATURES[:col], "doc_loglen_cap", *FEATURES[col + 1:]],
                replaced(lambda keys, X: np.minimum(X[:, col], cap))),
    }


def train(X, y, groups, seed, names):
    return ltr.train(X, y, groups, trees=100, leaves=15, learning_rate=0.1, min_data=50, seed=seed,
                     feature_names=names)


def run(b, recs, P, judged, seed, names):
    """Per query metrics (tune out of fold, check and dev by the model of all of tune), and that model."""
    tune = {r["id"] for r in recs if r["split"] == "tune"}
    full = train(*TR.training_set(b, recs, P, judged, tune), seed, names)
    fm = {f: train(*TR.training_set(b, recs, P, judged, {q for q in tune if S.fold(q) != f}), seed, names)
          for f in range(5)}
    got = S.per_query(b, recs, P, lambda r: fm[S.fold(r["id"])] if r["split"] == "tune" else full)
    return got, full


def split_mean(recs, got, split, metric="mrr@20") -> float:
    return float(np.mean([got[r["id"]][metric] for r in recs if split in ("all", r["split"])]))


def length_gain(booster, names) -> float:
    """The length column's share of the model's total gain (0 when it has none)."""
    gain = booster.feature_importance("gain")
    i = [j for j, n in enumerate(names) if n.startswith("doc_")]
    return float(gain[i].sum() / gain.sum()) if i else 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--variants", default="drop,pct,cap", help="compared with base (always run)")
    ap.add_argument("--cap", type=float, default=6.5, help="the cap variant's log length cap")
    ap.add_argument("--show", default="every subgroup of a cyclic group is cyclic")
    a = ap.parse_args(argv)

    t0 = time.time()
    b, _, recs, P, judged = TR.collection_pools(Path(a.cache))
    seeds = [int(s) for s in a.seeds.split(",")]
    V = variants(b, a.cap)
    names_run = ["base", *[v for v in a.variants.split(",") if v and v != "base"]]
    show_pool = ltr.pool(b, a.show) if a.show else None
    ids = b.column("id")
    if show_pool is not None:
        from mathlas.ranking.learned import bundle_model

        shipped = bundle_model(b)[0]
        order = show_pool.keys[np.argsort(-shipped.score(show_pool.X), kind="stable")]
        print(f"  {a.show!r} by the bundle's model: " + ", ".join(ids[k].as_py() for k in order[:3].tolist()))
    results, models = {}, {}
    for v in names_run:
        names, fx = V[v]
        Pv = {q: ltr.Pool(p.keys, fx(p.keys, p.X), p.rrf_order) for q, p in P.items()}
        for s in seeds:
            got, full = run(b, recs, Pv, judged, s, names)
            results[v, s], models[v, s] = got, full
            print(f"{v} seed {s}: " + "; ".join(f"{sp} {S.summary(recs, got, sp)}" for sp in SPLITS)
                  + f"  (length gain share {length_gain(full, names):.3f})", flush=True)
            if v != "base":
                base = results["base", s]
                for metric in ("mrr@20", "p@1"):
                    d, lo, hi = S.paired(recs, base, got, metric)
                    print(f"    all 464: {metric} {d:+.3f} [{lo:+.3f}, {hi:+.3f}]", flush=True)
                print("    MRR@20 by split: " + ", ".join(
                    f"{sp} {split_mean(recs, got, sp) - split_mean(recs, base, sp):+.3f}"
                    for sp in ("tune", "check", "dev")), flush=True)
        if show_pool is not None:
            X = fx(show_pool.keys, show_pool.X)
            order = show_pool.keys[np.argsort(-models[v, seeds[0]].predict(X), kind="stable")]
            print(f"  {a.show!r} by {v} (seed {seeds[0]}): "
                  + ", ".join(ids[k].as_py() for k in order[:3].tolist()), flush=True)

    print("\nsummary (P@1 / Hit@10 / MRR@20 per split, mean of the seeds; pooled differences by seed):")
    for v in names_run:
        row = []
        for sp in ("tune", "check", "dev"):
            row.append(sp + " " + " / ".join(
                f"{np.mean([split_mean(recs, results[v, s], sp, m) for s in seeds]):.3f}"
                for m in C.METRICS if m in ("p@1", "hit@10", "mrr@20")))
        print(f"{v}: " + "; ".join(row))
    for v in names_run[1:]:
        ds = [S.paired(recs, results["base", s], results[v, s]) for s in seeds]
        worst = min(min(split_mean(recs, results[v, s], sp) - split_mean(recs, results["base", s], sp)
                        for sp in ("check", "dev")) for s in seeds)
        gain = (all(d > 0 for d, _, _ in ds) and sum(lo > 0 for _, lo, _ in ds) >= 2 and worst >= -0.01)
        print(f"{v}: pooled MRR@20 " + ", ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in ds)
              + f"; worst check/dev MRR@20 {worst:+.3f}; decision rule: {'gain' if gain else 'not a gain'}")
    print(f"\n{time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
