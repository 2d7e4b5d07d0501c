"""A statement's proof is not its statement: the splitter cuts the text where a proof starts, however
LaTeX sets the heading ({\\bf Proof:\\\\}, \\textbf{Proof.}, \\emph{Proof}, \\begin{proof}, "Proof." after a
sentence...), and reads a sentence with no cue through its subject ("A finite integral domain is a field").

The walkthrough's case is planetmath:AFiniteIntegralDomainIsAField, whose proof opens with
``{\\bf Proof:\\\\}``: it is checked on its text here (``ENTRY``, as the bundle holds it) and through the
library, the human CLI, ``--json`` and a real MCP server on the installed default bundle.
"""
from __future__ import annotations

import json
import re

import pytest

from mathlas.tools.latex_split import clean_statement, proof_start, split_statement
from mathlas.tools.scaffold import applicability_checklist, mapping_scaffold

ENTRY_ID = "planetmath:AFiniteIntegralDomainIsAField"
# the entry's body in the default bundle (informal-1.5.0), verbatim
ENTRY = ("A finite integral domain is a field.\n\n{\\bf Proof:\\\\}\nLet $R$ be a finite integral domain.  Let $a$ be "
         "nonzero element of $R$.\n\nDefine a function $\\varphi \\colon R \\rightarrow R$ by $\\varphi(r)=ar$.\n\n"
         "Suppose $\\varphi(r)=\\varphi(s)$ for some $r,s \\in R$.  Then $ar=as$, which implies $a(r-s)=0$.  Since "
         "$a \\neq 0$ and $R$ is a cancellation ring, we have $r-s=0$.  So $r=s$, and hence $\\varphi$ is injective.\n\n"
         "Since $R$ is finite and $\\varphi$ is injective, by the pigeonhole principle we see that $\\varphi$ is also "
         "surjective.  Thus there exists some $b \\in R$ such that $\\varphi(b)= ab = 1_R$, and thus $a$ is a unit.\n\n"
         "Thus $R$ is a finite division ring.  Since it is commutative, it is also a field.\n\n{\\bf Note:\\\\}\n"
         "A more general result is that an Artinian integral domain is a field.")
PROBLEM = "Show that Z/pZ is a field for p prime"


def texts(pre) -> list[str]:
    return [p.text for p in pre]


def words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+", re.sub(r"\\[A-Za-z]+", " ", text))


@pytest.fixture(scope="module")
def bundle(default_bundle_dir):
    return str(default_bundle_dir)


# ------------------------------------------------------------------------------ the entry

def test_entry_text_splits_into_its_statement():
    pre, conclusion, parts = split_statement(ENTRY)
    assert texts(pre) == ["it is a finite integral domain"] and conclusion == "it is a field" and parts == []
    assert clean_statement(ENTRY) == "A finite integral domain is a field."


def test_entry_from_the_bundle(bundle):
    from mathlas.tools.informal import get_by_id

    assert get_by_id(ENTRY_ID, bundle=bundle).body == ENTRY  # the fixture is the entry as shipped
    c = applicability_checklist(ENTRY_ID, bundle=bundle)
    assert c.statement == "A finite integral domain is a field."
    assert texts(c.preconditions) == ["it is a finite integral domain"] and c.conclusion == "it is a field"
    assert [p.cue for p in c.preconditions] == ["a"]
    assert any("P1 is the sentence's subject" in n for n in c.notes)
    assert not any("no explicit hypotheses" in n for n in c.notes)


def test_entry_in_the_human_cli_and_json(bundle, capsys):
    from mathlas.cli.main import main

    assert main(["checklist", ENTRY_ID, "-b", bundle]) == 0
    out, err = capsys.readouterr()
    assert out == ("statement (planetmath:AFiniteIntegralDomainIsAField):\n"
                   "  A finite integral domain is a field.\n"
                   "preconditions:\n"
                   "  [ ] P1. it is a finite integral domain\n"
                   "conclusion:\n"
                   "  it is a field\n")
    assert "note: no let/if/assume: P1 is the sentence's subject ('it is a finite integral domain')" in err
    assert main(["scaffold", "--problem", PROBLEM, "--candidate", ENTRY_ID, "-b", bundle]) == 0
    out = capsys.readouterr().out
    questions = out.split("questions:\n", 1)[1].split("answer template", 1)[0]
    assert '  P1. The candidate needs: "it is a finite integral domain". Does the problem provide' in questions
    assert "Proof" not in out and "Let $a$ be nonzero" not in out
    assert main(["scaffold", "--problem", PROBLEM, "--candidate", ENTRY_ID, "-b", bundle, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [p["text"] for p in answer["answer_template"]["preconditions"]] == ["it is a finite integral domain"]
    assert answer["candidate"]["conclusion"] == "it is a field"
    conclusion = next(q for q in answer["questions"] if q["kind"] == "conclusion")
    assert conclusion["candidate_side"] == "it is a field" and conclusion["likely_matches"] == [PROBLEM]


@pytest.mark.slow
def test_entry_over_mcp(bundle):
    pytest.importorskip("mcp")
    from test_mcp import McpServer, ok, server_env

    server = McpServer(server_env(MATHLAS_BUNDLE=bundle))
    try:
        c = ok(server.call("applicability_checklist", statement=ENTRY_ID))
        assert [p["text"] for p in c["preconditions"]] == ["it is a finite integral domain"]
        assert c["conclusion"] == "it is a field" and c["statement"] == "A finite integral domain is a field."
        m = ok(server.call("mapping_scaffold", problem=PROBLEM, candidate=ENTRY_ID))
        assert [q["candidate_side"] for q in m["questions"] if q["kind"] == "precondition"] == [
            "it is a finite integral domain"]
        assert m["candidate"]["conclusion"] == "it is a field"
        assert m == json.loads(json.dumps(m)) and "Proof" not in json.dumps(m)
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()


def test_a_proof_entry_says_so(bundle):
    c = applicability_checklist("planetmath:AlternativeProofThatAFiniteIntegralDomainIsAField", bundle=bundle)
    assert any("is a proof, not a statement" in n for n in c.notes)
    assert not any("no explicit hypotheses" in n for n in c.notes)  # its "hypotheses" are steps: not a hint


def test_theorem_environment_then_proof_from_the_bundle(bundle):
    # \begin{thm*} ... \end{thm*} \begin{proof} ...: the theorem is split, the proof is gone
    c = applicability_checklist("planetmath:FieldHomomorphismsFixPrimeSubfields", bundle=bundle)
    assert texts(c.preconditions) == ["Let $F$ and $K$ be fields having the same prime subfield $L$",
                                      "Let $\\varphi \\colon F \\to K$ be a field homomorphism"]
    assert c.conclusion == "$\\varphi$ fixes $L$"
    # {\em Proof.}\, after a displayed theorem, and a "Theorem." heading before it
    c = applicability_checklist("planetmath:MaximalIdealIsPrime", bundle=bundle)
    assert c.statement == "In a commutative ring with non-zero unity, any maximal ideal is a prime ideal."


# ------------------------------------------------------------------------------ proof headings

STATEMENT = "Let $G$ be a finite group. Then $G$ has a Sylow subgroup."


@pytest.mark.parametrize("heading", [
    "{\\bf Proof:\\\\}", "{\\bf Proof.}", "\\textbf{Proof.}", "\\textbf{Proof. } \\newline", "\\textit{Proof.}",
    "\\emph{Proof}", "\\emph{Proof.}\\,", "{\\em Proof.}\\;", "{\\it Proof: \\,}", "{\\bf \\emph{Proof:}}",
    "\\textbf{\\textit{Proof:}}", "\\textbf{proof:}", "\\begin{proof}", "\\begin{proof}[Proof of the theorem]",
    "Proof.", "Proof:", "{\\bf Proof of lemma:}", "\\textit{Proof of Theorem \\ref{thm:one}.}",
    "{\\bf Proof (sketch):}", "\\emph{First proof:}", "\\textbf{Proof 1}", "{\\bf Proof -}", "\\noindent\\textbf{Proof}",
])
@pytest.mark.parametrize("sep", [" ", "\n\n", "\\\\ "])
def test_proof_heading_ends_the_statement(heading, sep):
    text = f"{STATEMENT}{sep}{heading} Suppose $G$ is a counterexample. If $p \\mid |G|$ then $G$ is trivial."
    at = text.index(heading)
    assert at <= proof_start(text) < at + len(heading)  # at the heading (past \noindent, which starts no proof)
    pre, conclusion, _ = split_statement(text)
    assert texts(pre) == ["Let $G$ be a finite group"] and conclusion == "$G$ has a Sylow subgroup"


@pytest.mark.parametrize("text", [
    "Let $A$ be a formula. Then there is a \\emph{proof} of $A$ in the calculus.",  # "proof" is a word of it
    "He was a consultant for the film {\\it Proof}, starring Gwyneth Paltrow.",
    "The movies: 1. {\\it Proof} 2. {\\it Good Will Hunting}.",
    "This completes the proof. Then $x > 0$.",
    "Let $x$ be real. The proof of this is easy if $x > 0$.",
])
def test_proof_as_a_word_is_not_a_heading(text):
    assert proof_start(text) == -1
    assert words(clean_statement(text)) == words(text)  # nothing cut (the fonts are unwrapped)


def test_a_text_that_opens_with_its_proof_is_kept():
    # nothing before the proof to keep: the caller notes it when the entry is a proof
    text = "\\begin{proof} Let $R$ be a finite integral domain. Then $R$ is a field. \\end{proof}"
    assert proof_start(text) == -1 and "Let $R$ be a finite integral domain" in clean_statement(text)


def test_proof_inside_a_list_item_ends_with_its_item():
    # "each property, then its proof" (planetmath:PropertiesOfSetDifference): the items after it stay
    text = ("Let $\\alpha$ be an ordinal. Then \\begin{enumerate} \\item $\\alpha \\notin \\alpha$, "
            "\\item $\\alpha + 1$ is an ordinal. \\begin{proof} Since $\\alpha$ is transitive, \\begin{itemize} "
            "\\item $\\alpha \\subseteq \\alpha + 1$ \\end{itemize} \\end{proof} \\item every element of $\\alpha$ "
            "is an ordinal. {\\it Proof.} Let $\\beta \\in \\alpha$. \\end{enumerate}")
    pre, conclusion, _ = split_statement(text)
    assert texts(pre) == ["Let $\\alpha$ be an ordinal"]
    assert conclusion == ("(1) $\\alpha \\notin \\alpha$; (2) $\\alpha + 1$ is an ordinal; (3) every element of "
                          "$\\alpha$ is an ordinal")


def test_theorem_environments_are_read_and_the_bibliography_dropped():
    text = ("We recall what a graph is. It is enough to prove the following \\begin{thm}[Handshake] Let $G$ be a "
            "finite graph. Then $\\sum_v \\delta(v) = 2|E|$. \\end{thm} \\begin{thebibliography}{9} \\bibitem{B} "
            "Bollobas, Modern graph theory. \\end{thebibliography}")
    pre, conclusion, _ = split_statement(text)
    assert texts(pre) == ["Let $G$ be a finite graph"]
    assert conclusion == ("We recall what a graph is. It is enough to prove the following. "
                          "$\\sum_v \\delta(v) = 2|E|$")


def test_latex_spacing_and_line_breaks_outside_math():
    # "$K$.\\ \,Let": the sentence ends at the period, so "Let" is a cue; math keeps its \, and \\
    text = "A field $K$ is ultrametric.\\\\ \\,Let $(K,\\,d)$ be complete.\\, Then $$\\begin{array}{l} a \\\\ b \\end{array}$$ holds."
    assert clean_statement(text) == ("A field $K$ is ultrametric. Let $(K,\\,d)$ be complete. "
                                     "Then $$\\begin{array}{l} a \\\\ b \\end{array}$$ holds.")
    pre, conclusion, _ = split_statement(text)
    assert texts(pre) == ["Let $(K,\\,d)$ be complete"]
    # a display ending in \right. keeps its period: it is a delimiter, not the sentence's end
    assert "\\right.$$" in clean_statement("Then $$\\left\\{ a \\right.$$ holds.")


# ------------------------------------------------------------------------------ the subject

@pytest.mark.parametrize("statement, pre, conclusion", [
    ("Every principal ideal domain is a unique factorization domain.",
     ["it is a principal ideal domain"], "it is a unique factorization domain"),
    ("A flat morphism which is locally of finite presentation is pseudo-coherent.",  # the relative clause's verb
     ["it is a flat morphism which is locally of finite presentation"], "it is pseudo-coherent"),
    ("A group whose order is prime is cyclic.", ["it is a group whose order is prime"], "it is cyclic"),
    ("Every bounded sequence of real numbers has a convergent subsequence.",
     ["it is a bounded sequence of real numbers"], "it has a convergent subsequence"),
    ("A graded ring $S$ with $S_0$ Noetherian is graded.",  # the symbol does not close the subject
     ["it is a graded ring $S$ with $S_0$ Noetherian"], "it is graded"),
    ("A finite group $G$ is solvable.", ["$G$ is a finite group"], "$G$ is solvable"),
    ("Any étale morphism is flat.", ["it is an étale morphism"], "it is flat"),
    ("All perfect numbers which are even are triangular.",
     ["they are perfect numbers which are even"], "they are triangular"),
    ("A linear combination of vectors over a field $F$ is a vector.",  # $F$ names the field, not the subject
     ["it is a linear combination of vectors over a field $F$"], "it is a vector"),
    # not read through the subject: a characterisation, a definition, a list, two sentences, a cue
    ("A ring $R$ is a field if and only if its only ideals are $0$ and $R$.", [],
     "A ring $R$ is a field if and only if its only ideals are $0$ and $R$"),
    ("A group with one element is called trivial.", [], "A group with one element is called trivial"),
    ("A group is said to be simple.", [], "A group is said to be simple"),
    ("Each of the formulas T and B has a dual.", [], "Each of the formulas T and B has a dual"),
    ("A smooth morphism is flat. A flat morphism is open.", [], "A smooth morphism is flat. A flat morphism is open"),
    ("The center of a $p$-group is nontrivial.", [], "The center of a $p$-group is nontrivial"),
])
def test_subject_as_the_hypothesis(statement, pre, conclusion):
    got_pre, got_conclusion, _ = split_statement(statement)
    assert texts(got_pre) == pre and got_conclusion == conclusion


def test_problems_are_not_read_through_a_subject():
    from mathlas.tools.scaffold import split_problem

    assert split_problem("Every finite integral domain is a field.") == (
        ["Every finite integral domain is a field"], "")


def test_mapping_with_a_statement_text():
    m = mapping_scaffold(PROBLEM, "A finite integral domain is a field.")
    assert [q.candidate_side for q in m.questions if q.kind == "precondition"] == ["it is a finite integral domain"]
    assert m.candidate.conclusion == "it is a field"


# ------------------------------------------------------------------------------ the measuring script

def test_study_script_on_a_small_bundle(tiny_bundle_dir, capsys):
    """scripts/study_scaffold_proofs.py (docs/scaffold.md's figures) compares two revisions of the splitter."""
    import importlib.util
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    if not (repo / ".git").exists():
        pytest.skip("compares with a git revision: needs a git checkout")
    path = repo / "scripts" / "study_scaffold_proofs.py"
    spec = importlib.util.spec_from_file_location("study_scaffold_proofs", path)
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    assert study.PROOF_HEADING.search("a field. {\\bf Proof:\\\\} Let") and not study.PROOF_HEADING.search("a proof of $A$")
    assert study.words((["{\\it groupoid} $x\\,y$"], "it")) == study.words((["groupoid $x y$"], "it"))
    assert study.main(["--bundle", str(tiny_bundle_dir), "--before", "HEAD", "--sample", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"bundle {tiny_bundle_dir.name}: ")
    assert "| source | documents | conclusion mentions proof (before) |" in out and "| all |" in out
