"""Mined training pairs (mathlas_build.training.mined): the leak check drops what it must and says how
many, each view takes the query's own words out, and the masked pool scores the view, not the text."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "build"))

from mathlas_build.document import Document  # noqa: E402
from mathlas_build.training import mined  # noqa: E402
from mathlas_build.training.mined import MinedPair, leak_check  # noqa: E402


class FakeGroups:
    def __init__(self, groups: list[list[int]]):
        self.of = {k: g for g in groups for k in g}

    def group(self, key: int) -> list[int]:
        return [k for k in self.of.get(key, []) if k != key]


RECORDS = [
    {"id": "mc-1", "query": "Nakayama's lemma", "targets": ["stacks:00DV"], "relevant": ["stacks:00DV", "pm:Nak"]},
    {"id": "dev-1", "query": "every finite integral domain is a field", "targets": ["pm:FID"], "relevant": []},
]


def test_the_leak_check_drops_collection_queries_and_targets_and_counts_each_rule():
    ids = ["stacks:00DV", "pm:Nak", "pm:FID", "mm:x", "pm:Other", "pw:Same"]
    groups = FakeGroups([[4, 5]])
    pairs = [
        MinedPair("nakayama lemma", ["pm:Other"], "planetmath-defines"),          # same folded words as mc-1
        MinedPair("Every finite integral domain is a field.", ["mm:x"], "stacks-slogan"),  # mc query, punctuation
        MinedPair("finite integral domains are fields", ["mm:x"], "stacks-slogan"),        # Jaccard .8? no: kept
        MinedPair("local ring modules", ["pm:Nak"], "planetmath-synonym"),          # a judged-equivalent hit
        MinedPair("integral domain", ["pm:FID"], "planetmath-defines"),            # a dev target
        MinedPair("the other one", ["pw:Same"], "planetmath-defines"),             # grouped with ... nothing protected
        MinedPair("the other one", ["pw:Same"], "planetmath-defines"),             # duplicate
    ]
    kept, stats = leak_check(pairs, RECORDS, groups=groups, ids=ids)
    assert [p.query for p in kept] == ["finite integral domains are fields", "the other one"]
    assert stats["planetmath-defines:collection-query"] == 1
    assert stats["stacks-slogan:collection-query"] == 1
    assert stats["planetmath-synonym:collection-target"] == 1
    assert stats["planetmath-defines:collection-target"] == 1
    assert stats["planetmath-defines:duplicate"] == 1

    # a target grouped with a protected one (the same fact in another source) shares it
    groups = FakeGroups([[0, 5]])
    kept, stats = leak_check([MinedPair("the other one", ["pw:Same"], "planetmath-defines")], RECORDS,
                             groups=groups, ids=ids)
    assert kept == [] and stats["planetmath-defines:collection-target"] == 1


def test_a_near_copy_of_a_collection_query_is_dropped():
    recs = [{"query": "the product of two compact spaces is compact", "targets": []}]
    kept, stats = leak_check([MinedPair("product of two compact spaces is compact", ["a"], "stacks-slogan"),
                              MinedPair("compact spaces", ["a"], "stacks-slogan")], recs)
    assert [p.query for p in kept] == ["compact spaces"]
    assert stats["stacks-slogan:collection-query"] == 1


def test_a_slogan_pair_views_its_tag_without_the_slogan():
    table = pa.table({
        "id": ["stacks:0001", "stacks:0002", "stacks:0003"], "source": ["stacks"] * 3,
        "slogan": ["Flat plus finite presentation gives open", "", "Not in the text"],
        "text": ["flat open. Flat plus finite presentation gives open. Let f be flat. In Morphisms.",
                 "x. Let y.", "z. Something else."]})
    pairs, stats = mined.mine_stacks(table)
    assert [p.targets for p in pairs] == [["stacks:0001"]]
    assert pairs[0].views["stacks:0001"]["text"] == "flat open. Let f be flat. In Morphisms."
    assert stats["stacks-slogan:unmaskable"] == 1


def test_a_planetmath_word_views_the_entry_without_that_word(tmp_path):
    (tmp_path / "13_X").mkdir()
    (tmp_path / "13_X" / "e.tex").write_text("\\pmsynonym{Krull ring}{E}\n\\pmdefines{valuation}\n\\endmetadata\n",
                                             encoding="utf-8")
    doc = Document(id="planetmath:E", source="planetmath", kind="definition", name="Krull domain", title="X",
                   body="", statement="A Krull domain is ...", keywords=["Krull ring", "valuation", "x"],
                   file="13_X/e.tex")
    text = "Krull domain. Defines Krull ring, valuation, x. A Krull domain is .... In X."
    table = pa.table({"id": ["planetmath:E"], "text": [text]})
    pairs, stats = mined.mine_planetmath(table, tmp_path, docs=[doc])
    by = {p.query: p for p in pairs}
    assert set(by) == {"Krull ring", "valuation"}
    assert by["Krull ring"].origin == "planetmath-synonym" and by["valuation"].origin == "planetmath-defines"
    assert by["Krull ring"].views["planetmath:E"]["text"] == "Krull domain. Defines valuation, x. A Krull domain is .... In X."
    assert stats["planetmath-defines:no-words"] == 1  # "x": nothing a reader would type


def test_masked_bm25_equals_the_score_of_an_index_that_holds_the_view(tmp_path):
    """The target's masked score from tantivy's explanation equals its score in an index built with
    the view instead of the text (the other documents the same)."""
    import json

    import tantivy

    from mathlas.bundle import LEXICAL_FIELDS, LEXICAL_TOKENIZER, lexical_words

    others = ["a ring is local when it has one maximal ideal", "modules over a local ring and Nakayama",
              "flat morphisms are open under finite presentation", "the spectrum of a ring"]
    full = "nakayama lemma. If M is a finite module and IM = M then M is killed by 1 + i. In Algebra."
    view = "nakayama lemma. In Algebra."

    def index(target: str, alias: str):
        sb = tantivy.SchemaBuilder()
        sb.add_integer_field("key", stored=True, indexed=False, fast=True)
        for f in LEXICAL_FIELDS:
            sb.add_text_field(f, stored=False, tokenizer_name=LEXICAL_TOKENIZER)
        path = tmp_path / f"ix{len(list(tmp_path.iterdir()))}"
        path.mkdir()
        ix = tantivy.Index(sb.build(), path=str(path))
        w = ix.writer(heap_size=20_000_000, num_threads=1)
        for k, t in enumerate([target, *others]):
            w.add_document(tantivy.Document(key=k, text=lexical_words(t), alias=alias if k == 0 else "",
                                            name="", title="", context="", gloss=""))
        w.commit()
        w.wait_merging_threads()
        ix.reload()
        return ix

    boosts = {"text": 1.0, "alias": 3.0}
    q = "finite module M with IM = M is killed by nakayama"
    a, b = index(full, "Nakayama lemma"), index(view, "")
    qa = a.parse_query(q, list(boosts), field_boosts=boosts)
    qb = b.parse_query(q, list(boosts), field_boosts=boosts)
    explained = json.loads(qa.explain(a.searcher(), tantivy.DocAddress(0, 0)).to_json())
    fields = {f: 1 + i for i, f in enumerate(LEXICAL_FIELDS)}
    removed = {fields["text"]: mined.removed_terms(full, view), fields["alias"]: mined.removed_terms("Nakayama lemma", "")}
    got = mined.masked_bm25(explained, removed)
    want = {addr.doc: s for s, addr in b.searcher().search(qb, 10).hits}[0]
    full_score = {addr.doc: s for s, addr in a.searcher().search(qa, 10).hits}[0]
    assert got == pytest.approx(want, rel=1e-4)
    assert got < 0.6 * full_score
    assert mined.masked_bm25(explained, {}) == pytest.approx(full_score, rel=1e-5)


def test_removed_terms_are_the_index_terms_the_view_lacks():
    """Stemmed and lower-cased as the BM25 field holds them, counted (a word kept once in the view
    still loses one occurrence)."""
    assert mined.removed_terms("Cantor's theorems on numbers", "Cantor's") == (
        Counter({"theorem": 1, "on": 1, "number": 1}), 3)
    assert mined.removed_terms("primes are infinite. Primes", "primes are infinite.") == (Counter({"prime": 1}), 1)


def test_labels_leave_out_unjudged_candidates_named_like_the_query(tiny):
    from mathlas.ranking.learned import F, FEATURES
    from mathlas_build.training.ltr import Pool

    keys = np.arange(4, dtype=np.int64)
    X = np.zeros((4, len(FEATURES)), dtype=np.float32)
    X[1, F["name_core_exact"]] = 1.0   # another document named as the query: unjudged, left out
    X[0, F["name_exact"]] = 1.0        # the target itself keeps its label
    ids = tiny.column("id").to_pylist()
    y = mined.labels(tiny, Pool(keys, X, keys), {ids[0]}, FakeGroups([[0, 3]]))
    assert y.tolist() == [2, -1, 0, 1]


def test_the_masked_pool_scores_the_view_and_is_ltr_pool_without_one(tiny):
    from mathlas.ranking.learned import F
    from mathlas_build.training import ltr

    texts = tiny.column("text").to_pylist()
    ids = tiny.column("id").to_pylist()
    key = next(k for k, t in enumerate(texts) if t and len(t.split(". ")) >= 3 and len(t) > 200)
    first = texts[key].split(". ")[1]
    query = " ".join(first.split()[:12])
    plain, same = ltr.pool(tiny, query), mined.masked_pool(tiny, query, {})
    assert np.array_equal(plain.keys, same.keys) and np.allclose(plain.X, same.X)

    view = " ".join(texts[key].replace(first, "").split())
    masked = mined.masked_pool(tiny, query, {ids[key]: {"text": view}})
    row = lambda p: p.X[np.flatnonzero(p.keys == key)[0]] if key in p.keys else None  # noqa: E731
    before, after = row(plain), row(masked)
    assert before is not None
    assert after is None or (after[F["lex_score"]] < before[F["lex_score"]] and after[F["cos"]] != before[F["cos"]])


def test_a_phrase_score_the_view_touches_is_refused_not_guessed():
    phrase = {"value": 4.0, "description": "BooleanClause. sum of ...", "details": [
        {"value": 4.0, "description": "Phrase Scorer", "details": [
            {"value": 4.0, "description": "TermQuery, product of...", "details": []}]}]}
    assert mined.masked_bm25(phrase, {}) == 4.0
    with pytest.raises(mined.Unmaskable):
        mined.masked_bm25(phrase, {3: (Counter({"sigma": 1}), 1)})
