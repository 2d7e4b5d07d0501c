"""The learned ranking stage's model class and size, measured on the judged collection's pools.

    python scripts/study_ranker_models.py --cache work/pools.npz [--seeds 0,1,2,3] [--fresh]
        [--configs "lgb:100:15:0.1:50;lgb:100:7:0.1:50;cb:YetiRank:6:200:0.1"]

Each configuration is trained on the tune split (as ``scripts/train_ranker.py`` trains the shipped
model: targets 2, judged equivalents 1) once per seed, and each model orders every check and
informal-dev query's pool (``mathlas_build.training.ltr.pool``, cached in ``--cache``); it prints P@1,
Hit@10 and MRR@20 per split and seed, their means over the seeds, the paired MRR@20 difference against
the shipped model over every held-out query (with a 95% bootstrap interval), and the median time the
model takes to score one pool of about 185 candidates (numpy, as the runtime scores it: ``TreeModel`` for
LightGBM, a vectorised oblivious-tree scorer for CatBoost, checked against CatBoost's own scores).
``shipped`` scores the model the default bundle carried when this study was made (1.4.0 to 1.6.0:
``artifacts/rankers/informal-ltr-1.json``; 1.6.1 carries ``informal-ltr-2.json``, trained on the three rounds).

Configurations: ``lgb:TREES:LEAVES:LR:MIN_DATA`` (LightGBM lambdarank, the build extra) and
``cb:LOSS:DEPTH:ITERATIONS:LR`` (CatBoost's ranker with oblivious trees: ``pip install catboost``,
not a dependency of mathlas). docs/training.md, "The learned stage's model", has what it measured.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

import study_prf_feature as S  # noqa: E402
import train_ranker as TR  # noqa: E402
from mathlas_build.training import ltr  # noqa: E402


class ObliviousTrees:
    """CatBoost's oblivious trees (each level one test for the whole tree) scored in numpy: every
    candidate against every tree's tests at once, the bits read as the leaf's index."""

    def __init__(self, spec: dict):
        trees = spec["oblivious_trees"]
        depth = len(trees[0]["splits"])
        if any(len(t["splits"]) != depth for t in trees):
            raise SystemExit("study_ranker_models: trees of unequal depth (a loss that grows non-symmetric trees)")
        self.feature = np.array([s["float_feature_index"] for t in trees for s in t["splits"]], dtype=np.intp)
        self.border = np.array([s["border"] for t in trees for s in t["splits"]], dtype=np.float32)
        self.values = np.array([t["leaf_values"] for t in trees], dtype=np.float64).ravel()
        self.depth, self.trees = depth, len(trees)
        # level-major: level d of every tree side by side
        self.level_feature = self.feature.reshape(self.trees, depth).T.copy()
        self.level_border = self.border.reshape(self.trees, depth).T.copy()[:, :, None]
        self.leaf_base = (np.arange(self.trees, dtype=np.intp) << depth)[:, None]
        scale, bias = spec.get("scale_and_bias", [1.0, [0.0]])
        self.scale, self.bias = float(scale), float(bias[0] if isinstance(bias, list) else bias)

    def score(self, X: np.ndarray) -> np.ndarray:
        Xt = np.ascontiguousarray(X.T)   # features x candidates: one gather of rows
        bits = (Xt[self.level_feature] > self.level_border).view(np.uint8)   # (depth, trees, candidates)
        leaf = np.repeat(self.leaf_base, len(X), axis=1)
        for d in range(self.depth):   # a level's bit of every tree and candidate at once
            leaf |= bits[d].astype(np.intp) << d
        return self.values[leaf].sum(axis=0) * self.scale + self.bias


def train(config: str, X, y, groups, seed: int):
    from mathlas.ranking.learned import model_from_spec

    kind, *p = config.split(":")
    if kind == "shipped":
        return model_from_spec(json.loads((ROOT / "artifacts" / "rankers" / "informal-ltr-1.json").read_text()))
    if kind == "lgb":
        trees, leaves, lr, min_data = int(p[0]), int(p[1]), float(p[2]), int(p[3])
        booster = ltr.train(X, y, groups, trees=trees, leaves=leaves, learning_rate=lr, min_data=min_data, seed=seed)
        return model_from_spec(ltr.export_lightgbm(booster))
    if kind == "cb":
        try:
            from catboost import CatBoostRanker, Pool
        except ImportError:
            raise SystemExit("study_ranker_models: the cb configurations need CatBoost: pip install catboost") from None
        loss, depth, iterations, lr = p[0], int(p[1]), int(p[2]), float(p[3])
        model = CatBoostRanker(loss_function=loss, depth=depth, iterations=iterations, learning_rate=lr,
                               random_seed=seed, thread_count=2, verbose=False, allow_writing_files=False)
        model.fit(Pool(X, y, group_id=np.repeat(np.arange(len(groups)), groups)))
        with tempfile.TemporaryDirectory() as tmp:
            model.save_model(f"{tmp}/m.json", format="json")
            scorer = ObliviousTrees(json.loads(Path(f"{tmp}/m.json").read_text()))
        assert np.allclose(scorer.score(X[:2000]), model.predict(X[:2000]), atol=1e-5), "scorer differs from CatBoost"
        return scorer
    raise SystemExit(f"study_ranker_models: unknown configuration {config!r} (lgb:..., cb:..., shipped)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"), help="pool cache (.npz), as train_ranker.py's")
    ap.add_argument("--configs", default="shipped;lgb:100:15:0.1:50;lgb:100:7:0.1:50;lgb:50:15:0.2:50;lgb:50:7:0.2:50")
    ap.add_argument("--seeds", default="0,1,2,3")
    ap.add_argument("--fresh", action="store_true",
                    help="also score the collection's later rounds (held out: the models train on the first "
                         "round's tune split as before)")
    a = ap.parse_args(argv)

    b, _, recs, P, judged = TR.collection_pools(Path(a.cache), rounds=(1, 2) if a.fresh else (1,))
    later = {n: [{**r, "split": "dev"} for r in recs if r.get("round") == rnd]  # each scored as a split of its own
             for n, rnd in (("round 2", 2), ("round 3", 3))}
    later = {n: v for n, v in later.items() if v}
    recs = [r for r in recs if r.get("round", 1) == 1]
    tune = {r["id"] for r in recs if r["split"] == "tune"}
    X, y, groups = TR.training_set(b, recs, P, judged, tune)
    sample = next(p.X for p in P.values() if 180 <= len(p.X) <= 190)
    metrics = ("p@1", "hit@10", "mrr@20")
    # every held-out query (check, informal-dev, the later rounds), for the paired difference against the
    # shipped model: the same queries, per seed, with a 95% bootstrap interval
    held = [r for r in recs if r["split"] in ("check", "dev")] + [r for v in later.values() for r in v]
    shipped_model = train("shipped", X, y, groups, 0)
    shipped = S.per_query(b, held, P, lambda r: shipped_model)
    for config in a.configs.split(";"):
        seeds = [0] if config == "shipped" else [int(s) for s in a.seeds.split(",")]
        rows = []
        for seed in seeds:
            model = train(config, X, y, groups, seed)
            got = TR.evaluate(b, recs, P, model)
            for n, v in later.items():
                got[n] = TR.evaluate(b, v, P, model)["dev"]
            sets = ("check", "dev", *later)
            times = []
            for _ in range(300):
                t = time.perf_counter()
                model.score(sample)
                times.append(time.perf_counter() - t)
            rows.append(got)
            d, lo, hi = S.paired(held, shipped, S.per_query(b, held, P, lambda r, m=model: m))
            print(f"{config} seed {seed}: " + "; ".join(
                f"{s} " + " / ".join(f"{got[s][m]:.3f}" for m in metrics) for s in sets)
                + f"; scores {len(sample)} candidates in {np.median(times) * 1e6:.0f} µs"
                + f"; MRR@20 against the shipped model over {len(held)} held out {d:+.3f} [{lo:+.3f}, {hi:+.3f}]",
                flush=True)
        mean = {s: " / ".join(f"{np.mean([r[s][m] for r in rows]):.3f}" for m in metrics) for s in sets}
        print(f"{config} mean of {len(rows)}: " + ", ".join(f"{s} {v}" for s, v in mean.items())
              + " (P@1 / Hit@10 / MRR@20)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
