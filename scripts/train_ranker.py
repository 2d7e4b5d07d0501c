"""Train the learned ranking stage on the collection's tune split; choose on its check split.

    python scripts/train_ranker.py --out eval/collection/models/ltr.json [--trees 150 --leaves 15] [--rounds 1,2,3]

Pools (mathlas_build.training.ltr.pool: lexical and dense 100 deep over the whole default bundle,
their union) are computed once per query and kept in ``--cache`` (an .npz keyed by query id and the
bundle's label, so a new bundle computes them again). Labels: 2 for a target, 1 for a hit judged
equivalent, 0 otherwise. Prints MRR@20 / P@1 / Hit@10 of the pool's RRF order and of the model on
tune (in-sample), check and informal-dev, each over the queries' relevant ids.

``--mined FILE`` adds pairs mined from the corpora (``python -m mathlas_build.training.mined --out FILE``)
to the tune queries, each pair's pool computed with the query's own text masked out of its targets'
view (``mathlas_build.training.mined.masked_pool``), its rows weighted ``--mined-weight`` (the tune
queries' weigh 1), at most ``--mined-max`` pairs of each origin (in the file's order, which the miner
shuffled); the pools are kept in ``--mined-cache``. Without ``--mined`` nothing changes.
docs/training.md says what it measured.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

from collection import records  # noqa: E402
from mathlas_build.training import collection as C  # noqa: E402
from mathlas_build.training import ltr  # noqa: E402


def pool_stamp(b, extras: tuple[str, ...] = ()) -> str:
    """What a pool cache was made for: the bundle and the feature list (another computes them again)."""
    from mathlas.ranking.learned import FEATURES

    names = (*FEATURES, *extras)
    return f"{b.label}:{len(names)}:{','.join(names)}"


def load_pools(cache: Path | None, stamp: str) -> dict[str, ltr.Pool]:
    """The pools an .npz cache holds (keyed by query or pair id), none when it was made for another stamp."""
    have: dict[str, ltr.Pool] = {}
    if cache and cache.is_file():
        z = np.load(cache, allow_pickle=False)
        if str(z["stamp"]) == stamp and "keys" in z.files:
            for k in z["keys"].tolist():
                have[k] = ltr.Pool(z[f"k_{k}"], z[f"x_{k}"], z[f"k_{k}"])
    return have


def save_pools(cache: Path | None, stamp: str, have: dict[str, ltr.Pool]) -> None:
    if cache:
        arrays = {"stamp": np.array(stamp), "keys": np.array(sorted(have))}
        for k, p in have.items():
            arrays[f"k_{k}"] = p.keys
            arrays[f"x_{k}"] = p.X
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(cache, **arrays)


def pools(b, recs: list[dict], cache: Path | None, extras: tuple[str, ...] = ()) -> dict[str, ltr.Pool]:
    stamp = pool_stamp(b, extras)
    have = load_pools(cache, stamp)
    t0, made = time.time(), 0
    for r in recs:
        if r["id"] not in have:
            have[r["id"]] = ltr.pool(b, r["query"], extras=extras)
            made += 1
    if made:
        print(f"{made} pools made in {time.time() - t0:.0f} s", file=sys.stderr)
        save_pools(cache, stamp, have)
    return have


def fold_of(key: str, folds: int) -> int:
    """The cross-validation fold of a query (or of a group of queries that share a target): a hash of
    ``key``, so every script that says "the folds of train_ranker.py" makes the same ones."""
    return int(hashlib.sha256(f"fold:{key}".encode()).hexdigest()[:8], 16) % folds


def collection_pools(cache: Path | None, bundle: str | None = None, rounds: tuple[int, ...] = (1,)):
    """What a study of the learned stage starts from: the bundle, every collection record of ``rounds``
    (off-topic ones too), those with a relevant id, their pools (``cache``) and the judgments."""
    from mathlas.engine import open_bundle

    b = open_bundle(bundle)
    allrecs = records(offtopic=True, rounds=rounds)
    recs = [r for r in allrecs if r["relevant"]]
    return b, allrecs, recs, pools(b, allrecs, cache), C.judgments(ROOT / "eval" / "collection")


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


def training_set(b, recs, P, judged, ids: set[str]):
    X, y, groups = [], [], []
    for r in recs:
        if r["id"] not in ids or not r["relevant"]:
            continue
        p = P[r["id"]]
        eq = {d for (q, d), j in judged.items() if q == r["id"] and j["label"] == "equivalent"}
        lab = ltr.labels_for(b, p, set(r["targets"]), eq)
        if lab.max() == 0:  # no relevant candidate: nothing to learn from this query
            continue
        X.append(p.X)
        y.append(lab)
        groups.append(len(lab))
    return np.concatenate(X), np.concatenate(y), groups


def mined_set(b, pairs: list[dict], cache: Path | None, weight: float):
    """X, y, groups and weights of the mined pairs (rows labelled -1 left out; a pair with no target in
    its pool left out)."""
    import hashlib

    from mathlas.groups import groups_of
    from mathlas.ranking.learned import FEATURES
    from mathlas_build.training import mined

    def key(p: dict) -> str:
        return p["id"] + "-" + hashlib.sha1(json.dumps(p["views"], sort_keys=True).encode()).hexdigest()[:8]

    stamp = pool_stamp(b)
    have = load_pools(cache, stamp)
    enc = mined.Encodings(b.encoder, cache.with_name(cache.stem + "-encodings.npz") if cache else None)
    t0, made = time.time(), 0

    def save():
        save_pools(cache, stamp, have)

    unmaskable: set[str] = set()
    for p in pairs:
        if key(p) not in have:
            try:
                have[key(p)] = mined.masked_pool(b, p["query"], p["views"], encodings=enc)
            except mined.Unmaskable:
                unmaskable.add(key(p))
                continue
            made += 1
            if made % 200 == 0:
                print(f"{made} mined pools in {time.time() - t0:.0f} s", file=sys.stderr)
                save()
    if made:
        print(f"{made} mined pools made in {time.time() - t0:.0f} s", file=sys.stderr)
        save()
    groups_ = groups_of(b)
    X, y, groups, w, used = [], [], [], [], Counter()
    used["unmaskable-score"] = len(unmaskable)
    for p in pairs:
        if key(p) in unmaskable:
            continue
        pool = have[key(p)]
        lab = mined.labels(b, pool, set(p["targets"]), groups_)
        keep = lab >= 0
        if lab.max() < 2 or keep.sum() < 2:
            used["no-target-in-pool"] += 1
            continue
        used[p["origin"]] += 1
        X.append(pool.X[keep])
        y.append(lab[keep])
        groups.append(int(keep.sum()))
        w.append(np.full(int(keep.sum()), weight, dtype=np.float64))
    print("mined pairs used: " + ", ".join(f"{k} {v}" for k, v in sorted(used.items())), file=sys.stderr)
    if not groups:
        return np.zeros((0, len(FEATURES)), dtype=np.float32), np.zeros(0, dtype=np.int32), [], np.zeros(0), used
    return np.concatenate(X), np.concatenate(y), groups, np.concatenate(w), used


def channel_rankings(p: ltr.Pool) -> dict:
    """Each channel's own ranking as far as the pool holds it (its candidates by their rank there, with
    BM25 / cosine): what the answer's confidence reads at search time (``Ranked.rankings``)."""
    from mathlas.ranking.candidates import Ranking
    from mathlas.ranking.learned import F

    out = {}
    for name, present, logrank, score in (("lexical", "in_lex", "lex_logrank", "lex_score"),
                                          ("dense", "in_dense", "dense_logrank", "cos")):
        rows = np.flatnonzero(p.X[:, F[present]] > 0)
        rows = rows[np.argsort(p.X[rows, F[logrank]], kind="stable")]
        out[name] = Ranking(p.keys[rows], p.X[rows, F[score]])
    return out


def match_row(b, r, p, scores) -> dict:
    """The answer's ``match`` features (``mathlas.ranking.confidence.learned_features``, as search
    computes them) from its pool and the model's scores, and whether the model's first hit is relevant."""
    from match_learned import FEATS

    from mathlas.ranking.confidence import learned_features

    order = np.argsort(-scores, kind="stable")
    f = learned_features(scores[order][:10].tolist(), channel_rankings(p), r["query"])
    ids = b.column("id")
    top = ids[int(p.keys[order[0]])].as_py() if len(order) else None
    return {"x": [f[k] for k in FEATS], "y": float(top in set(r["relevant"])) if r["relevant"] else 0.0}


def fit_match(rows: list[dict]) -> dict:
    """Logistic model and thresholds (scripts/match_learned.py) on out-of-fold rows."""
    from match_learned import FEATS, fit_logistic

    X = np.array([x["x"] for x in rows])
    y = np.array([x["y"] for x in rows])
    w, bias = fit_logistic(X, y)
    c = 1 / (1 + np.exp(-(X @ w + bias)))
    ins = np.array([x["kind"] == "in" for x in rows])
    cin = np.sort(c[ins])
    none_below = float(cin[max(0, int(0.04 * len(cin)) - 1)])
    strong_at = 1.0
    for t in np.unique(np.round(c[ins], 4)):
        above = y[ins][c[ins] >= t]
        if len(above) >= 20 and above.mean() >= 0.92:
            strong_at = float(t)
            break
    return {"features": list(FEATS), "weights": [round(float(v), 6) for v in w], "bias": round(float(bias), 6),
            "none_below": round(none_below, 4), "strong_at": round(strong_at, 4)}


def match_report(rows: list[dict], m: dict) -> dict:
    w, bias = np.array(m["weights"]), m["bias"]
    out = {}
    for split in ("tune", "check", "dev"):
        sub = [x for x in rows if x["split"] == split]
        for x in sub:
            c = 1 / (1 + np.exp(-(np.dot(w, x["x"]) + bias)))
            x["match"] = "strong" if c >= m["strong_at"] else "none" if c < m["none_below"] else "weak"
        ins = [x for x in sub if x["kind"] == "in"]
        strong = [x for x in ins if x["match"] == "strong"]
        off = [x for x in sub if x["kind"] == "off"]
        absent = [x for x in sub if x["kind"] == "absent"]
        out[split] = {"in_corpus": len(ins), "strong": len(strong),
                      "p@1_strong": round(float(np.mean([x["y"] for x in strong])), 3) if strong else None,
                      "false_none": round(float(np.mean([x["match"] == "none" for x in ins])), 3) if ins else None,
                      "offtopic": len(off),
                      "offtopic_none": round(float(np.mean([x["match"] == "none" for x in off])), 3) if off else None,
                      "absent": len(absent),
                      "absent_not_strong": round(float(np.mean([x["match"] != "strong" for x in absent])), 3)
                      if absent else None}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--cache", default=None, help="pool cache (.npz)")
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=15)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--min-data", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--folds", type=int, default=5, help="out-of-fold scores of the tune split for match")
    ap.add_argument("--bundle", help="the bundle whose pools it trains on (default: the default bundle)")
    ap.add_argument("--rounds", default="1",
                    help="the collection's rounds it reads (e.g. 1,2,3): their tune splits train, their check "
                         "splits are reported as check (default 1: the shipped model's training)")
    ap.add_argument("--mined", default=None, help="mined pairs (.jsonl, mathlas_build.training.mined) added to tune")
    ap.add_argument("--mined-weight", type=float, default=1.0, help="weight of a mined pair's rows (tune's: 1)")
    ap.add_argument("--mined-max", type=int, default=0, help="at most this many pairs of each origin (0: all)")
    ap.add_argument("--mined-origins", default="", help="comma-separated origins to use (default: all)")
    ap.add_argument("--mined-cache", default=None,
                    help="the mined pairs' pool cache (.npz; default: beside --cache, '-mined' added)")
    a = ap.parse_args()

    from mathlas.engine import open_bundle
    from mathlas.ranking.learned import model_from_spec

    b = open_bundle(a.bundle)
    try:
        rounds = C.parse_rounds(a.rounds)
    except ValueError as e:
        ap.error(f"--rounds {e}")
    allrecs = records(offtopic=True, rounds=rounds)
    recs = [r for r in allrecs if r["relevant"]]
    P = pools(b, allrecs, Path(a.cache) if a.cache else None)
    judged = C.judgments(ROOT / "eval" / "collection")
    opts = dict(trees=a.trees, leaves=a.leaves, learning_rate=a.lr, min_data=a.min_data, seed=a.seed)
    tune_ids = {r["id"] for r in recs if r["split"] == "tune"}
    mined = None
    if a.mined:
        from mathlas_build.training.mined import read as read_mined

        origins = set(filter(None, a.mined_origins.split(",")))
        taken: Counter = Counter()
        pairs = []
        for p in read_mined(Path(a.mined)):
            if (not origins or p["origin"] in origins) and (not a.mined_max or taken[p["origin"]] < a.mined_max):
                taken[p["origin"]] += 1
                pairs.append(p)
        cache = Path(a.mined_cache) if a.mined_cache else (
            Path(a.cache).with_name(Path(a.cache).stem + "-mined.npz") if a.cache else None)
        mined = mined_set(b, pairs, cache, a.mined_weight)

    def with_mined(X, y, groups):
        if mined is None:
            return X, y, groups, None
        mX, my, mg, mw, _ = mined
        return (np.concatenate([X, mX]), np.concatenate([y, my]), groups + mg,
                np.concatenate([np.ones(len(y)), mw]))

    X, y, groups = training_set(b, recs, P, judged, tune_ids)
    n_tune = len(groups)
    X, y, groups, weight = with_mined(X, y, groups)
    booster = ltr.train(X, y, groups, **opts, weight=weight)
    spec = ltr.export_lightgbm(booster)
    spec["trained_on"] = {"tune_queries": n_tune, "candidates": int(len(y)), "trees": a.trees,
                          "leaves": a.leaves, "learning_rate": a.lr, "min_data_in_leaf": a.min_data,
                          "seed": a.seed, "collection_split_seed": C.SPLIT_SEED,
                          **({"collection_rounds": list(rounds)} if rounds != (1,) else {})}
    if mined is not None:
        spec["trained_on"]["mined"] = {"file": Path(a.mined).name, "weight": a.mined_weight,
                                       "pairs": dict(mined[4]), "max_per_origin": a.mined_max}
    model = model_from_spec(spec)
    # the exported arrays must give LightGBM's own scores
    assert np.allclose(model.score(X[:500]), booster.predict(X[:500]), atol=1e-4), "export differs from LightGBM"
    before, after = evaluate(b, recs, P), evaluate(b, recs, P, model)

    # match: fitted on out-of-fold scores of the tune split (a model never scores its own training queries)
    def fold(qid: str) -> int:
        return fold_of(qid, a.folds)

    def kind(r) -> str:
        return "off" if r.get("area") == "offtopic" else ("in" if r["targets"] else "absent")

    rows = []
    for f in range(a.folds):
        ids = {q for q in tune_ids if fold(q) != f}
        Xf, yf, gf, wf = with_mined(*training_set(b, recs, P, judged, ids))
        mf = model_from_spec(ltr.export_lightgbm(ltr.train(Xf, yf, gf, **opts, weight=wf)))
        for r in allrecs:
            if r["split"] == "tune" and fold(r["id"]) == f:
                rows.append({"id": r["id"], "split": "tune", "kind": kind(r),
                             **match_row(b, r, P[r["id"]], mf.score(P[r["id"]].X))})
    for r in allrecs:
        if r["split"] != "tune":
            rows.append({"id": r["id"], "split": r["split"], "kind": kind(r),
                         **match_row(b, r, P[r["id"]], model.score(P[r["id"]].X))})
    match = fit_match([x for x in rows if x["split"] == "tune"])
    spec["match"] = {k: v for k, v in match.items() if k != "features"}
    spec["measured"] = {"rrf": before, "model": after, "match": match_report(rows, match)}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    ltr.save(spec, a.out)
    print(json.dumps(spec["measured"], indent=1))
    imp = booster.feature_importance("gain")
    from mathlas.ranking.learned import FEATURES
    top = sorted(zip(imp, FEATURES), reverse=True)[:12]
    print("gain:", ", ".join(f"{f} {g:.0f}" for g, f in top))


if __name__ == "__main__":
    main()
