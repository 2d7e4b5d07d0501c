"""A feature the learned stage lacks, measured: how close each candidate is to the pool's best.

    python scripts/study_prf_feature.py --cache work/pools.npz [--depths 3,5,10] [--seeds 0,1,2]

Pseudo-relevance feedback as a feature, not a second search: the centroid of the first ``m`` candidates
of a pool in RRF order (their stored int8 vectors, as ``DenseIndex.rescore`` reads them), and each
candidate's cosine with it (``prf``) and its gap to the pool's highest (``prf_gap``). A loose description
whose target the encoder places 30th may still sit close to what both channels put first.

For each ``m`` the model is trained with the shipped settings (100 trees of 15 leaves, learning rate .1,
50 a leaf) on the features of today plus the two new ones, and compared with the same training on
today's features alone, seed by seed: out of fold on tune (5 folds, the folds of
``scripts/train_ranker.py``), then check and informal-dev; the paired difference of MRR@20 over all
three (the pooled evidence) with a 95% bootstrap interval. docs/training.md has what it measured.
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


def prf_columns(b, keys: np.ndarray, m: int) -> np.ndarray:
    """(len(keys), 2): cosine with the unit centroid of the first ``m`` keys, and its gap to the highest."""
    d = b.dense
    top = keys[:m]
    vecs = d._rows[top].astype(np.float32) * d._scales[top][:, None]
    c = vecs.sum(axis=0)
    c /= float(np.linalg.norm(c)) or 1.0
    cos = d.rescore(c.astype(np.float32), keys)
    return np.stack([cos, cos - cos.max()], axis=1).astype(np.float32)


def query_columns(X: np.ndarray) -> np.ndarray:
    """(len(X), 4), the same on every row: how much the two channels agree on this query (their top
    tens' overlap), BM25's highest score, the highest cosine, and BM25's highest per query word."""
    from mathlas.ranking.learned import F

    n = len(X)
    lex = X[:, F["in_lex"]] > 0
    den = X[:, F["in_dense"]] > 0
    top_lex = lex & (X[:, F["lex_logrank"]] < np.log1p(10) - 1e-6)
    top_den = den & (X[:, F["dense_logrank"]] < np.log1p(10) - 1e-6)
    overlap = float((top_lex & top_den).sum()) / 10.0
    lex_top = float(X[:, F["lex_score"]].max()) if n else 0.0
    cos_top = float(X[:, F["cos"]].max()) if n else 0.0
    per_word = lex_top / max(1.0, float(X[0, F["q_words"]])) if n else 0.0
    return np.tile(np.array([overlap, lex_top, cos_top, per_word], dtype=np.float32), (n, 1))


def set_of(r: dict) -> str:
    """Which set a collection record is scored in by the studies: its split (tune, check, dev) for the
    first round and informal-dev; ``fresh-``, ``r3-`` or ``r4-`` before it for the second, third and fourth rounds."""
    return {2: "fresh-", 3: "r3-", 4: "r4-"}.get(r.get("round", 1), "") + r["split"]


# 1.6.1's stage's settings (scripts/train_ranker.py --trees 50 --leaves 7 --lr 0.2; 50 a leaf), for ltr.train
SHIPPED = {"trees": 50, "leaves": 7, "learning_rate": 0.2, "min_data": 50}


def shipped_split(recs: list[dict]) -> tuple[set[str], dict[str, list[dict]]]:
    """1.6.1's stage's training queries (the tune splits of rounds 1-3) and the sets no such model saw:
    the three rounds' check splits with informal-dev (where a choice is made) and the fourth round (drafted
    after it: the confirmation)."""
    tune = {r["id"] for r in recs if r["split"] == "tune" and r.get("round", 1) < 4}
    return tune, {"check+dev": [r for r in recs if r["split"] in ("check", "dev") and r.get("round", 1) < 4],
                  "round 4": [r for r in recs if r.get("round") == 4]}


def fold(qid: str, folds: int = 5) -> int:
    return TR.fold_of(qid, folds)


def train(X, y, groups, seed, sample=0.9):
    from mathlas.ranking.learned import FEATURES, model_from_spec

    names = [*FEATURES, *(f"extra_{i}" for i in range(X.shape[1] - len(FEATURES)))]
    booster = ltr.train(X, y, groups, trees=100, leaves=15, learning_rate=0.1, min_data=50, seed=seed,
                        feature_names=names, sample=sample)
    if len(names) == len(FEATURES):
        return model_from_spec(ltr.export_lightgbm(booster))
    return booster   # other features than the runtime's: LightGBM scores them


def score(model, X):
    return model.score(X) if hasattr(model, "score") else model.predict(X)


def top_ids(ids, pool, model, n: int = 20) -> list[str]:
    """The first ``n`` ids of ``pool`` in ``model``'s order (``ids``: the bundle's id column)."""
    order = pool.keys[np.argsort(-score(model, pool.X), kind="stable")]
    return [ids[k].as_py() for k in order[:n].tolist()]


def per_query(b, recs, P, models_by_split) -> dict[str, float]:
    """MRR@20 of each query: tune out of fold, check and dev by the model trained on all of tune."""
    ids = b.column("id")
    return {r["id"]: C.metrics_of(top_ids(ids, P[r["id"]], models_by_split(r)), set(r["relevant"])) for r in recs}


def run(b, recs, P, judged, seed):
    tune = {r["id"] for r in recs if r["split"] == "tune"}
    full = train(*TR.training_set(b, recs, P, judged, tune), seed)
    fm = {f: train(*TR.training_set(b, recs, P, judged, {q for q in tune if fold(q) != f}), seed) for f in range(5)}
    return per_query(b, recs, P, lambda r: fm[fold(r["id"])] if r["split"] == "tune" else full)


def summary(recs, got, split) -> str:
    rows = [got[r["id"]] for r in recs if split in ("all", r["split"])]
    return " / ".join(f"{np.mean([x[m] for x in rows]):.3f}" for m in ("p@1", "hit@10", "mrr@20"))


def paired(recs, a, b_, metric="mrr@20", n=2000, seed=0):
    d = np.array([b_[r["id"]][metric] - a[r["id"]][metric] for r in recs])
    rng = np.random.default_rng(seed)
    boots = [d[rng.integers(0, len(d), len(d))].mean() for _ in range(n)]
    return d.mean(), np.percentile(boots, 2.5), np.percentile(boots, 97.5)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--depths", default="3,5,10")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--query-level", action="store_true", help="also the query-level features (query_columns)")
    a = ap.parse_args(argv)

    b, _, recs, P, judged = TR.collection_pools(Path(a.cache))
    seeds = [int(s) for s in a.seeds.split(",")]
    base = {s: run(b, recs, P, judged, s) for s in seeds}
    for s in seeds:
        print(f"base seed {s}: " + "; ".join(f"{sp} {summary(recs, base[s], sp)}"
                                             for sp in ("tune", "check", "dev", "all")), flush=True)
    variants = [(f"prf m={m}", lambda p, m=m: prf_columns(b, p.keys, m)) for m in
                [int(x) for x in a.depths.split(",") if x]]
    if a.query_level:
        variants.append(("query-level", lambda p: query_columns(p.X)))
    for m, extra in variants:
        Pm = {q: ltr.Pool(p.keys, np.concatenate([p.X, extra(p)], axis=1), p.rrf_order) for q, p in P.items()}
        for s in seeds:
            got = run(b, recs, Pm, judged, s)
            print(f"{m} seed {s}: " + "; ".join(f"{sp} {summary(recs, got, sp)}"
                                                      for sp in ("tune", "check", "dev", "all")), flush=True)
            for sp in ("check", "dev", "all"):
                sub = [r for r in recs if sp in ("all", r["split"])]
                d, lo, hi = paired(sub, base[s], got)
                print(f"    {sp}: MRR@20 {d:+.3f} [{lo:+.3f}, {hi:+.3f}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
