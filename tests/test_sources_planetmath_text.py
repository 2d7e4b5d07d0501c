"""PlanetMath reader: ``\\begin{document}`` / ``\\end{document}`` on a comment line do not delimit the
article. The three entries of the corpus with a delimiter after a ``%``, read from copies of the real files."""
from __future__ import annotations

import shutil

from mathlas_build.sources import planetmath
from conftest import by_id, corpus

FILES = ("18_Category_theory_homological_algebra/18A20-PowerObject.tex",
         "40_Sequences_series_summability/40A05-ThisIsMySampleFile1.tex",
         "40_Sequences_series_summability/40A05-AnIntuitiveInsightIntoCrossProducts1.tex")


def _read(tmp_path):
    root = corpus("planetmath")
    for f in FILES:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / f, tmp_path / f)
    return by_id(list(planetmath.read(tmp_path)), "PlanetMath")


def test_commented_out_document_delimiters_are_not_the_article(tmp_path):
    docs = _read(tmp_path)
    # a commented-out pstricks figure between "%\begin{document}" and "%\end{document}" (lines 107-121)
    power = docs["planetmath:PowerObject"]
    assert power.statement.startswith("Preliminary remarks. Let A be a set.")
    assert "We say that an object B in C is a power object of A if B represents the functor F_A." \
        in power.statement
    assert "Toposes, Triples, and Theories" in power.statement
    assert "psmatrix" not in power.statement and "psmatrix" not in power.body
    assert power.line == 39 and len(power.body) > 2000
    # "% this part before the \begin{document} is the "preamble"" inside the article
    sample = docs["planetmath:ThisIsMySampleFile1"]
    assert sample.statement.startswith("sdsd ")
    assert "Background on thing A." in sample.statement and "preamble" not in sample.statement


def test_delimiters_after_text_on_a_line_still_count(tmp_path):
    # this entry lost its newlines upstream: "... \date{21 December, 2007} % irrelevant change to test
    # editing - APK \begin{document} \maketitle When students first learn about cross products ..." is one
    # line; its article is what follows that \begin{document}
    cross = _read(tmp_path)["planetmath:AnIntuitiveInsightIntoCrossProducts1"]
    assert cross.statement.startswith("When students first learn about cross products")
    assert cross.statement.endswith('which is exactly how we "define" the cross product.')


def test_document_delimiter():
    text = "a\n%\\begin{document}\n  % \\end{document}\nb \\end{document} % \\end{document}\n\\end{document}"
    assert planetmath._document_delimiter(planetmath._BEGIN_DOC_RE, text) is None
    m = planetmath._document_delimiter(planetmath._END_DOC_RE, text)
    assert text[:m.start()].endswith("\nb ")
    m2 = planetmath._document_delimiter(planetmath._END_DOC_RE, text, m.end())
    assert m2.start() == text.rindex("% \\end") + 2      # after text on its line: the author's % came later


def test_the_hott_books_binders_take_every_group(tmp_path):
    # the HoTT book's chapters on PlanetMath write \sm{a:A}{b:B} without defining \sm: every brace group
    # is its own binder, as in the book (hott.split_binders); the one-argument override used to drop the
    # second sum, leaving "\sum_{(a:A)}\,{b:B} f(a)=g(b)"
    f = "03_Mathematical_logic_and_foundations/03B15-1011LimitsAndColimits.tex"
    (tmp_path / f).parent.mkdir(parents=True)
    shutil.copy(corpus("planetmath") / f, tmp_path / f)
    doc = by_id(list(planetmath.read(tmp_path)), "PlanetMath")["planetmath:1011LimitsAndColimits"]
    assert "\\sum_{(a:A)}\\,\\sum_{(b:B)}\\, f(a)=g(b)" in doc.body
    assert "\\,{b:B}" not in doc.body


def test_proofs_can_be_left_out_of_the_retrieval_text(tmp_path):
    # proofs_in_text=False (measured and not taken for the default bundle: docs/building.md) keeps what an
    # entry states and drops its proof environments from the text that is indexed, never from the body shown
    f = "11_Number_theory/11-00-ConverseOfWilsonsTheorem.tex"
    (tmp_path / f).parent.mkdir(parents=True)
    shutil.copy(corpus("planetmath") / f, tmp_path / f)
    whole = by_id(list(planetmath.read(tmp_path)), "PlanetMath")["planetmath:ConverseOfWilsonsTheorem"]
    short = by_id(list(planetmath.read(tmp_path, proofs_in_text=False)), "PlanetMath")[
        "planetmath:ConverseOfWilsonsTheorem"]
    assert short.statement.startswith("Theorem. Given an integer n > 1, if (n - 1)! equiv -1 mod n then n is prime.")
    assert len(short.statement) < len(whole.statement) and short.body == whole.body
    assert "\\begin{proof}" in whole.body


def test_without_proofs_keeps_an_entry_that_is_all_proof():
    assert planetmath.without_proofs("\\begin{proof} all of it \\end{proof}", {}) == \
        "\\begin{proof} all of it \\end{proof}"
    text = "Every " + "long enough statement " * 5 + "holds. \\begin{proof} trivial \\end{proof} Remark."
    assert planetmath.without_proofs(text, {}) == text.replace("\\begin{proof} trivial \\end{proof}", "\n")
