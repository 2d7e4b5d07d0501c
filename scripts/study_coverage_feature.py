"""Two features the learned stage lacks, measured: how much of the query a candidate's text and its
heading path hold.

    python scripts/study_coverage_feature.py --cache work/pools.npz [--seeds 0,1,2,3,4]

The stage reads BM25 (a score over the whole retrieval text) and how the query meets a candidate's name,
but not which share of the query's words the candidate's text holds (query-term coverage, a classic
learning-to-rank feature the issue lists) nor whether the query's words are in its heading path (the
context: "Measure theory > Lebesgue integration", what a loose description often names). Per candidate:

- ``cov_text``: the idf-weighted share of the query's words (folded as names are, a final "s" off) that
  the candidate's retrieval text holds, idf over the bundle's texts;
- ``cov_title``: the same over its heading path (the ``title`` column);
- ``cov_text_count``: the plain share.

Trained as 1.6.1's stage is (the tune splits of rounds 1-3; 50 trees of 7 leaves, learning rate .2, 50 a
leaf), with and without the three columns, seed by seed, and scored over the pools on what no model saw:
the three rounds' check splits with informal-dev (297 queries: where a choice would be made) and the
fourth round (177, drafted after 1.6.1: the confirmation). Printed: P@1 / Hit@10 / MRR@20 per set and the
paired MRR@20 difference with its 95% bootstrap interval. docs/training.md has what it measured.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

import study_prf_feature as S  # noqa: E402
import train_ranker as TR  # noqa: E402
from mathlas_build.training import ltr  # noqa: E402

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def stems(text: str) -> set[str]:
    """The words of ``text`` folded as names are (``learned.fold``), a final "s" off words of 4+ letters."""
    from mathlas.ranking.learned import fold

    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(fold(text or ""))}


class Coverage:
    """Each document's text and heading-path word sets, and the idf of a word over the texts."""

    def __init__(self, b):
        self.text = [stems(t) for t in b.column("text").to_pylist()]
        self.title = [stems(t) for t in b.column("title").to_pylist()]
        df: dict[str, int] = {}
        for ws in self.text:
            for w in ws:
                df[w] = df.get(w, 0) + 1
        n = len(self.text)
        self.idf = {w: math.log(1 + n / c) for w, c in df.items()}
        self.unseen = math.log(1 + n)

    def columns(self, query: str, keys: np.ndarray) -> np.ndarray:
        q = stems(query)
        weight = {w: self.idf.get(w, self.unseen) for w in q}
        total = sum(weight.values()) or 1.0
        out = np.zeros((len(keys), 3), dtype=np.float32)
        for i, k in enumerate(keys.tolist()):
            text, title = self.text[k], self.title[k]
            out[i, 0] = sum(v for w, v in weight.items() if w in text) / total
            out[i, 1] = sum(v for w, v in weight.items() if w in title) / total
            out[i, 2] = sum(1 for w in q if w in text) / max(1, len(q))
        return out


def train(X, y, groups, seed: int):
    from mathlas.ranking.learned import FEATURES

    names = [*FEATURES, *(f"extra_{i}" for i in range(X.shape[1] - len(FEATURES)))]
    return ltr.train(X, y, groups, seed=seed, feature_names=names, **S.SHIPPED)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--seeds", default="0,1,2,3,4")
    a = ap.parse_args(argv)

    b, _, recs, P, judged = TR.collection_pools(Path(a.cache), rounds=(1, 2, 3, 4))
    cov = Coverage(b)
    byid = {r["id"]: r for r in recs}
    P2 = {q: ltr.Pool(p.keys, np.concatenate([p.X, cov.columns(byid[q]["query"] if q in byid else "", p.keys)],
                                             axis=1), p.rrf_order) for q, p in P.items()}
    tune, sets = S.shipped_split(recs)
    for seed in [int(s) for s in a.seeds.split(",")]:
        got = {}
        for name, pools in (("base", P), ("coverage", P2)):
            model = train(*TR.training_set(b, recs, pools, judged, tune), seed)
            got[name] = S.per_query(b, [r for rs in sets.values() for r in rs], pools, lambda r: model)
            if name == "coverage" and seed == int(a.seeds.split(",")[0]):
                gain = model.feature_importance("gain")
                print("gain of the new columns: " + ", ".join(f"{x:.0f}" for x in gain[-3:])
                      + f" (of {gain.sum():.0f})", flush=True)
        for name, rs in sets.items():
            d, lo, hi = S.paired(rs, got["base"], got["coverage"])
            print(f"seed {seed} {name} ({len(rs)}): base {S.summary(rs, got['base'], 'all')}, "
                  f"coverage {S.summary(rs, got['coverage'], 'all')}; MRR@20 {d:+.3f} [{lo:+.3f}, {hi:+.3f}]",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
