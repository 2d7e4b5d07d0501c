"""scripts/bench_peers.py: the pure parts of the peers' methods on hand-written inputs (no extra
needed), and both peers on the tiny bundle when bm25s and faiss are installed (the bench extra)."""
from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_peers.py"


@pytest.fixture(scope="module")
def bp():
    return SimpleNamespace(**runpy.run_path(str(SCRIPT), run_name="bench_peers"))


def test_name_tokens(bp):
    assert bp.split_name("Nat.Prime.two_le") == ["nat", "prime", "two", "le"]
    assert bp.split_name("IsLeftCancelMul.mul_left_cancel") == ["is", "left", "cancel", "mul", "mul", "left", "cancel"]
    assert bp.split_name("ZMod.χ₄") == ["zmod", "χ₄"]  # only lower-to-upper is a boundary; unicode words stay
    assert bp.split_name("") == []
    assert bp.raw_name("Nat.Prime") == ["nat.prime"] and bp.raw_name("") == []


def test_rrf_k0(bp):
    name = {1: 9.0, 2: 5.0, 3: 5.0}        # ranks 1, 2, 3 (the tie keeps the dict's order)
    semantic = {3: 0.9, 4: 0.8}             # ranks 1, 2; a missing key takes rank 3 (name: 4)
    fused = dict(bp.rrf_k0(name, semantic))
    assert fused == pytest.approx({1: 1 + 1 / 3, 2: 1 / 2 + 1 / 3, 3: 1 / 3 + 1, 4: 1 / 4 + 1 / 2})
    assert [k for k, _ in bp.rrf_k0(name, semantic)] == [1, 3, 2, 4]
    assert bp.rrf_k0({}, {}) == []


def test_dependency_boost(bp):
    pool = [10, 11, 12, 13]
    uses = {10: [12], 11: [12, 13], 12: [], 13: [99]}  # 99 is outside the pool
    counts = bp.count_dependents(pool, lambda key: uses[key])
    assert counts == [0, 0, 2, 1]
    boosted = dict(bp.dependency_boost(pool, counts))
    # dependency ranks: 12 -> 1, 13 -> 2, the others 3 (past the largest count)
    assert boosted == pytest.approx({10: 1 + 1 / 3, 11: 1 / 2 + 1 / 3, 12: 1 / 3 + 1, 13: 1 / 4 + 1 / 2})
    # nobody has dependents: the same constant for all, the order unchanged
    assert [k for k, _ in bp.dependency_boost(pool, [0, 0, 0, 0])] == pool


def test_sizes(bp):
    assert bp.theoremsearch_sizes(10) == (50, 200, 200)
    assert bp.theoremsearch_sizes(20) == (100, 400, 400)
    assert bp.ivf_lists(27_264) == 256 and bp.ivf_lists(280_000) == 529 and bp.ivf_lists(100) == 100


@pytest.mark.slow
def test_peers_on_tiny_bundle(bp, tiny):
    pytest.importorskip("bm25s")
    pytest.importorskip("faiss")
    ids = tiny.table.column("id").to_pylist()
    names = tiny.table.column("name").to_pylist()
    target = next(i for i, n in enumerate(names) if n and len(n.split()) >= 2)
    le = bp.LeanExplore(tiny)
    le.build(bp.float_vectors(tiny))
    ts = bp.TheoremSearch(tiny, citation_weight=0.0)
    ts.build(np.asarray(tiny.dense.vectors))
    for peer in (le, ts):
        keys = peer.search(names[target], 5)
        assert 0 < len(keys) <= 5 and len(set(keys)) == len(keys)
        assert all(0 <= k < len(ids) for k in keys)
        none = np.zeros(len(ids), dtype=bool)
        assert peer.search(names[target], 5, allowed=none) == []
    assert target in le.search(names[target], 5)  # its own name: the raw and split name indexes
