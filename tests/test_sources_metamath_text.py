"""Metamath reader, text of the retrieval words: section titles in plain text (set.mm writes them in HTML)
and proper substitution ``[ y / x ]`` as set.mm's ``[y/x]``, not a division. Snippets copied from set.mm
(proofs shortened: the parser skips them)."""
from __future__ import annotations

from mathlas_build.retrieval_text import retrieval_text
from mathlas_build.sources import metamath

BEZOUT = r"""
$(
=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=
                           B&eacute;zout's identity
=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=
$)

  ${
    $d s t u v x y z A $.  $d s t u v x y z B $.
    ${
      bezout.1 $e |- M = { z e. NN | E. x e. ZZ E. y e. ZZ
                           z = ( ( A x. x ) + ( B x. y ) ) } $.
      bezout.3 $e |- ( ph -> A e. ZZ ) $.
      bezout.4 $e |- ( ph -> B e. ZZ ) $.
      $( Lemma for ~ bezout .  (Contributed by Mario Carneiro, 15-Mar-2014.) $)
      bezoutlem1 $p |- ( ph -> ( A =/= 0 -> ( abs ` A ) e. M ) ) $=
        ( cmul co caddc ) ABC $.
    $}
  $}
"""

SUBSTITUTION = r"""
  ${
    $d x y $.
    $( Equivalence for substitution.  Compare Theorem 6.2 of [Quine] p. 40.
       Also proved as Lemmas 16 and 17 of [Tarski] p. 70.  The implication "to
       the left" is ~ sb2 and does not require any dv condition.  Theorem
       ~ sb6f replaces the dv condition with a non-freeness hypothesis.
       (Contributed by NM, 18-Aug-1993.)  (Proof shortened by Wolf Lammen,
       21-Sep-2018.) $)
    sb6 $p |- ( [ y / x ] ph <-> A. x ( x = y -> ph ) ) $=
      ( wsb weq wi wal wa wex sb1 sb56 sylib sb2 impbii ) ABCDZBCEZAFBGZOPAHBIQ $.
  $}

  ${
    $d x y $.  $d y A $.  $d y B $.  $d y C $.
    $( Analogue of ~ dfsbcq for proper substitution into a class.  (Contributed
       by NM, 10-Nov-2005.) $)
    csbeq1 $p |- ( A = B -> [_ A / x ]_ C = [_ B / x ]_ C ) $=
      ( vy wceq cv wcel wsbc cab csb dfsbcq abbidv df-csb 3eqtr4g ) BCFZEGDHZAB $.
  $}
"""


def test_section_titles_are_plain_text(tmp_path):
    (st,) = metamath.statements(BEZOUT)
    assert st.sections[2] == "Bézout's identity"
    (tmp_path / "set.mm").write_text(BEZOUT, encoding="utf-8")
    (doc,) = metamath.read(tmp_path)
    assert doc.extra["context_title"] == "Bézout's identity"
    assert retrieval_text(doc).endswith("In Bézout's identity.")


def test_heading_text_of_real_titles():
    # every title of a set.mm ruler comment with HTML in it (Version of 28-Dec-2020)
    assert metamath.heading_text("The Basel problem (&zeta;(2) = &pi;<sup>2</sup>/6)") == \
        "The Basel problem (ζ(2) = π^2/6)"
    assert metamath.heading_text("<i>p</i>-adic number fields") == "p-adic number fields"
    assert metamath.heading_text("The Erd&#337;s-Szekeres theorem") == "The Erdős-Szekeres theorem"
    assert metamath.heading_text("&sigma;-Algebras") == "σ-Algebras"
    assert metamath.heading_text("Full & faithful functors") == "Full & faithful functors"
    assert metamath.heading_text("SUPPLEMENTARY MATERIAL (USER'S MATHBOXES)") == metamath.MATHBOXES


def test_substitution_is_not_a_division():
    sb6, csbeq1 = metamath.statements(SUBSTITUTION)
    assert metamath.statement_words(sb6) == \
        "[y/x] ph if and only if for all x x equals y implies ph"
    assert metamath.statement_words(csbeq1) == "A equals B implies [A/x] C equals [B/x] C"
    words = metamath.symbol_words
    assert words("|- [. A / y ]. [. y / x ]. ph".split()) == "[A/y] [y/x] ph"          # sbcco
    assert words("|- [b t /b x ]b ph".split()) == "[t/x] ph"                            # a mathbox's own
    # a division inside the substituted class stays one; an equivalence class is no substitution
    assert words("|- [_ ( A / B ) / x ]_ C".split()) == "[A divided by B/x] C"
    assert words("|- [ A ] R = ( R \" { A } )".split()) == '[ A ] R equals R " A'
    assert words("|- ( A / B ) = C".split()) == "A divided by B equals C"


def test_substitution_across_the_lines_of_a_description():
    # sbcssgVD's description: its virtual-deduction table breaks one formula into several `...` spans
    comment = """
       <TR> <TD> qed:15:   <TD> ` |- ( A e. B -> ( [. A / x ]. C C_ D <-> [_ `
       ` A / x ]_ C C_ [_ A / x ]_ D ) ) `
       </TABLE> </HTML>
       (Contributed by Alan Sare, 22-Jul-2012.) (Proof modification is
       discouraged.)  (New usage is discouraged.) """
    assert metamath.comment_words(comment) == \
        "qed:15: A element of B implies [A/x] C subset of D if and only if [A/x] C subset of [A/x] D"
