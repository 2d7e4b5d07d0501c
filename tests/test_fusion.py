import numpy as np
import pytest

from mathlas.ranking.fusion import Ranking, calibrate, convex, fit_logistic, merge, rrf


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
    assert len(rrf({"a": Ranking.empty(), "b": Ranking.empty()}, k=5)) == 0
    assert len(rrf({"a": Ranking.of([5, 6, 7])}, k=0)) == 0
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


# ------------------------------------------------------------------------------ score fusion

def test_calibrations_by_hand():
    assert calibrate([10, 6, 2], "minmax").tolist() == pytest.approx([1, 0.5, 0])
    sd = np.std([3.0, 2.0, 1.0])
    assert calibrate([3, 2, 1], "zscore").tolist() == pytest.approx([2 / sd, 1 / sd, 0])
    sig = lambda x: 1 / (1 + np.exp(-x))  # noqa: E731
    assert calibrate([2, 0], "logistic", params=(0.0, 1.0)).tolist() == pytest.approx([sig(2) - sig(0), 0])
    # the floor and spread come from the first top_n; scores below that floor clip to 0
    assert calibrate([10, 8, 6, 0], "minmax", top_n=3).tolist() == pytest.approx([1, 0.5, 0, 0])
    assert calibrate([5, 5], "minmax").tolist() == [0, 0]
    with pytest.raises(ValueError, match="logistic calibration needs"):
        calibrate([1, 0], "logistic")
    with pytest.raises(ValueError, match="unknown calibration"):
        calibrate([1, 0], "softmax")


def test_convex_scores_and_ranks_by_hand():
    lex = Ranking.of([1, 2, 3], [10, 6, 2])
    den = Ranking.of([3, 1, 4], [0.9, 0.8, 0.5])
    fused = convex({"lexical": lex, "dense": den}, k=10, channel_weights={"lexical": 0.5, "dense": 0.5})
    got = {f.key: f.score for f in fused}
    assert got == pytest.approx({1: 0.5 + 0.5 * 0.75, 2: 0.25, 3: 0.5, 4: 0.0})
    assert [f.key for f in fused] == [1, 3, 2, 4]
    assert fused[0].ranks == {"lexical": 1, "dense": 2}
    assert fused[2].ranks == {"lexical": 2, "dense": None}
    assert [f.key for f in convex({"lexical": lex, "dense": den}, k=2)] == [1, 3]


def test_convex_keeps_how_far_ahead_a_first_hit_is():
    # lexical is sure of key 1 (30 against 5); dense barely prefers key 2 over it (.80 against .78)
    lex = Ranking.of([1, 2, 3, 6], [30, 5, 4.9, 4.8])
    den = Ranking.of([2, 3, 1, 5], [0.80, 0.79, 0.78, 0.50])
    both = {"lexical": lex, "dense": den}
    assert rrf(both, k=1, k_rrf=10)[0].key == 2  # ranks alone: 1/12 + 1/11 beats 1/11 + 1/13
    assert convex(both, k=1, calibration="minmax")[0].key == 1
    assert convex(both, k=1, calibration="zscore")[0].key == 1


def test_convex_weights_and_key_weights_drop():
    lex, den = Ranking.of([1, 2], [2, 1]), Ranking.of([3, 1], [2, 1])
    fused = convex({"lexical": lex, "dense": den}, k=10, channel_weights={"dense": 0})
    assert [f.key for f in fused] == [1, 2]  # key 3 only in a weight-0 channel
    fused = convex({"lexical": lex, "dense": den}, k=10, key_weights=np.array([1.0, 0.0, 1.0, 2.0]))
    assert [f.key for f in fused] == [3, 2]
    assert fused[0].score == pytest.approx(2.0)
    assert len(convex({"a": Ranking.empty()}, k=3)) == 0 and len(convex({}, k=3)) == 0


def test_fit_logistic_recovers_a_known_curve():
    rng = np.random.default_rng(0)
    s = rng.uniform(-3, 3, 20000)
    y = rng.uniform(size=s.size) < 1 / (1 + np.exp(-(1.0 + 2.0 * s)))
    a, b = fit_logistic(s, y)
    assert a == pytest.approx(1.0, abs=0.1) and b == pytest.approx(2.0, abs=0.1)
    with pytest.raises(ValueError, match="both relevant and irrelevant"):
        fit_logistic([1.0, 2.0], [0, 0])


# ------------------------------------------------------------------------------ the pool and extra documents

def test_rrf_keeps_each_channels_rank_and_raw_score():
    lex = Ranking.of([1, 2, 3], [9.0, 7.5, 2.0])
    den = Ranking.of([3, 1, 4], [0.9, 0.8, 0.5])
    pool = rrf({"lexical": lex, "dense": den}, k=10, k_rrf=10)
    assert pool.channels == ("lexical", "dense")
    at = {int(k): i for i, k in enumerate(pool.keys)}
    assert pool.ranks[at[1]].tolist() == [1, 2] and pool.raw[at[1]].tolist() == pytest.approx([9.0, 0.8])
    assert pool.ranks[at[4]].tolist() == [0, 3] and np.isnan(pool.raw[at[4], 0])
    assert pool.rank_in("lexical")[at[2]] == 2 and np.isnan(pool.raw_in("dense")[at[2]])
    assert pool.rank_in("rerank").tolist() == [0] * 4 and np.isnan(pool.raw_in("rerank")).all()


def test_merge_places_extra_documents_by_score_before_the_cut():
    docs = Ranking.of([10, 11, 12, 13], [9.0, 7.0, 5.0, 3.0])
    extra = Ranking.of([100, 101], [7.0, 4.0])  # a tie with key 11 goes first; 4.0 between 12 and 13
    merged = merge(docs, extra, depth=10)
    assert merged.keys.tolist() == [10, 100, 11, 12, 101, 13]
    assert merged.scores.tolist() == [9.0, 7.0, 7.0, 5.0, 4.0, 3.0]
    assert merge(docs, extra, depth=3).keys.tolist() == [10, 100, 11]  # the depth cut comes after
    # a score within same_score (relative) of a document's is the same score
    assert merge(docs, Ranking.of([100], [6.9999]), 10, same_score=1e-5).keys.tolist()[:3] == [10, 11, 100]
    assert merge(docs, Ranking.of([100], [6.99995]), 10, same_score=1e-5).keys.tolist()[:3] == [10, 100, 11]
    assert merge(docs, Ranking.empty(), 2).keys.tolist() == [10, 11]
    assert merge(Ranking.empty(), extra, 5).keys.tolist() == [100, 101]
    assert merge(docs, Ranking.of([100], [1.0]), 4).keys.tolist() == [10, 11, 12, 13]  # below the cut: out
