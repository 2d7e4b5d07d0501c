"""``mathlas.render.statement_text``: a statement's LaTeX source as a terminal shows it."""
from __future__ import annotations

from mathlas.render import statement_text


def test_lists_nest_and_number_and_math_stays_as_written():
    src = ("Let $R$ be a ring. \\begin{enumerate}\\item\n\nIf $a \\in R$ then \\emph{done}. % a comment\n"
           "\\item Otherwise: \\begin{itemize} \\item one $x_{1}$ \\item two \\end{itemize}\n"
           "\\end{enumerate}\nSee \\ref{lemma-x} and \\cite[p. 3]{AM}.")
    assert statement_text(src) == (
        "Let $R$ be a ring.\n  1. If $a \\in R$ then done.\n  2. Otherwise:\n     • one $x_{1}$\n     • two\n\n"
        "See (lemma-x) and [AM].")


def test_description_labels_paragraphs_and_text_macros():
    src = ("\\begin{theorem}A \\textbf{group} is {\\em abelian} if ``$ab = ba$''.\\end{theorem}\n\n"
           "\\begin{description}\\item[(a)] first\\item[(b)] second\\end{description}\nCost: \\$5~total---really.")
    assert statement_text(src) == ("A group is abelian if “$ab = ba$”.\n\n  (a): first\n  (b): second\n\n"
                                   "Cost: $5 total—really.")


def test_display_math_is_kept_whole_and_plain_text_is_unchanged():
    src = "Then \\begin{align} a &= b \\\\ c &= d \\end{align} holds, and $$x^2$$ too."
    assert statement_text(src) == src
    plain = "A finite group of prime order is cyclic."
    assert statement_text(plain) == plain
    assert statement_text("") == ""


def test_a_tabular_reads_as_rows_and_an_escaped_ampersand_stays():
    src = "Tables: \\begin{tabular}{c|c} $p$ & $q$ \\\\ T & F \\end{tabular} Smith \\& Wesson."
    assert statement_text(src) == "Tables:\n\n$p$ | $q$\nT | F\n\nSmith & Wesson."
