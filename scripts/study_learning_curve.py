"""Would more judged queries help the learned stage? Its figures trained on part of the tune split.

    python scripts/study_learning_curve.py --cache work/pools.npz [--fractions .25,.5,.75,1] [--seeds 0,1,2,3,4]

The learned stage is trained on the collection's tune split (292 queries with a relevant id). If
training on half of them gives the check split and informal-dev what training on all of them gives,
more queries of the same kind will not move the stage either, and a larger collection pays only as
evidence (narrower intervals), not as training data. For each fraction and seed, a random subset of
the tune queries (drawn by the seed; the whole split at 1) trains a model with the shipped settings
(100 trees of 15 leaves, learning rate .1, 50 a leaf, the LightGBM seed the same seed), scored on
check (132) and informal-dev (40), and on the two pooled (172): P@1 / Hit@10 / MRR@20, and the
paired MRR@20 difference of each fraction against the whole split, same seed, with a 95% bootstrap
interval over the pooled queries. docs/training.md has what it measured.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build"))
sys.path.insert(0, str(ROOT / "scripts"))

import study_prf_feature as S  # noqa: E402
import train_ranker as TR  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", default=str(ROOT / "work" / "pools.npz"))
    ap.add_argument("--fractions", default=".25,.5,.75,1")
    ap.add_argument("--seeds", default="0,1,2,3,4")
    a = ap.parse_args(argv)
    fractions = [float(x) for x in a.fractions.split(",") if x]
    seeds = [int(s) for s in a.seeds.split(",") if s]
    if any(not 0 < f <= 1 for f in fractions):
        ap.error("--fractions: each in (0, 1]")

    t0 = time.time()
    b, _, recs, P, judged = TR.collection_pools(Path(a.cache))
    tune = sorted(r["id"] for r in recs if r["split"] == "tune")
    held = [r for r in recs if r["split"] in ("check", "dev")]
    print(f"tune {len(tune)} queries; held out: check {sum(r['split'] == 'check' for r in held)}, "
          f"dev {sum(r['split'] == 'dev' for r in held)}", flush=True)
    got = {}
    for f in sorted(set(fractions) | {1.0}):
        for s in seeds:
            n = max(1, round(f * len(tune)))
            ids = set(np.random.default_rng(s).choice(tune, size=n, replace=False).tolist()) if f < 1 else set(tune)
            model = S.train(*TR.training_set(b, recs, P, judged, ids), s)
            got[f, s] = S.per_query(b, held, P, lambda r, m=model: m)
            print(f"fraction {f:.2f} ({n} queries) seed {s}: " + "; ".join(
                f"{sp} {S.summary(held, got[f, s], sp)}" for sp in ("check", "dev", "all")), flush=True)
    print("\nmean over the seeds (P@1 / Hit@10 / MRR@20); pooled MRR@20 against the whole split, by seed:")
    for f in sorted(set(fractions) | {1.0}):
        cells = []
        for sp in ("check", "dev", "all"):
            sub = [r for r in held if sp in ("all", r["split"])]
            cells.append(sp + " " + " / ".join(
                f"{np.mean([np.mean([got[f, s][r['id']][m] for r in sub]) for s in seeds]):.3f}"
                for m in ("p@1", "hit@10", "mrr@20")))
        line = f"{f:.2f}: " + "; ".join(cells)
        if f < 1:
            ds = [S.paired(held, got[1.0, s], got[f, s]) for s in seeds]
            line += "\n      vs 1.00: " + ", ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in ds)
        print(line, flush=True)
    print(f"\n{time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
