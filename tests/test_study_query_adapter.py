"""scripts/study_query_adapter.py: the adapter it fits moves a query towards its positives (synthetic data,
fixed seeds), and its rank and summary arithmetic. The study itself runs over the default bundle (minutes;
docs/training.md has its figures)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import study_query_adapter as S  # noqa: E402


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.mark.slow   # trains the adapter (~15 s)
def test_the_adapter_learns_a_rotation_the_queries_need():
    rng = np.random.default_rng(0)
    D = unit(rng.normal(size=(400, 16)))
    R = np.linalg.qr(rng.normal(size=(16, 16)))[0].astype(np.float32)  # queries live in a rotated space
    targets = rng.integers(0, len(D), 120)
    Q = unit(D[targets] @ R.T + 0.05 * rng.normal(size=(120, 16)))
    pos = [[int(t)] for t in targets]
    before = S.summary(S.dense_ranks(Q[80:], D, pos[80:], depth=50))
    A = S.fit_adapter(Q[:80], D, pos[:80], lam=0.0, epochs=60, lr=1e-2)
    after = S.summary(S.dense_ranks(S.adapt(Q[80:], A), D, pos[80:], depth=50))
    assert before["mrr@20"] < 0.2  # the rotation hides the targets
    assert after["mrr@20"] > 0.8 and after["hit@10"] > before["hit@10"]  # held-out queries found again


def test_ranks_and_summary():
    D = np.eye(4, dtype=np.float32)
    Q = np.array([[1, 0, 0, 0], [0, 0.9, 0.1, 0]], dtype=np.float32)
    ranks = S.dense_ranks(Q, D, [[0], [2]], depth=3)
    assert ranks == [0, 1]
    assert S.summary(ranks) == {"mrr@20": 0.75, "hit@10": 1.0, "hit@100": 1.0}
    assert S.summary([None, 30]) == {"mrr@20": 0.0, "hit@10": 0.0, "hit@100": 0.5}
    d, lo, hi = S.paired([0, None], [0, 0])
    assert d == 0.5 and lo <= d <= hi
