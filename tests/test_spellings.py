"""A prefixed word written with or without its hyphen (``LexicalChannel.spellings``): the BM25 index
reads "quasi-coherent" as two words, so "quasicoherent" found no document that writes it the usual
way. The other spelling is searched too where the bundle's documents write it more often; the real
default bundle's counts decide."""
from __future__ import annotations

import pytest

from mathlas.ranking.filters import Filters


@pytest.fixture(scope="module")
def bundle(default_bundle_dir):
    from mathlas.engine import open_bundle

    return open_bundle(str(default_bundle_dir))


def test_the_spelling_the_documents_use_is_searched_too(bundle):
    lx = bundle.lexical
    # the Stacks project writes quasi-coherent, never quasicoherent
    assert lx.spellings("quasicoherent sheaf", ["quasicoherent", "sheaf"]) == ['"quasi coherent"']
    # written with the hyphen: searched as typed (the joined form too was tried, and left out)
    assert lx.spellings("non-negative matrix", ["non", "negative", "matrix"]) == []
    # the usual spelling already, or a word that only looks prefixed: nothing more
    assert lx.spellings("quasi-coherent sheaf", ["quasi", "coherent", "sheaf"]) == []
    assert lx.spellings("nonnegative matrix", ["nonnegative", "matrix"]) == []
    assert lx.spellings("subgroup cohomology", ["subgroup", "cohomology"]) == []
    assert lx.spellings("a union of sets", ["a", "union", "of", "sets"]) == []
    # the counts are the same the name correction reads, and a benchmark's new query forgets both
    from mathlas.ranking.names import forget_word_counts, text_counter

    assert text_counter(bundle)("quasicoherent") == lx.documents_using("quasicoherent") == 0
    assert lx.documents_using('"quasi coherent"') > 0 and lx._used.snapshot()
    forget_word_counts(bundle)
    assert not lx._used.snapshot()


def test_quasicoherent_finds_what_quasi_coherent_finds(bundle):
    lx = bundle.lexical
    joined = lx.search("quasicoherent", 20, Filters())
    hyphen = lx.search("quasi-coherent", 20, Filters())
    assert len(joined) == 20   # was none: no document writes "quasicoherent"
    assert set(joined.keys.tolist()) & set(hyphen.keys.tolist())
    ids = bundle.column("id")
    assert all(ids[k].as_py().startswith("stacks:") for k in joined.keys[:5].tolist())


def test_a_formal_bundle_searches_its_words_as_typed(bundle, monkeypatch):
    # the same index read as a formal bundle's (Mathlib's names split by the tokenizer, notation as
    # words): no other spelling, where the informal reading finds one
    lx = bundle.lexical
    assert lx.spellings("quasicoherent", ["quasicoherent"]) == ['"quasi coherent"']
    with monkeypatch.context() as m:
        m.setattr(lx, "identifiers", "tokenizer")
        assert lx.spellings("quasicoherent", ["quasicoherent"]) == []
    with monkeypatch.context() as m:
        m.setattr(lx, "symbols", "lean")
        assert lx.spellings("quasicoherent", ["quasicoherent"]) == []
