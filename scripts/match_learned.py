"""The ``match`` of a bundle whose answers a learned stage orders: its fit and its measurement.

    python scripts/match_learned.py --bundle DIR

``fit_logistic`` is what ``scripts/train_ranker.py`` fits the model with, on out-of-fold scores of
the collection's tune split (1 when the first hit is relevant, 0 otherwise; off-topic and
out-of-corpus queries 0): ``strong_at`` is the lowest confidence above which P@1 is at least .92,
``none_below`` the highest below which at most 4% of in-corpus queries fall. The model travels in
the ranker's model file and the manifest (``ranker.match``).

``main`` measures what a person sees: every query of the collection, its off-topic queries and
informal-dev through ``mathlas.service.search`` on ``DIR`` (whole bundle, k=10, names and
corrections included), and the four figures of issue 30 part 4 per split: P@1 among ``strong``
answers, false ``none`` on in-corpus queries, ``none`` on off-topic queries (and on the short ones
of two to four words alone), and misspelt names answered ``none``. ``--none-below X`` measures the
same with another ``none`` threshold (this process only); ``--choose-none`` chooses that threshold
on the tune split's answers as served (``choose_none_below``) and ``--write FILE`` sets it in a ranker
model file, for the next bundle built with it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

from collection import records  # noqa: E402

FEATS = ("s1", "s_margin", "s_lead", "d1", "l_per_word", "agree")


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 50) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton steps on standardised features; the weights and
    bias returned apply to the raw features."""
    mu, sd = X.mean(0), X.std(0) + 1e-9
    Z = np.hstack([(X - mu) / sd, np.ones((len(X), 1))])
    w = np.zeros(Z.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-Z @ w))
        g = Z.T @ (p - y) + l2 * np.r_[w[:-1], 0]
        H = (Z * (p * (1 - p))[:, None]).T @ Z + l2 * np.diag(np.r_[np.ones(len(w) - 1), 0])
        w -= np.linalg.solve(H, g)
    weights = w[:-1] / sd
    bias = w[-1] - float((w[:-1] * mu / sd).sum())
    return weights, float(bias)


OFFTOPIC_NONE = 0.90     # the share of the tune split's off-topic queries a chosen none_below calls none
MAX_FALSE_NONE = 0.04    # ... while calling at most this share of its in-corpus queries none


def choose_none_below(serve, start: float) -> float | None:
    """The lowest threshold, on a grid of .01 from the model's own ``start``, at which at least
    ``OFFTOPIC_NONE`` of the tune split's off-topic answers are ``none`` and at most ``MAX_FALSE_NONE``
    of its in-corpus ones; ``serve(t)``: the tune split's answers as served with that threshold,
    ``[(kind, match), …]`` (the served confidence is rounded to .01, so each threshold is served, not
    read off it); None when no threshold does both (off-topic ``none`` only grows with it, so the
    search stops once in-corpus ``none`` passes its bound)."""
    t = round(start, 2)
    while t <= 0.6:
        rows = serve(t)
        off = [m == "none" for k, m in rows if k == "off"]
        ins = [m == "none" for k, m in rows if k == "in"]
        if ins and np.mean(ins) > MAX_FALSE_NONE:
            return None
        if off and np.mean(off) >= OFFTOPIC_NONE:
            return float(t)
        t = round(t + 0.01, 2)
    return None


def write_none_below(path: Path, value: float, was: float, how: str) -> None:
    """``value`` as the match ``none_below`` of the ranker model file ``path``, the old value and how
    it was chosen recorded beside it (``none_below_refit``)."""
    from mathlas.atomic import atomic_write

    spec = json.loads(path.read_text(encoding="utf-8"))
    spec["match"]["none_below"] = value
    spec["match"]["none_below_refit"] = {"was": (spec["match"].get("none_below_refit") or {}).get("was", was),
                                         "rule": how}   # the trainer's own value, however often refit
    atomic_write(path, json.dumps(spec, separators=(",", ":")))  # as the trainer writes it


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--none-below", type=float, default=None,
                    help="measure with this threshold instead of the bundle's (the model's none_below)")
    ap.add_argument("--choose-none", action="store_true",
                    help="choose none_below on the tune split's answers as served (choose_none_below), "
                         "then measure every split with it")
    ap.add_argument("--write", type=Path, default=None,
                    help="with --choose-none: set the choice in this ranker model file (artifacts/rankers/…)")
    a = ap.parse_args()
    if a.write and not a.choose_none:
        ap.error("--write needs --choose-none")

    from mathlas import service
    from mathlas.engine import open_bundle
    from mathlas.request import SearchRequest

    b = open_bundle(a.bundle)
    model = b.manifest.ranker["match"]
    if a.choose_none:
        tune = [r for r in records(offtopic=True) if r["split"] == "tune"]

        def serve(t: float) -> list[tuple[str, str]]:
            b.manifest.ranker["match"] = {**model, "none_below": t}
            return [("off" if r.get("area") == "offtopic" else ("in" if r["targets"] else "absent"),
                     service.search(SearchRequest.make(r["query"], 10), b, findings=False).match) for r in tune]

        chosen = choose_none_below(serve, float(model["none_below"]))
        b.manifest.ranker["match"] = model
        print(f"none_below: {model['none_below']} -> {chosen} (tune: off-topic none >= {OFFTOPIC_NONE}, "
              f"in-corpus none <= {MAX_FALSE_NONE})", file=sys.stderr)
        if chosen is None:
            sys.exit("no threshold meets both on the tune split: the model is left as it is")
        if a.write:
            write_none_below(a.write, chosen, float(model["none_below"]),
                             f"python scripts/match_learned.py --bundle {b.label} --choose-none: the lowest on a .01 grid with "
                             f"tune off-topic none >= {OFFTOPIC_NONE} and tune in-corpus none <= {MAX_FALSE_NONE}")
        a.none_below = chosen
    if a.none_below is not None:  # this process only: the bundle on disk is not touched
        b.manifest.ranker["match"] = {**model, "none_below": a.none_below}
    out: dict = {}
    for r in records(offtopic=True):
        res = service.search(SearchRequest.make(r["query"], 10), b, findings=False)
        kind = "off" if r.get("area") == "offtopic" else ("in" if r["targets"] else "absent")
        top = res.hits[0].id if res.hits else None
        row = out.setdefault(r["split"], {"in": [], "off": [], "absent": [], "typo": [], "short": []})
        row[kind].append((res.match, top in set(r["relevant"])))
        if r.get("typo"):
            row["typo"].append(res.match)
        if kind == "off" and r.get("style") == "short":
            row["short"].append(res.match)
    report = {}
    for split, row in out.items():
        strong = [ok for m, ok in row["in"] if m == "strong"]
        report[split] = {
            "in_corpus": len(row["in"]), "strong": len(strong),
            "p@1_strong": round(float(np.mean(strong)), 3) if strong else None,
            "false_none": round(float(np.mean([m == "none" for m, _ in row["in"]])), 3) if row["in"] else None,
            "offtopic": len(row["off"]),
            "offtopic_none": round(float(np.mean([m == "none" for m, _ in row["off"]])), 3) if row["off"] else None,
            "offtopic_short": len(row["short"]),
            "offtopic_short_none": round(float(np.mean([m == "none" for m in row["short"]])), 3) if row["short"] else None,
            "absent": len(row["absent"]),
            "absent_not_strong": round(float(np.mean([m != "strong" for m, _ in row["absent"]])), 3)
            if row["absent"] else None,
            "typos": len(row["typo"]), "typo_none": sum(m == "none" for m in row["typo"])}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
