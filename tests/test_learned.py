"""The learned ranking stage: its tree evaluation, its features, and the stage on a real bundle."""
from __future__ import annotations

import json
import math
import random
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from mathlas.errors import BundleCorruptError
from mathlas.ranking.learned import (F, FEATURES, DocInfo, LinearModel, TreeModel, core, features, fold,
                                     model_from_spec, words)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "build"))


def random_tree(rng: random.Random, depth: int) -> dict:
    """A random binary tree in the exported layout (a leaf points to itself)."""
    t = {"feature": [], "threshold": [], "left": [], "right": [], "value": []}

    def add(level: int) -> int:
        i = len(t["feature"])
        for k in t:
            t[k].append(0)
        t["left"][i] = t["right"][i] = i
        if level == depth or rng.random() < 0.25:
            t["value"][i] = rng.uniform(-1, 1)
            return i
        t["feature"][i] = rng.randrange(len(FEATURES))
        t["threshold"][i] = rng.uniform(-1, 1)
        t["left"][i] = add(level + 1)
        t["right"][i] = add(level + 1)
        return i

    add(0)
    return t


def walk(spec: dict, X: np.ndarray) -> np.ndarray:
    """Each row down each tree, one node at a time: the reference the vectorised scorer must equal."""
    out = np.full(len(X), spec.get("base", 0.0))
    for t in spec["trees"]:
        for r in range(len(X)):
            i = 0
            while t["left"][i] != i:
                i = t["left"][i] if X[r, t["feature"][i]] <= np.float32(t["threshold"][i]) else t["right"][i]
            out[r] += t["value"][i]
    return out


def test_tree_model_equals_walking_each_tree():
    rng = random.Random(7)
    spec = {"kind": "trees", "features": list(FEATURES), "depth": 6, "base": 0.25,
            "trees": [random_tree(rng, 6) for _ in range(40)]}
    X = np.random.default_rng(3).uniform(-1.2, 1.2, size=(300, len(FEATURES))).astype(np.float32)
    X[:5] = 0.0  # exactly on no threshold, but many equal rows
    model = model_from_spec(spec)
    assert isinstance(model, TreeModel)
    np.testing.assert_allclose(model.score(X), walk(spec, X), atol=1e-9)


@pytest.mark.parametrize("depth", [2, 3, 4, 5])
def test_narrow_trees_equal_walking_each_tree(depth):
    """Trees of at most 8, 16 and 32 leaves take 8-, 16- and 32-bit masks (the lowest leaf left read
    from a table for the first two); mixed with single leaves and trees of other sizes."""
    rng = random.Random(depth)
    trees = [random_tree(rng, depth) for _ in range(30)]
    trees.append({"feature": [0], "threshold": [0.0], "left": [0], "right": [0], "value": [0.5]})
    spec = {"kind": "trees", "features": list(FEATURES), "base": -0.5, "trees": trees}
    X = np.random.default_rng(depth).uniform(-1.2, 1.2, size=(257, len(FEATURES))).astype(np.float32)
    model = model_from_spec(spec)
    assert model.bits.itemsize * 8 == {2: 8, 3: 8, 4: 16, 5: 32}[depth]
    np.testing.assert_allclose(model.score(X), walk(spec, X), atol=1e-9)
    # the same scores whatever the layout of X (features() returns a feature-major array's transpose)
    assert np.array_equal(model.score(np.asfortranarray(X)), model.score(X))


def test_pool_sizes_kept_or_not_score_alike(monkeypatch):
    """The node-shaped thresholds kept per pool size (``TreeModel._for``) give the scores of the
    broadcast comparison they replace: sizes kept, sizes past the last few kept, and pools past
    ``SHAPED_MAX`` that are compared by broadcasting."""
    import mathlas.ranking.learned as learned

    rng = random.Random(11)
    spec = {"kind": "trees", "features": list(FEATURES), "base": 0.1, "trees": [random_tree(rng, 4) for _ in range(25)]}
    model = model_from_spec(spec)
    monkeypatch.setattr(learned, "SHAPED_MAX", 40)
    X = np.random.default_rng(5).uniform(-1.2, 1.2, size=(60, len(FEATURES))).astype(np.float32)
    for n in (1, 7, 30, 7, 12, 19, 23, 30, 40, 41, 60, 1):
        got = model.score(X[:n])
        assert np.array_equal(got, model.score(X[:n])), n      # kept: the same again
        np.testing.assert_allclose(got, walk(spec, X[:n]), atol=1e-9)
    kept = model._shaped.snapshot()
    assert len(kept) <= learned.SHAPED_KEPT and all(k <= 40 for k in kept)


def test_a_tree_that_is_one_leaf_adds_a_constant():
    spec = {"kind": "trees", "features": list(FEATURES), "depth": 0,
            "trees": [{"feature": [0], "threshold": [0.0], "left": [0], "right": [0], "value": [1.5]}]}
    assert model_from_spec(spec).score(np.zeros((3, len(FEATURES)), dtype=np.float32)).tolist() == [1.5] * 3


def test_a_model_of_other_features_is_refused():
    with pytest.raises(ValueError, match="feature list differs"):
        model_from_spec({"kind": "linear", "features": ["bm25"], "weights": [1.0]})


def test_a_model_may_read_extra_columns_in_their_order():
    from mathlas.ranking.learned import EXTRA_FEATURES, extras_of

    assert extras_of(FEATURES) == () and extras_of([*FEATURES, "log_pagerank"]) == ("log_pagerank",)
    assert extras_of([*FEATURES, *EXTRA_FEATURES]) == EXTRA_FEATURES
    for bad in ([*FEATURES, "generated", "log_pagerank"], [*FEATURES, "stars"], list(FEATURES[:-1])):
        with pytest.raises(ValueError, match="feature list differs"):
            extras_of(bad)
    # one tree on log_pagerank (column 34): the extra column is what it reads
    spec = {"kind": "trees", "features": [*FEATURES, "log_pagerank"], "depth": 1,
            "trees": [{"feature": [len(FEATURES), 0, 0], "threshold": [0.0, 0.0, 0.0], "left": [1, 1, 2],
                       "right": [2, 1, 2], "value": [0.0, -1.0, 1.0]}]}
    model = model_from_spec(spec)
    assert model.extras == ("log_pagerank",)
    X = np.zeros((2, len(FEATURES) + 1), dtype=np.float32)
    X[1, -1] = 2.0
    assert model.score(X).tolist() == [-1.0, 1.0]


def test_extra_columns_come_from_the_table_and_travel_with_the_arrays(tmp_path):
    import pyarrow as pa

    class Formal(FakeTable):
        def __init__(self, rows):
            super().__init__(rows)
            self._t = self._t.append_column("pagerank", pa.array([r["pagerank"] for r in rows], pa.float64()))
            self._t = self._t.append_column("generated", pa.array([r["generated"] for r in rows], pa.string()))

    rows = [{"id": f"lean:D{i}", "source": "lean", "kind": "theorem", "name": f"D{i}", "text": "t", "aliases": None,
             "pagerank": pr, "generated": g} for i, (pr, g) in enumerate([(2.0, None), (0.5, "simps"), (None, "")])]
    info = DocInfo.of(Formal(rows))
    assert info.extra["log_pagerank"].tolist() == pytest.approx([math.log(2.0), math.log(0.5), math.log(1e-6)])
    assert info.extra["generated"].tolist() == [0.0, 1.0, 0.0] and "deprecated" not in info.extra
    keys = np.array([1, 0])
    args = (info, "D1", keys, np.array([1, 2]), np.array([3.0, 2.0]), np.array([0, 1]),
            np.array([0.5, 0.4], dtype=np.float32), np.zeros(2, dtype=np.float32), False)
    X = features(*args, ("log_pagerank", "deprecated", "generated"))
    assert X.shape == (2, len(FEATURES) + 3)
    assert np.array_equal(X[:, :len(FEATURES)], features(*args))          # the 34 do not move
    assert X[:, len(FEATURES)].tolist() == pytest.approx([math.log(0.5), math.log(2.0)])
    assert X[:, len(FEATURES) + 1].tolist() == [0.0, 0.0]                  # no such column: 0
    assert X[:, len(FEATURES) + 2].tolist() == [1.0, 0.0]
    info.save(tmp_path / "docinfo.npz")
    back = DocInfo.load(tmp_path / "docinfo.npz", 3)
    assert {k: v.tolist() for k, v in back.extra.items()} == {k: v.tolist() for k, v in info.extra.items()}
    # an informal table has none: the features are the 34 and zeros after them
    plain = DocInfo.of(FakeTable(rows))
    assert plain.extra == {} and features(plain, *args[1:], ("log_pagerank",))[:, -1].tolist() == [0.0, 0.0]


def test_names_fold_accents_possessives_and_the_kind_word():
    assert words("Bézout's identity") == ["bezout", "identity"]
    assert core(words("Nakayama's lemma")) == core(words("nakayama lemma")) == ("nakayama",)
    assert core(words("The Cayley–Hamilton theorem")) == ("cayley", "hamilton")
    assert fold("Gödel") == "godel"


class FakeTable:
    """The columns DocInfo reads, as pyarrow would give them."""

    def __init__(self, rows: list[dict]):
        import pyarrow as pa

        self._t = pa.table({k: [r[k] for r in rows] for k in ("id", "source", "kind", "name", "text", "aliases")})

    def column(self, name):
        return self._t.column(name)

    @property
    def column_names(self):
        return self._t.column_names


def test_features_read_the_name_against_the_query():
    rows = [
        {"id": "p:1", "source": "planetmath", "kind": "theorem", "name": "Nakayama's lemma", "text": "x" * 100,
         "aliases": None},
        {"id": "s:2", "source": "stacks", "kind": "lemma", "name": "graded module fg", "text": "y" * 10,
         "aliases": None},
        {"id": "m:3", "source": "metamath", "kind": "theorem", "name": "fta", "text": "z",
         "aliases": "Fundamental theorem of algebra"},
    ]
    info = DocInfo.of(FakeTable(rows))
    keys = np.array([0, 1, 2])
    ranks = np.array([1, 0, 2])
    X = features(info, "Nakayama lemma", keys, ranks, np.array([5.0, np.nan, 2.0]), np.array([0, 1, 0]),
                 np.array([0.9, 0.5, 0.1], dtype=np.float32), np.zeros(3, dtype=np.float32), False)
    assert X[0, F["name_core_exact"]] == 1 and X[1, F["name_core_exact"]] == 0
    assert X[0, F["q_in_name"]] == 1 and X[1, F["q_in_name"]] == 0
    assert X[0, F["in_lex"]] == 1 and X[1, F["in_lex"]] == 0 and X[1, F["in_dense"]] == 1
    assert X[1, F["lex_score"]] == 0 and X[0, F["lex_rel"]] == 1 and X[2, F["lex_rel"]] == pytest.approx(0.4)
    assert X[0, F["src_planetmath"]] == 1 and X[1, F["src_stacks"]] == 1
    assert X[0, F["kind_statement"]] == 1
    X = features(info, "fundamental theorem of algebra", keys, ranks, np.array([5.0, np.nan, 2.0]),
                 np.array([0, 1, 0]), np.array([0.9, 0.5, 0.1], dtype=np.float32), np.zeros(3, dtype=np.float32), False)
    assert X[2, F["alias_exact"]] == 1 and X[0, F["alias_exact"]] == 0
    assert X[2, F["q_in_name"]] == 1


def reference_features(info, query, keys, lex_rank, lex_raw, dense_rank, cosines, rrf_scores, intent):
    """``features`` as first written (one column at a time, every step spelt out): the values the shipped
    model was trained on, which the fast one must give bit for bit."""
    from mathlas.ranking.learned import ABSENT_RANK, GROUPS, SOURCES, _hash, _segments

    def channel(rank, raw):
        present = rank > 0
        logrank = np.where(present, np.log1p(np.maximum(rank - 1, 0)), math.log1p(ABSENT_RANK)).astype(np.float32)
        return logrank, np.where(present, np.nan_to_num(raw), 0.0).astype(np.float32), present.astype(np.float32)

    n = len(keys)
    X = np.zeros((n, len(FEATURES)), dtype=np.float32)
    lr, ls, lp = channel(np.asarray(lex_rank), np.asarray(lex_raw))
    dr, _, dp = channel(np.asarray(dense_rank), np.zeros(n))
    top_lex = float(ls.max()) if n and ls.max() > 0 else 1.0
    X[:, F["lex_score"]], X[:, F["lex_rel"]], X[:, F["lex_logrank"]], X[:, F["in_lex"]] = ls, ls / top_lex, lr, lp
    X[:, F["cos"]] = cosines
    X[:, F["cos_gap"]] = cosines - (float(cosines.max()) if n else 0.0)
    X[:, F["dense_logrank"]], X[:, F["in_dense"]], X[:, F["rrf"]] = dr, dp, rrf_scores
    qw = words(query)
    qcore = core(qw)
    qset = set(qcore)
    unseen = math.log(max(2, len(info.name_hash)))
    q_known = np.array([info.vocab[w] for w in qset if w in info.vocab], dtype=np.int64)
    q_mass = (float(info.idf[q_known].sum()) + unseen * (len(qset) - len(q_known))) or 1.0
    in_q = np.zeros(len(info.idf) + 1, dtype=bool)
    in_q[q_known] = True
    if n:
        if qw:
            X[:, F["name_exact"]] = info.name_hash[keys] == _hash(qw)
        if qcore:
            h = _hash(qcore)
            X[:, F["name_core_exact"]] = info.core_hash[keys] == h
            holders = info.alias_cores.get(h)
            if holders is not None:
                X[:, F["alias_exact"]] = np.isin(keys, holders)
            w, seg, _ = _segments(info.any_ptr, info.any_ids, keys)
            hit = in_q[w]
            X[:, F["q_in_name"]] = np.bincount(seg, weights=hit, minlength=n) / len(qset)
            X[:, F["q_in_name_idf"]] = np.bincount(seg, weights=hit * info.idf[w], minlength=n) / q_mass
        w, seg, _ = _segments(info.name_ptr, info.name_ids, keys)
        size = np.diff(info.name_ptr)[keys]
        hit = in_q[w]
        has = size > 0
        X[:, F["name_in_q"]] = np.where(has, np.bincount(seg, weights=hit, minlength=n) / np.maximum(size, 1), 0)
        mass = info.name_mass[keys]
        X[:, F["name_in_q_idf"]] = np.where(
            has, np.bincount(seg, weights=hit * info.idf[w], minlength=n) / np.where(mass > 0, mass, 1.0), 0)
    X[:, F["q_words"]] = math.log1p(len(qw))
    X[:, F["doc_loglen"]] = info.loglen[keys]
    src = info.source[keys]
    for i, s in enumerate(SOURCES):
        X[:, F[f"src_{s}"]] = src == i
    grp = info.group[keys]
    for i, g in enumerate(GROUPS):
        X[:, F[f"kind_{g}"]] = grp == i
    X[:, F["def_intent"]] = 1.0 if intent else 0.0
    X[:, F["def_intent_x_definition"]] = X[:, F["def_intent"]] * (grp == GROUPS.index("definition"))
    return X


def test_features_equal_the_reference_bit_for_bit():
    rng = np.random.default_rng(17)
    names = ["Nakayama's lemma", "graded module fg", "fta", "Zorn's lemma", "", "Fundamental theorem of algebra",
             "group", "finite group", "Sylow theorem", "lemma"]
    rows = [{"id": f"x:{i}", "source": ["planetmath", "stacks", "metamath", "elsewhere", "lean"][i % 5],
             "kind": ["theorem", "lemma", "definition", "proof", "remark", None][i % 6],
             "name": names[i % len(names)] or None, "text": "t" * int(rng.integers(0, 500)),
             "aliases": "Fundamental theorem of algebra; d'Alembert" if i % 7 == 0 else None} for i in range(60)]
    info = DocInfo.of(FakeTable(rows))
    queries = ["Nakayama lemma", "fundamental theorem of algebra", "finite group", "nothing at all", "", "lemma",
               "Zorn's lemma for groups"]
    for trial in range(300):
        m = int(rng.integers(0, 40))
        keys = rng.choice(60, m, replace=False).astype(np.int64)
        lex_rank = np.where(rng.random(m) < 0.6, rng.integers(1, 1500 if trial % 10 == 0 else 120, m), 0)
        lex_raw = np.where(lex_rank > 0, rng.uniform(0, 30, m), np.nan)
        lex_raw[rng.random(m) < 0.05] = np.nan  # a NaN where a rank is: counts 0
        dense_rank = np.where(rng.random(m) < 0.6, rng.integers(1, 120, m), 0)
        cos = rng.uniform(-0.2, 0.9, m).astype(np.float32)
        rrf = rng.uniform(0, 0.03, m).astype(np.float32)
        args = (info, queries[trial % len(queries)], keys, lex_rank, lex_raw, dense_rank, cos, rrf, trial % 3 == 0)
        got, want = features(*args), reference_features(*args)
        assert got.shape == want.shape and got.dtype == want.dtype
        assert np.array_equal(got, want), trial


@pytest.fixture(scope="module")
def ranked_bundle(tmp_path_factory, tiny_bundle_dir):
    """The tiny bundle with a linear model attached that prefers short texts (an order easy to check)."""
    from mathlas_build.training import ltr

    root = tmp_path_factory.mktemp("learned") / "tiny-ranked"
    shutil.copytree(tiny_bundle_dir, root)
    w = [0.0] * len(FEATURES)
    w[F["doc_loglen"]] = -1.0
    model = root.parent / "model.json"
    model.write_text(json.dumps({"kind": "linear", "features": list(FEATURES), "weights": w}), encoding="utf-8")
    block = ltr.attach(root, model)
    assert block["features"] == list(FEATURES)
    return root


def test_the_stage_orders_the_pool_by_the_model(ranked_bundle, tiny_bundle_dir):
    from mathlas.bundle import verify
    from mathlas.engine import Bundle

    verify(ranked_bundle)  # the model file is listed with its checksum
    b, plain = Bundle.open(ranked_bundle), Bundle.open(tiny_bundle_dir)
    query = "finitely generated module over a Noetherian ring"
    hits = b.search(query, k=10)
    lengths = [len(b.get(h.id).text) for h in hits]
    assert lengths == sorted(lengths), "hits follow the model (shorter text first)"
    rrf = plain.search(query, k=10)
    assert [h.id for h in hits] != [h.id for h in rrf]
    # the pool is the same: every hit of the learned order is a candidate RRF ranked
    deep = {h.id for h in plain.search(query, k=200)}
    assert {h.id for h in hits} <= deep
    # asking for RRF's own settings, or another mode, keeps RRF
    assert [h.id for h in b.search(query, k=10, k_rrf=60)] == [h.id for h in plain.search(query, k=10, k_rrf=60)]
    assert [h.id for h in b.search(query, k=10, mode="lexical")] == [h.id for h in plain.search(query, k=10,
                                                                                                mode="lexical")]


def _rewrite(root: Path, text: str, features=None) -> None:
    from mathlas.bundle import FileEntry, read_manifest, sha256_file, write_manifest

    path = root / "ranker" / "model.json"
    path.write_text(text, encoding="utf-8")
    m = read_manifest(root)
    m.files["ranker/model.json"] = FileEntry(size=path.stat().st_size, sha256=sha256_file(path))
    if features is not None:
        m.ranker = {**m.ranker, "features": features}
    write_manifest(root, m)


def test_a_bundle_whose_model_is_unreadable_says_so(tmp_path, ranked_bundle):
    from mathlas.engine import Bundle

    root = tmp_path / "broken"
    shutil.copytree(ranked_bundle, root)
    _rewrite(root, "{not json")
    with pytest.raises(BundleCorruptError, match="cannot read its ranking model model.json .*reinstall"):
        Bundle.open(root).search("module", k=3)
    other = tmp_path / "other"
    shutil.copytree(ranked_bundle, other)
    _rewrite(other, (ranked_bundle / "ranker" / "model.json").read_text(encoding="utf-8"), features=["bm25"])
    with pytest.raises(BundleCorruptError, match="reads other features than this mathlas computes"):
        Bundle.open(other).search("module", k=3)


def test_linear_model_standardises():
    m = LinearModel({"weights": [2.0, 0.0], "mean": [1.0, 0.0], "scale": [0.5, 1.0], "bias": 1.0})
    assert m.score(np.array([[2.0, 9.0]], dtype=np.float32)).tolist() == [5.0]


def test_the_arrays_the_bundle_carries_are_the_ones_its_table_makes(ranked_bundle):
    from mathlas.engine import Bundle
    from mathlas.ranking.learned import bundle_model

    b = Bundle.open(ranked_bundle)
    assert (ranked_bundle / "ranker" / "docinfo.npz").is_file() and b.manifest.ranker["docinfo"] == "docinfo.npz"
    _, carried = bundle_model(b)
    made = DocInfo.of(b.table)
    for name in DocInfo.ARRAYS:
        assert np.array_equal(getattr(carried, name), getattr(made, name)), name
    assert carried.vocab == made.vocab
    assert {h: v.tolist() for h, v in carried.alias_cores.items()} == {h: v.tolist() for h, v in made.alias_cores.items()}
