"""Unit checks of the formal bundle's parts that need no corpus: symbol words, the reference graph,
PageRank, the dependency walk, the content-addressed vector store, module words."""
from __future__ import annotations

import numpy as np
import pytest

from mathlas_build.document import Document


def _doc(name, deps=()):
    return Document(id=f"lean:{name}", source="lean", kind="theorem", name=name, title="M", body="",
                    statement="", extra={"dependencies": list(deps)})


@pytest.mark.parametrize("text, words", [
    ("b ∈ I → a * b ∈ I", "mem imp mul mem"),
    ("a - b ≤ -c", "sub le neg"),
    ("f : R →+* S", "ring hom"),
    ("x⁻¹ * x = 1", "inv mul eq"),
    ("s ⊆ t ∪ u", "subset union"),
    ("∑ i in s, f i ^ 2", "sum pow"),
    ("a -> b", "imp"),
    ("fun x => f x * g x", "mul"),
    ("(fun x ↦ x + 1) <| y", "add"),
    ("plain words only", ""),
])
def test_symbol_words_follow_mathlib_naming(text, words):
    from mathlas.lean_symbols import symbol_words, with_symbol_words

    assert symbol_words(text) == words
    assert with_symbol_words(text) == (f"{text} {words}" if words else text)


def test_adjacency_transpose_and_pagerank():
    from mathlas_build.graph import adjacency, pagerank, transpose

    # everything uses base; c also uses b; a reference to an unknown name is dropped; self-loops too
    docs = [_doc("base"), _doc("a", ["base", "Unknown.name"]), _doc("b", ["base", "b"]), _doc("c", ["base", "b"])]
    indptr, indices, dropped = adjacency(docs)
    assert dropped == 1
    assert [indices[indptr[i]:indptr[i + 1]].tolist() for i in range(4)] == [[], [0], [0], [0, 2]]
    t_indptr, t_indices = transpose(indptr, indices, 4)
    assert [t_indices[t_indptr[i]:t_indptr[i + 1]].tolist() for i in range(4)] == [[1, 2, 3], [], [3], []]
    rank = pagerank(indptr, indices, 4)
    assert rank.sum() == pytest.approx(1.0)
    assert rank.argmax() == 0 and rank[2] > rank[1] == pytest.approx(rank[3])
    # the fixed point: r = d * (M r + dangling / n) + (1 - d) / n
    d, n = 0.85, 4
    expect = np.full(n, (1 - d) / n) + d * rank[0] / n
    expect[0] += d * (rank[1] + rank[2] / 1 + rank[3] / 2)
    expect[2] += d * rank[3] / 2
    assert rank == pytest.approx(expect, rel=1e-6)


def test_attach_graph_writes_ids_pagerank_and_a_readable_file(tmp_path):
    from mathlas.graph import DependencyGraph
    from mathlas_build.graph import attach_graph

    docs = [_doc("base"), _doc("a", ["base"]), _doc("b", ["a", "base"])]
    info = attach_graph(docs, tmp_path, quiet=True)
    assert info["edges"] == 3
    assert docs[2].extra["dependencies"] == ["lean:base", "lean:a"]
    assert docs[0].extra["pagerank"] > 1 > docs[2].extra["pagerank"]
    g = DependencyGraph(tmp_path, 3)
    assert g.walk(2, "uses", 2) == [(0, 1), (1, 1)]
    assert g.walk(0, "used_by", 1) == [(1, 1), (2, 1)]
    assert g.walk(1, "used_by", 3) == [(2, 1)]
    with pytest.raises(Exception, match="does not match"):
        DependencyGraph(tmp_path, 4)
    assert attach_graph([Document(id="stacks:0001", source="stacks", kind="lemma", name="", title="", body="",
                                  statement="")], tmp_path / "x", quiet=True) is None


def test_vector_store_embeds_each_text_once_and_survives_a_reopen(tmp_path):
    from mathlas_build.textcache import VectorStore, embed_with_store

    calls = []

    def embed(texts):
        calls.append(list(texts))
        return np.stack([np.full(3, len(t), dtype=np.float32) for t in texts])

    out = embed_with_store(["aa", "b", "aa"], 3, tmp_path, embed, quiet=True)
    assert calls == [["aa", "b"]] and out[:, 0].tolist() == [2, 1, 2]
    out = embed_with_store(["ccc", "b"], 3, tmp_path, embed, quiet=True)
    assert calls[-1] == ["ccc"] and out[:, 0].tolist() == [3, 1]
    assert len(VectorStore(tmp_path, 3)) == 3
    (tmp_path / "seg-000099.npz").write_bytes(b"torn")  # a damaged segment is ignored, not fatal
    assert len(VectorStore(tmp_path, 3)) == 3


def test_module_words():
    from mathlas_build.retrieval_text import module_words

    assert module_words("Mathlib.NumberTheory.Padics.PadicVal") == "Number Theory Padics Padic Val"


def test_lexical_identifiers_tokenizer_mode_counts_each_identifier_once():
    from mathlas.bundle import lexical_words
    from mathlas.lexical import query_terms

    assert lexical_words("hp : p.Prime", "tokenizer") == "hp : p.Prime"
    assert lexical_words("Nat.ModEq", "split") == "Nat.ModEq Nat Mod Eq"
    with pytest.raises(ValueError, match="lexical identifiers"):
        lexical_words("x", "camel")
    # the query side mirrors the index: tantivy's tokenizer splits . and _ once, no phrase query
    assert query_terms("Nat.Prime.two_le", "tokenizer") == ["nat", "prime", "two", "le"]
    assert query_terms("Nat.Prime.two_le") == ["nat", "prime", "two_le", "nat", "prime", "two", "le"]


def test_lexical_manifest_validates_recipe_options():
    from mathlas_build.lean_build import FORMAL_OPTIONS
    from mathlas_build.writer import lexical_manifest

    assert lexical_manifest({}) == {"boosts": {"text": 1.0}}
    assert lexical_manifest(FORMAL_OPTIONS) == {"boosts": {"text": 1.0}, "symbols": "lean", "identifiers": "tokenizer"}
    with pytest.raises(ValueError, match="lexical_identifiers"):
        lexical_manifest({"lexical_identifiers": "camel"})
    with pytest.raises(ValueError, match="lexical_symbols"):
        lexical_manifest({"lexical_symbols": "coq"})


def test_lean_lexical_text_weights_the_docstring():
    from mathlas_build.retrieval_text import LEAN_DOCSTRING_WEIGHT, lexical_text

    d = Document(id="lean:irrational_sqrt_two", source="lean", kind="theorem", name="irrational sqrt two",
                 title="M", body="", statement="",
                 extra={"docstring": "The square root of two is irrational", "signature": ": Irrational (√2)"})
    text = lexical_text(d, "the embedded text is not what BM25 indexes")
    assert text.count("The square root of two is irrational.") == LEAN_DOCSTRING_WEIGHT > 1
    assert text.startswith("irrational sqrt two.") and text.endswith(": Irrational (√2).")
    assert "embedded" not in text
    bare = Document(id="lean:x", source="lean", kind="def", name="x", title="M", body="", statement="", extra={})
    assert lexical_text(bare, "") == "x."
