"""Train the learned ranking stage on the collection's tune split; choose on its check split.

    python scripts/train_ranker.py --out eval/collection/models/ltr.json [--trees 150 --leaves 15]

Pools (mathlas_build.training.ltr.pool: lexical and dense 100 deep over the whole default bundle,
their union) are computed once per query and kept in ``--cache`` (an .npz keyed by query id and the
bundle's label, so a new bundle computes them again). Labels: 2 for a target, 1 for a hit judged
equivalent, 0 otherwise. Prints MRR@20 / P@1 / Hit@10 of the pool's RRF order and of the model on
tune (in-sample), check and informal-dev, each over the queries' relevant ids.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

from collection import records  # noqa: E402
from mathlas_build.training import collection as C  # noqa: E402
from mathlas_build.training import ltr  # noqa: E402


def pools(b, recs: list[dict], cache: Path | None) -> dict[str, ltr.Pool]:
    from mathlas.ranking.learned import FEATURES

    stamp = f"{b.label}:{len(FEATURES)}:{','.join(FEATURES)}"
    have: dict[str, ltr.Pool] = {}
    if cache and cache.is_file():
        z = np.load(cache, allow_pickle=False)
        if str(z["stamp"]) == stamp:
            for qid in z["qids"].tolist():
                have[qid] = ltr.Pool(z[f"k_{qid}"], z[f"x_{qid}"], z[f"k_{qid}"])
    t0, made = time.time(), 0
    for r in recs:
        if r["id"] not in have:
            have[r["id"]] = ltr.pool(b, r["query"])
            made += 1
    if made:
        print(f"{made} pools made in {time.time() - t0:.0f} s", file=sys.stderr)
        if cache:
            arrays = {"stamp": np.array(stamp), "qids": np.array(sorted(have))}
            for qid, p in have.items():
                arrays[f"k_{qid}"] = p.keys
                arrays[f"x_{qid}"] = p.X
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez_compressed(cache, **arrays)
    return have


def evaluate(b, recs, P, model=None) -> dict:
    ids = b.column("id")
    out = {}
    for split in ("tune", "check", "dev"):
        rows = []
        for r in recs:
            if r["split"] != split or not r["relevant"]:
                continue
            p = P[r["id"]]
            order = p.keys if model is None else p.keys[np.argsort(-model.score(p.X), kind="stable")]
            ranked = [ids[k].as_py() for k in order[:20].tolist()]
            rows.append(C.metrics_of(ranked, set(r["relevant"])))
        out[split] = {m: round(float(np.mean([x[m] for x in rows])), 4) for m in C.METRICS} | {"n": len(rows)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--cache", default=None, help="pool cache (.npz)")
    ap.add_argument("--trees", type=int, default=150)
    ap.add_argument("--leaves", type=int, default=15)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--min-data", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    from mathlas.engine import open_bundle
    from mathlas.ranking.learned import model_from_spec

    b = open_bundle()
    recs = [r for r in records() if r["relevant"]]
    P = pools(b, recs, Path(a.cache) if a.cache else None)
    judged = C.judgments(ROOT / "eval" / "collection")
    X, y, groups = [], [], []
    for r in recs:
        if r["split"] != "tune":
            continue
        p = P[r["id"]]
        eq = {d for (q, d), j in judged.items() if q == r["id"] and j["label"] == "equivalent"}
        lab = ltr.labels_for(b, p, set(r["targets"]), eq)
        if lab.max() == 0:  # no relevant candidate: nothing to learn from this query
            continue
        X.append(p.X)
        y.append(lab)
        groups.append(len(lab))
    X, y = np.concatenate(X), np.concatenate(y)
    booster = ltr.train(X, y, groups, trees=a.trees, leaves=a.leaves, learning_rate=a.lr, min_data=a.min_data,
                        seed=a.seed)
    spec = ltr.export_lightgbm(booster)
    spec["trained_on"] = {"tune_queries": len(groups), "candidates": int(len(y)), "trees": a.trees,
                          "leaves": a.leaves, "learning_rate": a.lr, "min_data_in_leaf": a.min_data,
                          "seed": a.seed}
    model = model_from_spec(spec)
    # the exported arrays must give LightGBM's own scores
    assert np.allclose(model.score(X[:500]), booster.predict(X[:500]), atol=1e-4), "export differs from LightGBM"
    before, after = evaluate(b, recs, P), evaluate(b, recs, P, model)
    spec["measured"] = {"rrf": before, "model": after}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    ltr.save(spec, a.out)
    print(json.dumps({"rrf": before, "model": after}, indent=1))
    imp = booster.feature_importance("gain")
    from mathlas.ranking.learned import FEATURES
    top = sorted(zip(imp, FEATURES), reverse=True)[:12]
    print("gain:", ", ".join(f"{f} {g:.0f}" for g, f in top))


if __name__ == "__main__":
    main()
