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
answers, false ``none`` on in-corpus queries, ``none`` on off-topic queries, and misspelt names
answered ``none``.
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundle", required=True)
    a = ap.parse_args()

    from mathlas import service
    from mathlas.request import SearchRequest

    out: dict = {}
    for r in records(offtopic=True):
        res = service.search(SearchRequest.make(r["query"], 10), a.bundle, findings=False)
        kind = "off" if r.get("area") == "offtopic" else ("in" if r["targets"] else "absent")
        top = res.hits[0].id if res.hits else None
        row = out.setdefault(r["split"], {"in": [], "off": [], "absent": [], "typo": []})
        row[kind].append((res.match, top in set(r["relevant"])))
        if r.get("typo"):
            row["typo"].append(res.match)
    report = {}
    for split, row in out.items():
        strong = [ok for m, ok in row["in"] if m == "strong"]
        report[split] = {
            "in_corpus": len(row["in"]), "strong": len(strong),
            "p@1_strong": round(float(np.mean(strong)), 3) if strong else None,
            "false_none": round(float(np.mean([m == "none" for m, _ in row["in"]])), 3) if row["in"] else None,
            "offtopic": len(row["off"]),
            "offtopic_none": round(float(np.mean([m == "none" for m, _ in row["off"]])), 3) if row["off"] else None,
            "absent": len(row["absent"]),
            "absent_not_strong": round(float(np.mean([m != "strong" for m, _ in row["absent"]])), 3)
            if row["absent"] else None,
            "typos": len(row["typo"]), "typo_none": sum(m == "none" for m in row["typo"])}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
