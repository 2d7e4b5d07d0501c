"""Train the learned ranking stage of a formal (Lean) bundle on query sets with targets, measured out of fold.

    python scripts/train_ranker_formal.py --bundle mathlib \\
        --sets ../shared/eval/formal-qr-dev.jsonl ../shared/eval/formal-dev.jsonl \\
        --out artifacts/rankers/mathlib-ltr-1.json --cache work/formal-pools.npz [--folds 5] [--extras log_pagerank]

The formal sets have targets and no judged equivalents: a target is label 2, any other candidate 0.
Queries that share a target (formal-qr-dev asks for one declaration in several styles, and formal-dev
may ask for a declaration formal-qr-dev asks for) are kept in one fold: the folds are the connected
components of "shares a target", hashed into ``--folds`` groups, so that no query is scored by a model
trained on another wording of it.

It prints, per set and per style, the bundle's ranking as it is (RRF and the stages) against the
ranking with the learned stage, each query ranked by ``Bundle.search`` with the model of the fold that
did not see it (out of fold: the figures a new query can expect), with 95% paired bootstrap intervals
of the differences. Then it fits the final model on every query, the answers' ``match`` on the
out-of-fold scores (in-corpus queries: the sets; out-of-field: the collection's off-topic queries),
and writes the model (``mathlas_build.training.ltr.attach`` puts it into a bundle; the recipe's
``[ranker]`` names it). ``--extras``: columns of ``mathlas.ranking.learned.EXTRA_FEATURES`` the model
reads after the 34 features (``log_pagerank``: the declaration's PageRank in the dependency graph).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

from mathlas_build.training import collection as C  # noqa: E402
from mathlas_build.training import ltr  # noqa: E402
from train_ranker import fit_match, fold_of, match_row, pools  # noqa: E402


def read_sets(paths: list[str]) -> list[dict]:
    recs = []
    for path in paths:
        name = Path(path).stem
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line)
                recs.append({**q, "set": name, "id": f"{name}:{q['id']}", "relevant": list(q["targets"])})
    return recs


def folds_of(recs: list[dict], folds: int) -> dict[str, int]:
    """Each query's fold: queries sharing a target are one component, and a component is one fold."""
    parent = {r["id"]: r["id"] for r in recs}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_target = defaultdict(list)
    for r in recs:
        for t in r["targets"]:
            by_target[t].append(r["id"])
    for ids in by_target.values():
        for other in ids[1:]:
            parent[find(other)] = find(ids[0])
    return {r["id"]: fold_of(find(r["id"]), folds) for r in recs}


def train_on(b, recs, P, ids: set[str], opts: dict):
    X, y, groups = [], [], []
    for r in recs:
        if r["id"] not in ids:
            continue
        p = P[r["id"]]
        lab = ltr.labels_for(b, p, set(r["targets"]), set())
        if lab.max() == 0:
            continue
        X.append(p.X)
        y.append(lab)
        groups.append(len(lab))
    booster = ltr.train(np.concatenate(X), np.concatenate(y), groups, **opts)
    return booster, len(groups), int(sum(groups))


class Using:
    """The bundle ranks with ``model`` (and its DocInfo) while inside; a bundle without a model of its
    own otherwise (the formal bundles are built without one)."""

    def __init__(self, b, model, info):
        self.b, self.model, self.info = b, model, info

    def __enter__(self):
        from mathlas.ranking import learned

        self.saved = dict(self.b.manifest.ranker or {})
        self.b.manifest.ranker = {"file": learned.MODEL_FILE, "features": [*learned.FEATURES, *self.model.extras]}
        learned._MODELS[self.b] = (self.model, self.info)
        return self

    def __exit__(self, *exc):
        from mathlas.ranking import learned

        learned._MODELS.pop(self.b, None)
        self.b.manifest.ranker = self.saved


def ranked(b, recs, k: int = 20) -> dict[str, list[str]]:
    return {r["id"]: [h.id for h in b.search(r["query"], k=k)] for r in recs}


def report(recs, base: dict, new: dict, label: str) -> dict:
    out = {}
    sets = sorted({r["set"] for r in recs})
    for s in sets:
        for style in [None, *sorted({r.get("style", "") for r in recs if r["set"] == s})]:
            sub = [r for r in recs if r["set"] == s and (style is None or r.get("style") == style)]
            row = {"n": len(sub)}
            for name, run in (("before", base), (label, new)):
                per = [C.metrics_of(run[r["id"]], set(r["relevant"])) for r in sub]
                row[name] = {m: round(float(np.mean([x[m] for x in per])), 3) for m in ("p@1", "hit@10", "mrr@20")}
            d, lo, hi = C.paired(sub, base, new)
            row["delta_mrr@20"] = [round(d, 3), round(lo, 3), round(hi, 3)]
            d, lo, hi = C.paired(sub, base, new, metric="hit@10")
            row["delta_hit@10"] = [round(d, 3), round(lo, 3), round(hi, 3)]
            out[f"{s}/{style or 'all'}"] = row
    return out


# "strong" says the first hit is most likely right: at this rate or more on every set, each read alone
# (both sets together let formal-dev's titles, nearly all right, carry formal-qr-dev's descriptions:
# with the PageRank columns its strong answers were right first 64% of the time in sample)
STRONG_PRECISION = 0.9
STRONG_LEAST = 10


def strong_for_every_set(rows: list[dict], match: dict) -> float:
    """``match``'s strong_at raised until the in-corpus rows of each set (the id's prefix) at or above it
    have their first hit right at ``STRONG_PRECISION`` or more (a set with fewer than ``STRONG_LEAST``
    rows there says nothing; none may: 1.0, nothing strong)."""
    w, bias = np.array(match["weights"]), match["bias"]
    ins = [x for x in rows if x["kind"] == "in"]
    conf = np.array([1 / (1 + np.exp(-(np.dot(w, x["x"]) + bias))) for x in ins])
    y = np.array([x["y"] for x in ins])
    sets = np.array([x["id"].split(":", 1)[0] for x in ins])
    for t in sorted({round(float(c), 4) for c in conf if c >= match["strong_at"]}):
        if all((sets == s).sum() == 0 or ((sets == s) & (conf >= t)).sum() < STRONG_LEAST
               or y[(sets == s) & (conf >= t)].mean() >= STRONG_PRECISION for s in set(sets.tolist())):
            return t
    return 1.0


def match_figures(verdict: list[tuple]) -> dict:
    ins = [v for v in verdict if v[0] == "in"]
    strong = [v for v in ins if v[2] == "strong"]
    return {"in_corpus": len(ins), "strong": len(strong),
            "p@1_strong": round(float(np.mean([v[1] for v in strong])), 3) if strong else None,
            "false_none": round(float(np.mean([v[2] == "none" for v in ins])), 3) if ins else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", default="mathlib")
    ap.add_argument("--sets", nargs="+", required=True, help="query sets (.jsonl with targets)")
    ap.add_argument("--out", required=True, help="the model (.json)")
    ap.add_argument("--cache", default=None, help="pool cache (.npz)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=15)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--min-data", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--report", default=None, help="write the measured figures here (.json)")
    ap.add_argument("--extras", default="", help="comma-separated EXTRA_FEATURES the model reads (e.g. log_pagerank)")
    a = ap.parse_args()

    from mathlas.engine import open_bundle
    from mathlas.ranking.learned import EXTRA_FEATURES, FEATURES, extras_of, model_from_spec

    extras = tuple(x for x in a.extras.split(",") if x)
    try:
        extras_of([*FEATURES, *extras])
    except ValueError:
        raise SystemExit(f"train_ranker_formal.py: --extras must be some of {', '.join(EXTRA_FEATURES)} in that "
                         f"order, got {a.extras!r}") from None
    b = open_bundle(a.bundle)
    if b.manifest.ranker:
        raise SystemExit(f"{b.label} carries a model already: train on a bundle built without one")
    recs = read_sets(a.sets)
    off = [{**r, "id": f"offtopic:{r['id']}", "set": "offtopic"} for r in C.load(ROOT / "eval" / "collection",
                                                                                   with_offtopic=True)
           if r.get("area") == "offtopic"]
    t0 = time.time()
    P = pools(b, recs + off, Path(a.cache) if a.cache else None, extras)
    print(f"pools ready in {time.time() - t0:.0f} s", file=sys.stderr)
    fold = folds_of(recs, a.folds)
    opts = dict(trees=a.trees, leaves=a.leaves, learning_rate=a.lr, min_data=a.min_data, seed=a.seed, extras=extras)
    info = ltr.doc_info(b)

    t0 = time.time()
    base = ranked(b, recs)
    print(f"ranked without a model in {time.time() - t0:.0f} s", file=sys.stderr)
    oof: dict[str, list[str]] = {}
    rows = []
    for f in range(a.folds):
        booster, n, _ = train_on(b, recs, P, {r["id"] for r in recs if fold[r["id"]] != f}, opts)
        model = model_from_spec(ltr.export_lightgbm(booster))
        held = [r for r in recs if fold[r["id"]] == f]
        with Using(b, model, info):
            oof.update(ranked(b, held))
        for r in held:
            rows.append({"id": r["id"], "split": "tune", "kind": "in", **match_row(b, r, P[r["id"]],
                                                                                    model.score(P[r["id"]].X))})
        for r in off:  # out-of-field queries, scored by every fold's model
            rows.append({"id": r["id"], "split": "tune", "kind": "off",
                         **match_row(b, {**r, "relevant": []}, P[r["id"]], model.score(P[r["id"]].X))})
        print(f"fold {f}: trained on {n} queries, {len(held)} held out", file=sys.stderr)
    measured = report(recs, base, oof, "learned, out of fold")

    booster, n, cands = train_on(b, recs, P, {r["id"] for r in recs}, opts)
    spec = ltr.export_lightgbm(booster)
    match = fit_match(rows)
    match["strong_at"] = strong_for_every_set(rows, match)
    spec["match"] = {k: v for k, v in match.items() if k != "features"}
    w, bias = np.array(match["weights"]), match["bias"]
    verdict = []
    for x in rows:
        c = 1 / (1 + np.exp(-(np.dot(w, x["x"]) + bias)))
        verdict.append((x["kind"], x["y"], "strong" if c >= match["strong_at"] else "none" if c < match["none_below"]
                        else "weak", x["id"].split(":", 1)[0]))
    offs = [v for v in verdict if v[0] == "off"]
    measured["match, out of fold"] = {**match_figures(verdict), "offtopic_rows": len(offs),
                                      "offtopic_none": round(float(np.mean([v[2] == "none" for v in offs])), 3)}
    for name in sorted({v[3] for v in verdict if v[0] == "in"}):
        measured["match, out of fold"][name] = match_figures([v for v in verdict if v[3] == name])
    spec["trained_on"] = {"sets": [Path(s).name for s in a.sets], "queries": n, "candidates": cands,
                          "trees": a.trees, "leaves": a.leaves, "learning_rate": a.lr, "min_data_in_leaf": a.min_data,
                          "seed": a.seed, "folds": a.folds, "bundle": b.label, "labels": "targets 2, others 0",
                          "extras": list(extras)}
    spec["measured"] = measured
    model_from_spec(spec)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    ltr.save(spec, a.out)
    print(json.dumps(measured, indent=1))
    if a.report:
        Path(a.report).write_text(json.dumps({"measured": measured, "base": base, "oof": oof}, indent=1),
                                  encoding="utf-8")
    imp = booster.feature_importance("gain")
    top = sorted(zip(imp, booster.feature_name()), reverse=True)[:12]
    print("gain:", ", ".join(f"{f} {g:.0f}" for g, f in top))


if __name__ == "__main__":
    main()
