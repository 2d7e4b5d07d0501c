"""Unit checks of the formal bundle's parts that need no corpus: symbol words, the reference graph,
PageRank, the dependency walk, the embedding cache's vector store, module words."""
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
    from mathlas.bundle import symbol_words, with_symbol_words

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


def test_vector_store_keeps_vectors_across_reopens_and_reads_old_segment_names(tmp_path):
    from mathlas_build.textcache import VectorStore, text_keys

    store = VectorStore(tmp_path, 3)
    keys = text_keys(["aa", "b"])
    path = store.add(keys, np.array([[2, 2, 2], [1, 1, 1]], np.float32))
    assert oct(path.stat().st_mode)[-3:] == "644"  # readable by the other workers of a shared cache
    assert store.add(keys, np.array([[2, 2, 2], [1, 1, 1]], np.float32)) == path  # the same texts, the same name
    # a store written before segments were named by their keys
    np.savez(tmp_path / "seg-000000.npz", keys=text_keys(["ccc"]).view(np.uint8).reshape(1, 16),
             vectors=np.full((1, 3), 3, np.float32))
    (tmp_path / "seg-000099.npz").write_bytes(b"torn")  # a damaged segment is ignored, not fatal
    np.savez(tmp_path / "seg-000100.npz", keys=text_keys(["dd"]).view(np.uint8).reshape(1, 16),
             vectors=np.ones((1, 4), np.float32))  # another encoder's width: ignored
    (tmp_path / ".seg-x.tmp").write_bytes(b"half")  # a temporary file of a crashed writer is never read
    again = VectorStore(tmp_path, 3, quiet=True)
    assert len(again) == 3 and len(list(tmp_path.glob("seg-*.npz"))) == 4
    asked = text_keys(["b", "zz", "ccc", "aa", "dd"])
    held = again.contains(asked)
    assert held.tolist() == [True, False, True, True, False]
    out = np.zeros((5, 3), np.float32)
    again.read_into(asked[held], out, np.nonzero(held)[0])
    assert out[:, 0].tolist() == [1, 0, 3, 2, 0]
    with pytest.raises(ValueError, match="shape"):
        again.add(text_keys(["e"]), np.zeros((1, 4), np.float32))


WRITER = """
import sys
import numpy as np
from mathlas_build.textcache import VectorStore, text_keys
store, tag = VectorStore(sys.argv[1], 4), sys.argv[2]
for i in range(40):
    store.add(text_keys([f"{tag} {i} {j}" for j in range(5)]), np.full((5, 4), i, np.float32))
"""


def test_processes_sharing_a_store_never_overwrite_each_others_segments(tmp_path):
    """Two writers at once (shards on one machine): every segment of both survives, none half-written."""
    import subprocess
    import sys

    from mathlas_build.textcache import VectorStore, text_keys

    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), tag]) for tag in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    store = VectorStore(tmp_path, 4)
    assert len(store) == 2 * 40 * 5 and len(list(tmp_path.glob("seg-*.npz"))) == 80
    assert not list(tmp_path.glob(".seg-*"))  # no temporary file left behind
    keys = text_keys([f"{tag} {i} {j}" for tag in "ab" for i in range(40) for j in range(5)])
    out = np.zeros((len(keys), 4), np.float32)
    store.read_into(keys, out, np.arange(len(keys)))
    assert out[:, 0].tolist() == [i for _ in "ab" for i in range(40) for _ in range(5)]


def test_module_words():
    from mathlas_build.retrieval_text import module_words

    assert module_words("Mathlib.NumberTheory.Padics.PadicVal") == "Number Theory Padics Padic Val"


def test_lexical_identifiers_tokenizer_mode_counts_each_identifier_once():
    from mathlas.bundle import lexical_words
    from mathlas.ranking.lexical import query_terms

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
    assert lexical_manifest(FORMAL_OPTIONS) == {"boosts": {"text": 1.0, "alias": 3.0, "context": 0.25, "gloss": 0.0},
                                                "symbols": "lean", "identifiers": "tokenizer"}
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
