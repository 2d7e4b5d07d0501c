import numpy as np
import pytest

from mathlas.fusion import Ranking, rrf


def test_rrf_scores_and_ranks_by_hand():
    lex = Ranking.of([1, 2, 3])
    den = Ranking.of([3, 1, 4])
    fused = rrf({"lexical": lex, "dense": den}, k=10, k_rrf=10)
    got = {f.key: f.score for f in fused}
    assert got[1] == pytest.approx(1 / 11 + 1 / 12)
    assert got[3] == pytest.approx(1 / 13 + 1 / 11)
    assert got[2] == pytest.approx(1 / 12)
    assert got[4] == pytest.approx(1 / 13)
    assert [f.key for f in fused] == [1, 3, 2, 4]
    assert fused[0].ranks == {"lexical": 1, "dense": 2}
    assert fused[3].ranks == {"lexical": None, "dense": 3}


def test_rrf_cuts_at_k_and_handles_empty():
    assert rrf({"a": Ranking.empty(), "b": Ranking.empty()}, k=5) == []
    assert rrf({"a": Ranking.of([5, 6, 7])}, k=0) == []
    assert [f.key for f in rrf({"a": Ranking.of([5, 6, 7])}, k=2)] == [5, 6]


def test_rrf_ties_break_by_best_rank_then_key():
    # key 7 is #1 in one channel; key 8 is #2 in both: 2/12 > 1/11, so 8 wins; 9 vs 7 is exact-score tie logic
    fused = rrf({"a": Ranking.of([7, 8]), "b": Ranking.of([9, 8])}, k=3, k_rrf=10)
    assert [f.key for f in fused] == [8, 7, 9]  # 7 and 9 tie on score and best rank: lower key first


def test_rrf_source_weights_scale_and_zero_drops():
    weights = np.array([1.0, 0.0, 3.0, 1.0])
    fused = rrf({"a": Ranking.of([0, 1, 2, 3])}, k=10, key_weights=weights)
    assert [f.key for f in fused] == [2, 0, 3]
    assert fused[0].score == pytest.approx(3 / 13)


def test_rrf_channel_weights_and_duplicates():
    fused = rrf({"a": Ranking.of([1, 1, 2]), "b": Ranking.of([2])}, k=5, channel_weights={"b": 0})
    assert [(f.key, f.ranks["a"]) for f in fused] == [(1, 1), (2, 3)]


def test_k_rrf_changes_the_order():
    lex, den = Ranking.of([1, 2, 3, 4, 5]), Ranking.of([5, 4, 3, 2, 1])
    # with a large k_rrf every document scores about the same; a small one rewards top ranks
    small = rrf({"l": lex, "d": den}, k=5, k_rrf=1)
    assert small[0].key in (1, 5) and small[-1].key == 3
