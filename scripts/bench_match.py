"""Fit and measure the answers' ``match`` (``mathlas.ranking.confidence``): does it say ``none`` when the
sources do not hold what was asked, and rarely when they do?

For each dev query (default: informal-dev on the default bundle) the script records the channels'
raw top ten (``Pipeline.rank(...).rankings``) four ways:

* ``asked``: as asked, over the whole bundle (the query's targets are there: a ``none`` is false);
* ``hidden``: with the targets hidden inside both channels (``SearchRequest.mask``);
* ``restated``: with the targets hidden and every document that restates one of them too (its
  stored vector's cosine with a target's >= ``--restated-cos``): other sources often state the
  same theorem, and with those present ``none`` would be the wrong answer anyway;
* ``elsewhere``: asked of the bundle's sources of another field only (logic and HoTT queries of
  ``--far-a``, the others of ``--far-b``), the stand-in for a bundle of another kind;
* ``other-kind``: asked of ``--other-bundle`` (e.g. informal queries of the Mathlib bundle), when given.

The logistic model of each mode is fitted on ``asked`` (label 1) against ``restated`` and
``elsewhere`` and ``other-kind`` where the run has them (label 0), classes weighted equally; ``none_below`` is the highest threshold that
flags at most ``--max-false-none`` of ``asked`` in-sample (2.5%, so that the cross-validated rate
stays under the 5% allowed); ``strong_at`` the confidence that at most 5% of the
negative queries reach and, with ``--strong-precision P``, at or above which the first hit of at least
a share P of the asked queries is a target ("a clear match: most likely the first hit" must be so;
the hybrid model judges answers that keep RRF, so its first hit is RRF's). The rates are then measured
by leave-one-query-out (fit and thresholds from the other queries), with bootstrap 95% intervals over
queries: 40 queries is a small sample, and the intervals say how small.

``--set collection`` asks the judged collection instead (``eval/collection``: every query with a
target, tune and check, and informal-dev; each query's targets are its relevant ids, targets and
judged equivalents), and also reports ``none`` on its off-topic queries (cooking, tax, travel), each
judged by the model fitted on all the others.

    python scripts/bench_match.py [--set informal-dev.jsonl] [--bundle SPEC] [--json out.json]
    python scripts/bench_match.py --set collection --strong-precision 0.9
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mathlas.ranking.confidence import FEATURES, features  # noqa: E402

NEGATIVES = ("restated", "elsewhere", "other-kind")  # those a run has
MODES = ("hybrid", "dense", "lexical")
LOGIC_PREFIXES = ("openlogic", "hott")


def collect(set_path: str, bundle_spec: str | None, restated_cos: float, far_a: list[str], far_b: list[str],
            other_bundle: str | None) -> list[dict]:
    """Per query and condition: the features, and (asked) the rank of the first target in hybrid."""
    from mathlas.engine import open_bundle
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas.request import SearchRequest
    from mathlas.retrieval_eval import load_queries

    b = open_bundle(bundle_spec)
    other = open_bundle(other_bundle) if other_bundle else None
    n = len(b)
    dense = b.dense
    codes = np.asarray(b.source_codes)
    k_rrf = float((b.manifest.fusion or {}).get("k_rrf", 60))
    rows = []
    for q in (collection_queries() if set_path == "collection" else load_queries(set_path)):
        keys = []
        for t in q["targets"]:
            try:
                keys.append(b.key_of(t))
            except Exception:
                pass
        if not keys:
            print(f"{q['id']}: no target in {b.label}; left out", file=sys.stderr)
            continue
        hidden = np.ones(n, dtype=bool)
        hidden[keys] = False
        restated = hidden.copy()
        every = np.arange(n, dtype=np.int64)
        for k in keys:
            t = np.asarray(dense.vectors[k], dtype=np.float32)
            t /= np.linalg.norm(t) or 1.0
            restated &= dense.rescore(t, every) < restated_cos
        far = far_b if any(t.split(":", 1)[0] in LOGIC_PREFIXES for t in q["targets"]) else far_a
        elsewhere = np.isin(codes, [b.source_names.index(s) for s in far if s in b.source_names])
        conds = {"asked": (b, None), "hidden": (b, hidden), "restated": (b, restated)}
        if elsewhere.any():  # a bundle of one source (Mathlib) has no other field to ask
            conds["elsewhere"] = (b, elsewhere)
        if other is not None:
            conds["other-kind"] = (other, None)
        row = {"id": q["id"], "style": q.get("style", ""), "restated_hidden": int((~restated).sum())}
        for cond, (bb, mask) in conds.items():
            ranked = pipeline_for(bb).rank(SearchRequest.make(q["query"], 10, mask=mask))
            hits, rk = ranked.hits, ranked.rankings
            row[cond] = {m: features({c: rk[c] for c in rk if m == "hybrid" or c == m}, q["query"]) for m in MODES}
            if cond == "asked":
                ids = [h.id for h in hits]
                row["rank"] = next((i + 1 for i, x in enumerate(ids) if x in q["targets"]), None)
                # the hybrid model judges the answers that keep RRF (a bundle's learned stage has its own)
                rrf = pipeline_for(bb).rank(SearchRequest.make(q["query"], 10, k_rrf=k_rrf)).hits
                row["rank_by_mode"] = {"hybrid": next((i + 1 for i, h in enumerate(rrf) if h.id in q["targets"]), None)}
                for m in ("dense", "lexical"):
                    mh = pipeline_for(bb).rank(SearchRequest.make(q["query"], 10, mode=m)).hits
                    row["rank_by_mode"][m] = next((i + 1 for i, h in enumerate(mh) if h.id in q["targets"]), None)
        rows.append(row)
        print(f"{q['id']}: rank {row['rank']}, {row['restated_hidden']} documents hidden as restatements",
              file=sys.stderr)
    return rows


def collection_queries(offtopic: bool = False) -> list[dict]:
    """The judged collection's queries with a target (tune, check and informal-dev; targets: the
    relevant ids), or its off-topic ones (``offtopic``), in the dev sets' shape."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from collection import records

    out = []
    for r in records(offtopic=True):
        if offtopic == (r.get("area") == "offtopic") and (offtopic or r["relevant"]):
            out.append({"id": r["id"], "query": r["query"], "targets": list(r["relevant"]),
                        "style": r.get("style", ""), "split": r["split"]})
    return out


def offtopic_rows(bundle_spec: str | None) -> list[dict]:
    """Each off-topic query's features per mode, asked of the whole bundle."""
    from mathlas.engine import open_bundle
    from mathlas.ranking.pipeline import pipeline_for
    from mathlas.request import SearchRequest

    b = open_bundle(bundle_spec)
    rows = []
    for q in collection_queries(offtopic=True):
        rk = pipeline_for(b).rank(SearchRequest.make(q["query"], 10)).rankings
        rows.append({"id": q["id"], "offtopic": {m: features({c: rk[c] for c in rk if m == "hybrid" or c == m},
                                                             q["query"]) for m in MODES}})
    return rows


# ------------------------------------------------------------------------------ the model

def _matrix(rows: list[dict], cond: str, mode: str) -> np.ndarray:
    return np.array([[r[cond][mode][f] for f in FEATURES[mode]] for r in rows], dtype=np.float64)


def fit(rows: list[dict], mode: str, max_false_none: float, l2: float = 1.0,
        strong_precision: float | None = None) -> dict:
    """The logistic model (weights over raw features) and thresholds from ``rows``; with
    ``strong_precision``, ``strong_at`` is also no lower than where the asked queries at or above it
    have their target first at that rate."""
    pos = _matrix(rows, "asked", mode)
    neg = np.vstack([_matrix(rows, c, mode) for c in NEGATIVES if c in rows[0]])
    x = np.vstack([pos, neg])
    y = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
    sw = np.where(y == 1, 0.5 / len(pos), 0.5 / len(neg)) * len(y)  # the two classes weigh the same
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    for _ in range(50):  # Newton's method on the L2-penalised weighted log-loss (the bias unpenalised)
        p = 1 / (1 + np.exp(-z @ w))
        reg = np.r_[np.full(z.shape[1] - 1, l2), 0.0]
        g = z.T @ (sw * (p - y)) + reg * w
        h = (z * (sw * p * (1 - p))[:, None]).T @ z + np.diag(reg)
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    weights = w[:-1] / sd
    bias = w[-1] - float((w[:-1] * mu / sd).sum())
    model = {"weights": [round(float(v), 4) for v in weights], "bias": round(float(bias), 4)}
    cp = np.sort(confidences(pos, model))
    cn = np.sort(confidences(neg, model))
    allowed = int(math.floor(max_false_none * len(cp)))  # positives that may fall below the threshold
    model["none_below"] = round(float(cp[allowed]) - 1e-4, 4) if allowed < len(cp) else 0.0
    strong_at = max(float(cn[min(len(cn) - 1, int(math.ceil(0.95 * len(cn))))]) + 1e-4, model["none_below"])
    if strong_precision is not None:
        strong_at = max(strong_at, precise_from(rows, mode, model, strong_precision))
    model["strong_at"] = round(strong_at, 4)
    return model


def precise_from(rows: list[dict], mode: str, model: dict, precision: float, least: int = 10) -> float:
    """The lowest confidence at or above which the asked queries have their target first (in ``mode``'s
    ranking) at least at the rate ``precision``: the largest set of the most confident queries (at
    least ``least`` of them) that is that precise; 1.0001 (nothing strong) when none is."""
    c = confidences(_matrix(rows, "asked", mode), model)
    first = np.array([r["rank_by_mode"][mode] == 1 for r in rows], dtype=float)
    order = np.argsort(-c, kind="stable")
    share = np.cumsum(first[order]) / np.arange(1, len(c) + 1)   # P@1 of the i+1 most confident
    ok = np.flatnonzero(share[least - 1:] >= precision) + least - 1
    return float(c[order[ok[-1]]]) if len(ok) else 1.0001


def confidences(x: np.ndarray, model: dict) -> np.ndarray:
    zz = x @ np.asarray(model["weights"]) + model["bias"]
    return 1 / (1 + np.exp(-np.clip(zz, -40, 40)))


def label(c: np.ndarray, model: dict) -> np.ndarray:
    return np.where(c >= model["strong_at"], "strong", np.where(c < model["none_below"], "none", "weak"))


def cross_validated(rows: list[dict], mode: str, max_false_none: float,
                    strong_precision: float | None = None) -> dict[str, list[str]]:
    """Leave one query out: each query's labels under each condition, from a model fitted without it."""
    conds = [c for c in ("asked", "hidden", "restated", "elsewhere", "other-kind") if c in rows[0]]
    out: dict[str, list[str]] = {c: [] for c in conds}
    for i in range(len(rows)):
        model = fit(rows[:i] + rows[i + 1:], mode, max_false_none, strong_precision=strong_precision)
        for c in conds:
            out[c].append(str(label(confidences(_matrix([rows[i]], c, mode), model), model)[0]))
    return out


def share(flags: list[str], what: str = "none", rounds: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """The share of ``what`` among ``flags``, with a bootstrap 95% interval over queries."""
    hits = [f == what for f in flags]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(hits) for _ in hits) / len(hits) for _ in range(rounds))
    return sum(hits) / len(hits), means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def curve(rows: list[dict], mode: str, model: dict, thresholds) -> list[dict]:
    """In-sample: at each ``none_below``, the false-none rate and the share flagged per condition."""
    conds = [c for c in ("asked", "hidden", "restated", "elsewhere", "other-kind") if c in rows[0]]
    cs = {c: confidences(_matrix(rows, c, mode), model) for c in conds}
    return [{"none_below": t, **{c: round(float((cs[c] < t).mean()), 3) for c in conds}} for t in thresholds]


def fmt(s: tuple[float, float, float]) -> str:
    return f"{s[0]:.3f} [{s[1]:.2f}, {s[2]:.2f}]"


def main() -> int:
    here = Path(__file__).resolve().parents[1]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default=str(here.parent / "shared" / "eval" / "informal-dev.jsonl"),
                    help="a dev set (JSON Lines: query, targets)")
    ap.add_argument("--bundle", default=None, help="the bundle (default: the default bundle)")
    ap.add_argument("--other-bundle", default=None, help="a bundle of the other kind, asked too (a negative)")
    ap.add_argument("--restated-cos", type=float, default=0.9,
                    help="hide documents whose vector has at least this cosine with a target's (default 0.9)")
    ap.add_argument("--far-a", default="openlogic,hott", help="sources asked the non-logic queries (elsewhere)")
    ap.add_argument("--far-b", default="stacks", help="sources asked the logic and HoTT queries (elsewhere)")
    ap.add_argument("--max-false-none", type=float, default=0.025,
                    help="the share of asked queries the fitted none_below may flag in-sample (default 0.025: "
                         "half the 5%% allowed, since on 40 queries the cross-validated rate runs higher)")
    ap.add_argument("--strong-precision", type=float, default=None,
                    help="strong_at no lower than where the asked queries' first hit is a target at this rate "
                         "(e.g. 0.9; default: the negatives alone set it)")
    ap.add_argument("--rows", default=None, help="reuse the features saved by an earlier run (--save)")
    ap.add_argument("--save", default=None, help="save the features collected")
    ap.add_argument("--json", default=None, help="write the fitted models and measurements here")
    args = ap.parse_args()
    if args.rows:
        rows = json.loads(Path(args.rows).read_text())
    else:
        rows = collect(args.set, args.bundle, args.restated_cos, args.far_a.split(","), args.far_b.split(","),
                       args.other_bundle)
        if args.save:
            Path(args.save).write_text(json.dumps(rows))
    if args.strong_precision is not None and not 0 < args.strong_precision <= 1:
        raise SystemExit(f"bench_match.py: --strong-precision must be in (0, 1], got {args.strong_precision}")
    off = offtopic_rows(args.bundle) if args.set == "collection" else []
    report: dict = {"queries": len(rows), "modes": {}}
    for mode in MODES:
        model = fit(rows, mode, args.max_false_none, strong_precision=args.strong_precision)
        cv = cross_validated(rows, mode, args.max_false_none, args.strong_precision)
        ranks = [r["rank_by_mode"][mode] for r in rows]
        insample = label(confidences(_matrix(rows, "asked", mode), model), model)
        p1 = {m: (sum(1 for r, f in zip(ranks, insample) if f == m and r == 1), int((insample == m).sum()))
              for m in ("strong", "weak", "none")}
        p1_cv = {m: (sum(1 for r, f in zip(ranks, cv["asked"]) if f == m and r == 1), cv["asked"].count(m))
                 for m in ("strong", "weak", "none")}
        res = {"model": model,
               "cv_false_none": share(cv["asked"]),
               "cv_none_share": {c: share(v) for c, v in cv.items() if c != "asked"},
               "cv_strong_share": {c: share(v, "strong") for c, v in cv.items()},
               "p1_by_match_insample": p1, "p1_by_match_cv": p1_cv,
               "curve": curve(rows, mode, model, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])}
        if off:  # not in the fit: each judged by the model fitted on all the asked queries
            res["offtopic_none"] = share(list(label(confidences(_matrix(off, "offtopic", mode), model), model)))
        report["modes"][mode] = res
        print(f"\n{mode}: model {json.dumps(model)}")
        if off:
            print(f"  none on the {len(off)} off-topic queries {fmt(res['offtopic_none'])}")
        print(f"  leave-one-query-out, {len(rows)} queries: false none (targets present) {fmt(res['cv_false_none'])}")
        for c, s in res["cv_none_share"].items():
            print(f"  none on {c:10s} {fmt(s)}   strong {fmt(res['cv_strong_share'][c])}")
        print(f"  strong on asked {fmt(res['cv_strong_share']['asked'])}")
        print("  P@1 by match (cv): " + ", ".join(f"{m} {a}/{n}" for m, (a, n) in p1_cv.items()))
        print("  curve (in-sample, share below none_below): "
              + "; ".join(" ".join(f"{k}={v}" for k, v in pt.items()) for pt in res["curve"]))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
