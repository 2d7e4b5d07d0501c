"""Training the learned ranking stage (``mathlas.ranking.learned``) on judged queries.

``pool(bundle, query)`` is the candidate pool of one query exactly as the runtime stage sees it: every
channel's ranking ``depth`` deep over the whole bundle, the exact dense cosine of every candidate,
the RRF score with the bundle's fusion settings, and the ``FEATURES`` matrix. ``train`` fits
LightGBM's lambdarank on the pools of the tune queries (label 2: a target, 1: judged equivalent,
0: anything else) and exports the trees as ``mathlas.ranking.learned.TreeModel``'s arrays.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from mathlas.ranking.filters import Filters
from mathlas.ranking.fusion import rrf
from mathlas.ranking.intent import definition_intent
from mathlas.ranking.learned import FEATURES, DocInfo, features, ranks_in

DEPTH = 100


@dataclass
class Pool:
    keys: np.ndarray
    X: np.ndarray
    rrf_order: np.ndarray     # the pool's keys in RRF order


_INFO: dict[int, DocInfo] = {}


def doc_info(bundle) -> DocInfo:
    info = _INFO.get(id(bundle))
    if info is None:
        info = _INFO[id(bundle)] = DocInfo.of(bundle.table)
    return info


def pool(bundle, query: str, depth: int = DEPTH, extras: tuple[str, ...] = ()) -> Pool:
    """``extras``: some of ``EXTRA_FEATURES``, columns after ``FEATURES`` (a model trained with them)."""
    from mathlas.ranking.abbreviations import expand_for
    from mathlas.ranking.pipeline import pipeline_for

    q, _ = expand_for(bundle, query)
    pipeline = pipeline_for(bundle)
    vector = pipeline.query_vector(q)
    rankings = pipeline.search_channels(q, depth, Filters(), "hybrid", None, vector)
    fusion = bundle.fusion
    fused = rrf(rankings, 2 * depth, k_rrf=float(fusion["k_rrf"]), channel_weights=dict(fusion["weights"]))
    keys = np.array([f.key for f in fused], dtype=np.int64)
    rrf_scores = np.array([f.score for f in fused], dtype=np.float32)
    cos = bundle.dense.rescore(vector, keys) if len(keys) else np.zeros(0, dtype=np.float32)
    lex_rank, lex_raw = ranks_in(rankings.get("lexical"), keys)
    dense_rank, _ = ranks_in(rankings.get("dense"), keys)
    X = features(doc_info(bundle), q, keys, lex_rank, lex_raw, dense_rank, cos, rrf_scores, definition_intent(query),
                 extras)
    return Pool(keys, X, keys)


def labels_for(bundle, p: Pool, targets: set[str], equivalent: set[str]) -> np.ndarray:
    ids = bundle.column("id")
    y = np.zeros(len(p.keys), dtype=np.int32)
    for i, k in enumerate(p.keys.tolist()):
        d = ids[k].as_py()
        if d in targets:
            y[i] = 2
        elif d in equivalent:
            y[i] = 1
    return y


def export_lightgbm(booster) -> dict:
    """LightGBM's trees as flat arrays: node i -> (feature, threshold, left, right, value); leaves point
    to themselves so a fixed number of levels ends on them."""
    dump = booster.dump_model()
    trees = []
    depth = 0
    for t in dump["tree_info"]:
        feature, threshold, left, right, value = [], [], [], [], []

        def add(node, level):
            nonlocal depth
            i = len(feature)
            feature.append(0)
            threshold.append(0.0)
            left.append(i)
            right.append(i)
            value.append(0.0)
            if "leaf_value" in node or "split_feature" not in node:
                value[i] = float(node.get("leaf_value", 0.0))
                depth = max(depth, level)
                return i
            if node.get("decision_type", "<=") != "<=":
                raise ValueError(f"unsupported split {node.get('decision_type')}")
            feature[i] = int(node["split_feature"])
            threshold[i] = float(node["threshold"])
            # LightGBM sends missing values left by default; features here are never missing
            left[i] = add(node["left_child"], level + 1)
            right[i] = add(node["right_child"], level + 1)
            return i

        add(t["tree_structure"], 0)
        trees.append({"feature": feature, "threshold": threshold, "left": left, "right": right, "value": value})
    names = list(booster.feature_name())
    extras = tuple(names[len(FEATURES):]) if names[:len(FEATURES)] == list(FEATURES) else ()
    return {"kind": "trees", "features": [*FEATURES, *extras], "depth": depth, "trees": trees, "base": 0.0}


def train(X: np.ndarray, y: np.ndarray, groups: list[int], *, trees: int = 150, leaves: int = 15,
          learning_rate: float = 0.05, min_data: int = 20, seed: int = 0, valid=None,
          weight: np.ndarray | None = None, feature_names: list[str] | None = None, extras: tuple[str, ...] = (),
          sample: float = 0.9, truncation: int = 20, label_gain: list[float] | None = None):
    """LightGBM lambdarank on ``groups`` (candidates per query, in order); ``sample``: the share of rows
    (bagging, each tree) and of features (each tree) a tree sees, drawn by ``seed`` (1.0: every tree sees
    all, and the seed changes nothing); ``weight``: one per
    candidate (it scales that query's gradients: the mined pairs' share, ``scripts/train_ranker.py --mined``);
    ``feature_names``: X's columns when they are not ``FEATURES`` (a study of a new feature);
    ``extras``: the ``EXTRA_FEATURES`` X holds after them (the export names them); ``truncation``: the
    ranks LambdaRank's pairs reach (``lambdarank_truncation_level``), ``label_gain``: each label's gain
    (LightGBM's default, 2^label - 1, when None): ``scripts/study_ranker_objective.py`` varies both."""
    if not 0 < sample <= 1:
        raise ValueError(f"sample is a share of the rows and features, in (0, 1]: {sample}")
    try:
        import lightgbm as lgb
    except ImportError:
        raise SystemExit("training the learned ranking stage needs LightGBM: pip install 'mathlas[build]'") from None

    params = {"objective": "lambdarank", "metric": "ndcg", "ndcg_eval_at": [1, 10], "num_leaves": leaves,
              "learning_rate": learning_rate, "min_data_in_leaf": min_data, "feature_fraction": sample,
              "bagging_fraction": sample, "bagging_freq": 1 if sample < 1 else 0,
              "lambdarank_truncation_level": truncation, "seed": seed, "deterministic": True, "num_threads": 2,
              "verbose": -1}
    if label_gain is not None:
        params["label_gain"] = list(label_gain)
    data = lgb.Dataset(X, y, group=groups, feature_name=list(feature_names or (*FEATURES, *extras)),
                       weight=weight)
    booster = lgb.train(params, data, num_boost_round=trees)
    return booster


def save(spec: dict, path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(spec, f, separators=(",", ":"))


def attach(bundle_dir, model_path, *, measured: dict | None = None, amend=None) -> dict:
    """Put a trained model into a bundle directory as ``ranker/model.json`` and declare it in the
    manifest (``ranker``: file, features, what it was trained on, what it measured), with its size and
    checksum in ``files``; ``amend(manifest)``, when given, changes the manifest too, before its one
    write (``mathlas-build add-ranker --version``). Returns the manifest's ``ranker`` block."""
    from pathlib import Path

    from mathlas.bundle import FileEntry, read_manifest, sha256_file, write_manifest
    from mathlas.ranking.learned import DOCINFO_FILE, MODEL_FILE, RANKER_DIR, model_from_spec

    root = Path(bundle_dir)
    spec = json.loads(Path(model_path).read_text(encoding="utf-8"))
    model_from_spec(spec)  # refuses a model of other features
    (root / RANKER_DIR).mkdir(exist_ok=True)
    target = root / RANKER_DIR / MODEL_FILE
    target.write_text(json.dumps(spec, separators=(",", ":")), encoding="utf-8")
    m = read_manifest(root)
    rel = f"{RANKER_DIR}/{MODEL_FILE}"
    m.files[rel] = FileEntry(size=target.stat().st_size, sha256=sha256_file(target))
    # the per-document arrays its features read, so that a search does not make them from the table
    from mathlas.engine import Bundle

    info_path = root / RANKER_DIR / DOCINFO_FILE
    DocInfo.of(Bundle(root, m).table).save(info_path)
    m.files[f"{RANKER_DIR}/{DOCINFO_FILE}"] = FileEntry(size=info_path.stat().st_size, sha256=sha256_file(info_path))
    m.ranker = {"file": MODEL_FILE, "docinfo": DOCINFO_FILE, "kind": spec["kind"], "features": list(spec["features"]),
                "trees": len(spec.get("trees", [])), "trained_on": spec.get("trained_on", {}),
                "measured": measured if measured is not None else spec.get("measured", {})}
    if spec.get("match"):  # the answers' match model (mathlas.ranking.confidence, mode "learned")
        m.ranker["match"] = spec["match"]
    if amend is not None:
        amend(m)
    write_manifest(root, m)
    return m.ranker
