"""The learned stage's objective settings, measured: LambdaRank's truncation level and the label gains.

    python scripts/study_ranker_objective.py --cache work/pools.npz [--seeds 0,1,2]

1.6.1's stage is LightGBM LambdaRank (50 trees of 7 leaves, learning rate .2, 50 a leaf) with the pairs
truncated at 20 (``lambdarank_truncation_level``) and LightGBM's default gains (2^label - 1: a target, label
2, counts 3, a judged equivalent, label 1, counts 1). Each variant is trained on the same rows (the tune
splits of rounds 1-3) and compared with the shipped setting seed by seed, over the pools, on what no model
saw: the three rounds' check splits with informal-dev (297) and the fourth round (177). Printed: the paired
MRR@20 difference with its 95% bootstrap interval and the Hit@10 difference. docs/training.md has what it
measured.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

import study_prf_feature as S  # noqa: E402
import train_ranker as TR  # noqa: E402
from mathlas_build.training import ltr  # noqa: E402

VARIANTS = ((10, None), (30, None), (50, None), (20, [0, 1, 1]), (20, [0, 1, 4]))


def fit(X, y, groups, seed: int, truncation: int = 20, gain: list[float] | None = None):
    return ltr.train(X, y, groups, seed=seed, truncation=truncation, label_gain=gain, **S.SHIPPED)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--seeds", default="0,1,2")
    a = ap.parse_args(argv)

    b, _, recs, P, judged = TR.collection_pools(Path(a.cache), rounds=(1, 2, 3, 4))
    tune, sets = S.shipped_split(recs)
    X, y, groups = TR.training_set(b, recs, P, judged, tune)[:3]
    every = [r for rs in sets.values() for r in rs]

    def scored(model) -> dict:
        return S.per_query(b, every, P, lambda r: model)

    for seed in [int(s) for s in a.seeds.split(",")]:
        base = scored(fit(X, y, groups, seed))
        for truncation, gain in VARIANTS:
            got = scored(fit(X, y, groups, seed, truncation, gain))
            cells = []
            for name, rs in sets.items():
                d, lo, hi = S.paired(rs, base, got)
                cells.append(f"{name}: MRR@20 {d:+.3f} [{lo:+.3f}, {hi:+.3f}], Hit@10 "
                             f"{S.paired(rs, base, got, 'hit@10')[0]:+.3f}")
            print(f"seed {seed}, truncation {truncation}, gains {gain or 'default'}: " + "; ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
