"""Retrieval text: structure first, notation named in words."""
from mathlas_build.document import Document
from mathlas_build.notation import notation_words
from mathlas_build.retrieval_text import name_field, retrieval_text


def test_notation_words_name_the_concepts():
    assert "polynomial ring" in notation_words("Let R be a Noetherian ring. Then R[x] is Noetherian.")
    assert "polynomial ring" in notation_words("any radical ideal I subset k[x_1,..., x_n] is an intersection")
    assert "formal power series ring" in notation_words("then A[[t]] is a domain")
    assert "cohomology" in notation_words("we have H^i(X, F) = 0 for i > 0")
    assert "residue field" in notation_words("the extension kappa(m)/k is finite")
    assert "consistency" in notation_words("PA does not derive Con_PA")
    assert "Peano arithmetic" in notation_words("PA does not derive Con_PA")
    assert "fundamental group" in notation_words("pi_1(X, x) is abelian")


def test_notation_words_stay_quiet_on_prose_and_citations():
    assert notation_words("See [1] and [Section 3] for a proof of the theorem.") == []
    assert notation_words("A group is abelian if its operation commutes.") == []
    assert notation_words("") == []
    words = notation_words("R[x] and S[y] and H^1(X, F) and H^2(Y, G)")
    assert len(words) == len(set(words))


def test_retrieval_text_order_and_parts():
    d = Document(id="x:1", source="x", kind="theorem", name="Hilbert basis theorem",
                 title="Commutative algebra > Noetherian rings", body="$R[x]$",
                 statement="Let R be a Noetherian ring. Then R[x] is Noetherian",
                 slogan="Polynomial rings over Noetherian rings are Noetherian",
                 keywords=["Noetherian ring", "Hilbert basis theorem"])
    t = retrieval_text(d)
    assert t.startswith("Hilbert basis theorem. Polynomial rings over Noetherian rings are Noetherian.")
    assert "Defines Noetherian ring." in t  # the name itself is not repeated as a keyword
    assert "Notation: polynomial ring." in t
    assert t.endswith("In Commutative algebra > Noetherian rings.")
    assert name_field(d) == "Hilbert basis theorem Noetherian ring Hilbert basis theorem"


def test_retrieval_text_of_a_bare_statement():
    d = Document(id="x:2", source="x", kind="lemma", name="", title="", body="", statement="Every set is small")
    assert retrieval_text(d) == "Every set is small."
