"""Display text (issue 21): a statement's source markup made into what KaTeX and the page draw.

Unit tests of ``mathlas_build.display`` and ``mathlas_build.mmtex`` on hand-written inputs, then set.mm's
own typesetting table from the corpus. The per-source checks on real documents (stable ids whose old
text had the debris) live with each reader's tests."""
from __future__ import annotations

import pytest

from mathlas_build import display, mmtex
from mathlas_build.display import DisplayAudit, display_tex, leaks, repair_text
from mathlas_build.latex import expand_macros, parse_macros
from conftest import corpus


def test_repair_text_mojibake_and_entities():
    assert repair_text("CramÃ©r's theorem") == "Cramér's theorem"
    assert repair_text("Erd&#337;s &amp; R&eacute;nyi") == "Erdős & Rényi"
    plain = "A $\\mathbb{R}$-module & nothing to repair: résumé"
    assert repair_text(plain) is plain or repair_text(plain) == plain


def test_expand_macros_keeps_the_rest_as_written():
    m = parse_macros(r"\newcommand{\defeq}{\vcentcolon\equiv}\newcommand{\Ob}[1]{\mathrm{Ob}(#1)}")
    assert expand_macros(r"$x \defeq \Ob{C}$ and  \emph{y}", m) == r"$x \vcentcolon\equiv \mathrm{Ob}(C)$ and \emph{y}"
    assert expand_macros("one\n\ntwo", m) == "one\n\ntwo"                      # a paragraph break stays


def test_display_tex_removes_debris():
    m = parse_macros(r"\newcommand{\ord}{\mathrm{ord}}")
    tex = (r"\index{order}We say \PMlinkname{the order}{Order} of $g$ is $\ord(g)$\label{def:ord}"
           r"\PMlinkescapeword{order}. \section{Proof} See \cref{thm:x}\footnote{a note}."
           "\n\\begin{align} a &= b \\label{eq}\\\\ c &= d\\nonumber \\end{align}")
    out = display_tex(tex, m)
    assert out.startswith(r"We say the order of $g$ is $\mathrm{ord}(g)$.")
    assert r"\textbf{Proof}" in out and r"\ref{thm:x}" in out and "(a note)" in out
    assert out.endswith("(a note). $$\\begin{aligned}a &= b \\\\ c &= d\\end{aligned}$$")
    assert leaks(out) == [] and leaks(tex) != []
    assert display_tex(r"\indexsee{axiom!univalence}{univalence axiom}For any $A$ \end {proof}") == \
        r"For any $A$ \end{proof}"


def test_display_tex_math_fixes():
    out = display_tex(r"Let $\mbox{rank}\ M = \ensuremath{\bm{n}}$ and \ensuremath{x^2}\xspace.")
    assert out == r"Let $\text{rank}\ M = {\boldsymbol {n}}$ and $x^2$."
    assert display.math_commands(out) == set()


def test_text_mode_commands_and_accents():
    out = display_tex(r"By Cram\'er and G\"odel, \S 3: \textsc{Zorn} \underline{lemma} \ldots")
    assert out == "By Cramér and Gödel, § 3: Zorn lemma …"
    assert display.text_commands(out) == set()


def test_unicode_text_has_a_symbol_for_what_katex_draws():
    # ProofWiki headings read these as words: "(S₁, preccurlyeq₁) ⊗ ^s ...", "R ominus S", "dbinom n k", "pmod p"
    assert display.unicode_text(r"$\left(S_1, \preccurlyeq_1\right) \otimes^s \left(S_2, \succcurlyeq_2\right)$") == \
        "(S₁, ≼₁) ⊗^s (S₂, ≽₂)"
    assert display.unicode_text(r"$R \ominus S \odot T \boxtimes U$, $x \preceq y \prec z \succeq w \precsim v$") \
        == "R ⊖ S ⊙ T ⊠ U, x ⪯ y ≺ z ⪰ w ≾ v"
    assert display.unicode_text(r"$\dbinom n k \equiv \binom {n - 1} k \pmod p$ and $a \bmod b$") \
        == "(n choose k) ≡ (n − 1 choose k) (mod p) and a mod b"
    assert display.unicode_text(r"$\sum_k {k \brace m} {n + 1 \brack k + 1} = 1$") \
        == "∑_k {k m} [(n + 1) (k + 1)] = 1"
    assert display.unicode_text(r"$a \not = b$, $x \not \in A$, $\Bbb R$, $\underline x$, $\log_{10} x$, "
                                r"$\coth x$, $\mu^* \restriction_S$, $\complement_S(T)$") \
        == "a ≠ b, x ∉ A, ℝ, x̲, log₁₀ x, coth x, μ^* ↾_S, ∁_S(T)"
    assert display.unicode_text(r"$x_1, \dotsc, x_n$ and $a \cdotp b \dotsb$; $^{n - 1} P_n = {}^n P_n$") \
        == "x₁, …, x_n and a · b ⋯; ^(n − 1) P_n = ⁿ P_n"


def test_leaks_classes():
    assert leaks(r"\ollabel{thm:x} !!{sentence}") == ["TeX outside math: \\ollabel", "\\ollabel", "!!"]
    assert leaks("{{iff}} and CramÃ©r &#337;") == ["{{", "mojibake", "HTML entity"]
    assert leaks("$n!!$ and ${{a}}$") == []                                   # inside math they are TeX
    assert leaks("$|- ( ph -> ps )$", setmm=True) == ["set.mm ASCII in math"]
    assert leaks(r"$\vdash ( \varphi \rightarrow \psi )$", setmm=True) == []


def test_audit_counts_documents():
    audit = DisplayAudit("x", defined={"ord"})
    for body in (r"$\ord$", r"$\xymatrix{a}$", r"$\ord \xymatrix{}$", "$a$"):
        audit.add(body)
    assert (audit.docs, audit.with_defined, audit.with_other) == (4, 2, 2)
    assert "2 of 4 documents" in audit.line()


# ------------------------------------------------------------------------------------------------ set.mm

TINY_T = r"""$( $t
/* a comment */
latexdef "|-" as "\vdash";
althtmldef "ph" as '<SPAN CLASS=wff STYLE="color:blue">&#x1D711;</SPAN>';
latexdef "ph" as "\varphi";
latexdef "->" as " \rightarrow ";   althtmldef "->" as " &rarr; ";
latexdef "(" as "(";  latexdef ")" as ")";
latexdef "-1-1->" as "\raisebox{.5ex}{${\textstyle{\:}_{\mbox{\footnotesize\rm 1\tt -\rm 1}}}$}";
latexdef "Nrm" as "{\rm " + "Nrm}";
$)
"""


def test_typesetting_table_and_formulas():
    ts = mmtex.typesetting(TINY_T)
    assert ts.latex["Nrm"] == r"{\rm Nrm}" and ts.latex["-1-1->"] == mmtex.ARROWS["-1-1->"]
    assert mmtex.formula_tex("|- ( ph -> ps )".split(), ts) == r"\vdash ( \varphi \rightarrow \mathrm{ps} )"
    assert mmtex.formula_text("( ph -> ph )".split(), ts) == "(𝜑 → 𝜑)"
    c = mmtex.comment_tex("If ` ph ` then ~ ax-mp applies, _mutatis mutandis_ (50% &amp; {1}) .", ts)
    assert c == r"If $\varphi$ then \texttt{ax-mp} applies, \emph{mutatis mutandis} (50\% & \{1\})."
    assert mmtex.first_sentence("Theorem 19.2 of [Margaris] p. 89. More text.") == "Theorem 19.2 of [Margaris] p. 89"
    assert mmtex.first_sentence("See e.g. Rule 1. Then") == "See e.g. Rule 1"


def test_set_mm_latexdefs_all_drawable():
    text = (corpus("metamath") / "set.mm").read_text(encoding="utf-8")
    ts = mmtex.typesetting(text)
    assert len(ts.latex) > 1500 and len(ts.html) > 1500
    bad = {t: tex for t, tex in ts.latex.items() if display.math_commands("$" + tex + "$") or "$" in tex}
    assert bad == {}


@pytest.mark.parametrize("name", ["katex_commands.txt"])
def test_katex_list_is_the_vendored_katex(name):
    assert {"frac", "mathbb", "vDash", "coloneqq", "operatorname"} <= display.KATEX
    assert not {"xymatrix", "ensuremath", "defeq", "label"} & display.KATEX


def test_a_root_keeps_its_index():
    """ProofWiki's "$\\sqrt [3] 2$ is irrational" was headed "√([)3] 2 is irrational" (the space before the
    index) and its text said sqrt(2): the cube root is another theorem."""
    assert display.unicode_text(r"$\sqrt [3] 2$ is irrational") == "∛2 is irrational"
    assert display.unicode_text(r"$\sqrt[3]{x+1}$") == "∛(x+1)"
    assert display.unicode_text(r"$\sqrt{2}$") == "√2" and display.unicode_text(r"$\sqrt[2]{2}$") == "√2"
    assert display.unicode_text(r"$\sqrt[n]{a}$") == "n√a"

