"""applicability_checklist, mapping_scaffold, search_directive and their CLI, on real statements.

Statements come from the default bundle (Stacks, PlanetMath, HoTT, fetched by stable id) and from the
raw corpora; search_directive searches the default bundle and must name only ids that bundle holds.
"""
from __future__ import annotations

import dataclasses
import json
import re
import shlex

import pytest

from conftest import CORPORA, need_corpora
from mathlas.errors import UsageError
from mathlas.tools import available_tool_names
from mathlas.tools.scaffold import (MAX_CHARS, applicability_checklist, mapping_scaffold, protected_mask,
                                    split_problem, split_statement, words)


def texts(checklist) -> list[str]:
    return [p.text for p in checklist.preconditions]


@pytest.fixture(scope="module")
def bundle(default_bundle_dir):
    return str(default_bundle_dir)


def body(bundle: str, doc_id: str) -> str:
    from mathlas.tools.informal import get_by_id

    return get_by_id(doc_id, bundle=bundle).body


# ------------------------------------------------------------------------------ real statements

def test_stacks_hypothesis_list_after_assume(bundle):
    c = applicability_checklist("stacks:0E8M", bundle=bundle)
    assert c.source == "stacks:0E8M" and any("fetched" in n for n in c.notes)
    assert texts(c) == [
        r"Let $A \to B$ be a local homomorphism of local rings",
        r"$B$ is finite as an $A$-module",
        r"$\mathfrak m_B$ is a finitely generated ideal",
        r"$A \to B$ induces an isomorphism on residue fields",
        r"$\mathfrak m_A/\mathfrak m_A^2 \to \mathfrak m_B/\mathfrak m_B^2$ is surjective",
    ]
    assert c.conclusion == r"$A \to B$ is surjective"
    assert all(p.satisfied is None and p.evidence is None for p in c.preconditions)


def test_stacks_nakayama_parts_each_with_if_then(bundle):
    c = applicability_checklist(body(bundle, "stacks:00DV"))
    assert c.source == "text"
    assert texts(c)[:3] == [r"Let $R$ be a ring with Jacobson radical $\text{rad}(R)$",
                            r"Let $M$ be an $R$-module", r"Let $I \subset R$ be an ideal"]
    assert len(c.parts) >= 8
    first, second = c.parts[0], c.parts[1]
    assert [p.text for p in first.preconditions] == ["$IM = M$", "$M$ is finite"]
    assert first.conclusion == r"there exists an $f \in 1 + I$ such that $fM = 0$"
    assert [p.text for p in second.preconditions][-1] == r"$I \subset \text{rad}(R)$"
    assert second.conclusion == "$M = 0$"
    # "$N, N' \subset M$" is one precondition: the comma inside math does not split
    assert r"$N, N' \subset M$" in [p.text for p in c.parts[2].preconditions]


def test_planetmath_let_conjunction_and_math_colon(bundle):
    c = applicability_checklist("planetmath:HeineCantorTheorem", bundle=bundle)
    assert texts(c) == ["Let $X,Y$ be uniform spaces", r"Let $f: X \rightarrow Y$ be a continuous function",
                        "$X$ is compact"]
    assert c.conclusion == "$f$ is uniformly continuous"  # the "For instance" paragraph is dropped


def test_planetmath_existential_stays_one_precondition(bundle):
    c = applicability_checklist("planetmath:NakayamasLemma", bundle=bundle)
    assert len(c.preconditions) == 3
    assert "there exists an ideal" in c.preconditions[2].text and r"\mathfrak{a}M = M" in c.preconditions[2].text
    assert c.conclusion == "$M=0$"


def test_planetmath_displayed_math(bundle):
    c = applicability_checklist("planetmath:GronwallsLemma", bundle=bundle)
    # the bundle's display text (1.2.0) writes displays as $$...$$
    assert c.conclusion.startswith(r"$$\phi(t)\leq K\exp\left(L\int_{t_0}^t \psi(s)ds\right)$$")
    assert any(r"$$\phi(t)\leq K+L\int" in t and t.count("$$") == 2 for t in texts(c))  # the display stays whole
    c = applicability_checklist("planetmath:WeylsInequality", bundle=bundle)
    assert c.conclusion == r"$$\lambda_i(A)\leq \lambda_i(A+E)$$"
    assert texts(c)[0] == "Let $A$ and $E$ be two $n \\times n$ Hermitian matrices, with $E$ positive semidefinite"
    c = applicability_checklist("planetmath:ArtinReesTheorem", bundle=bundle)
    assert texts(c) == ["Let $A$ be a Noetherian ring", r"Let $\mathfrak{a}$ be an ideal",
                        "Let $M$ be a finitely generated module", "Let $N$ be a submodule"]
    assert c.conclusion.startswith(r"there exists an integer $k \geq 1$") and c.conclusion.endswith("$$")


def test_hott_quantifier_and_noun_phrase_hypotheses(bundle):
    c = applicability_checklist("hott:axiom:univalence", bundle=bundle)
    assert texts(c) == [r"For any $A,B:{\mathcal{U}}$"]  # the book's \type macro, expanded by the build
    assert c.conclusion == r"the function \eqref{eq:uidtoeqv} is an equivalence"
    c = applicability_checklist("hott:ctb-uniformly-continuous-sup", bundle=bundle)
    assert c.preconditions == [] and "has a supremum" in c.conclusion
    assert any("noun phrase" in n for n in c.notes)  # said, not guessed


def test_raw_corpus_file_statement():
    """A statement read straight from the Stacks sources (algebra.tex), not through the bundle."""
    need_corpora()
    tex = (CORPORA / "stacks-project" / "algebra.tex").read_text(encoding="utf-8")
    m = re.search(r"\\begin\{lemma\}(?:\[[^\]]*\])?\s*\\label\{lemma-NAK\}(.*?)\\end\{lemma\}", tex, re.S)
    assert m, "lemma-NAK not found in algebra.tex"
    pre, conclusion, parts = split_statement(m.group(1))
    assert pre[0].text.startswith("Let $R$ be a ring") and len(parts) >= 8 and "$M = 0$" in conclusion


# ------------------------------------------------------------------------------ splitter cases

@pytest.mark.parametrize("statement, pre, conclusion", [
    ("Let R be a ring and M a finite R-module. Then M is finitely presented.",  # symbols without math
     ["Let R be a ring", "Let M be a finite R-module"], "M is finitely presented"),
    ("Let $R$ be a ring and $M$ a finite $R$-module. Then $M$ is finitely presented.",
     ["Let $R$ be a ring", "Let $M$ be a finite $R$-module"], "$M$ is finitely presented"),
    ("Let $A$ and $B$ be rings. Then $A \\times B$ is a ring.", ["Let $A$ and $B$ be rings"], "$A \\times B$ is a ring"),
    ("If $A$ holds, then (if $B$ holds then $C$ holds).", ["$A$ holds", "$B$ holds"], "$C$ holds"),
    ("If $x > 0$ then if $y > 0$ then $xy > 0$.", ["$x > 0$", "$y > 0$"], "$xy > 0$"),
    ("Suppose $x \\in X$, where $X = \\left( a, b \\right)$. Then $x > a$.",
     ["$x \\in X$", "$X = \\left( a, b \\right)$"], "$x > a$"),
    ("If $x \\in \\{y : y > 0, y < 1\\}$, then $x^2 < x$.", ["$x \\in \\{y : y > 0, y < 1\\}$"], "$x^2 < x$"),
    ("Assume $f$ is continuous. Hence $f$ is integrable.", ["$f$ is continuous"], "$f$ is integrable"),
    ("$f$ is continuous if $f$ is differentiable.", ["$f$ is differentiable"], "$f$ is continuous"),
    ("A ring $R$ is a field if and only if its only ideals are $0$ and $R$.", [],
     "A ring $R$ is a field if and only if its only ideals are $0$ and $R$"),
    ("Given a prime $p$ such that $p \\mid ab$, it follows that $p \\mid a$ or $p \\mid b$.",
     ["a prime $p$", "$p \\mid ab$"], "$p \\mid a$ or $p \\mid b$"),
    ("Let $R$ be a ring such that \\begin{enumerate} \\item[(a)] $R$ is local, \\item[(b)] $R$ is reduced. "
     "\\end{enumerate} Then $R$ is a domain.", ["Let $R$ be a ring", "$R$ is local", "$R$ is reduced"],
     "$R$ is a domain"),
    ("Let $n \\geq 1$. Then \\begin{equation} \\sum_{k=1}^n k = \\frac{n(n+1)}{2}, \\text{ if } n > 0. "
     "\\end{equation}", ["Let $n \\geq 1$"], "\\begin{equation} \\sum_{k=1}^n k = \\frac{n(n+1)}{2}, \\text{ if } n > 0"),
])
def test_splitter(statement, pre, conclusion):
    c = applicability_checklist(statement)
    assert texts(c) == pre
    assert c.conclusion.startswith(conclusion)


def test_nested_preconditions_are_marked():
    c = applicability_checklist("If $A$ holds, then (if $B$ holds then $C$ holds).")
    assert [p.nested for p in c.preconditions] == [False, True]


def test_following_are_equivalent_items_are_the_conclusion():
    c = applicability_checklist("Let $R$ be a ring. The following are equivalent: \\begin{enumerate} "
                                "\\item $R$ is Noetherian, \\item every ideal of $R$ is finitely generated. \\end{enumerate}")
    assert texts(c) == ["Let $R$ be a ring"]
    assert c.conclusion.startswith("The following are equivalent: (1) $R$ is Noetherian; (2) every ideal")


def test_cue_words_on_word_boundaries_only():
    # "Letter", "iffy", "thence", "whereas"... contain cue words but are not cues
    c = applicability_checklist("The letters of a string ring are iffy; whereas thence hence-forward is fine.")
    assert c.preconditions == []
    c = applicability_checklist(r"Then $\text{if } x \text{ then } y$ holds.")
    assert c.preconditions == [] and c.conclusion == r"$\text{if } x \text{ then } y$ holds"
    text = r"$f: X \to Y$ and \left( a, b \right) and \[ x, y \] and \begin{equation} a, b \end{equation}"
    mask = protected_mask(text)
    for span in (r"$f: X \to Y$", r"( a, b \right)", r"\[ x, y \]", r"\begin{equation} a, b \end{equation}"):
        a = text.index(span)
        assert all(mask[a:a + len(span)]), span
    assert [text[i:i + 3] for i in range(len(text)) if text.startswith("and", i) and not mask[i]] == ["and"] * 3


def test_problem_split_and_side_by_side():
    problem = "Let $G$ be a group of order $p^2$, where $p$ is a prime. Prove that $G$ is abelian."
    hyps, goal = split_problem(problem)
    assert hyps == ["Let $G$ be a group of order $p^2$", "$p$ is a prime"]
    assert goal == "Prove that $G$ is abelian"
    c = applicability_checklist("Let $G$ be a group. If $G/Z(G)$ is cyclic, then $G$ is abelian.", problem=problem)
    assert c.problem == problem and c.problem_hypotheses == hyps and c.problem_goal == goal
    assert "satisfied" in c.instructions
    assert split_problem("Show that if $n$ is odd then $n^2$ is odd.") == (["$n$ is odd"], "Show that $n^2$ is odd")
    assert split_problem("Is every finite integral domain a field?") == ([], "Is every finite integral domain a field?")


# ------------------------------------------------------------------------------ mapping

def test_mapping_scaffold_structure(bundle):
    problem = ("Let $R$ be a local ring with maximal ideal $\\mathfrak m$ and let $M$ be a finitely generated "
               "$R$-module with $\\mathfrak m M = M$. Prove that $M = 0$.")
    m = mapping_scaffold(problem, "planetmath:NakayamasLemma", bundle=bundle)
    sig = m.problem_signature
    assert sig.goal == "Prove that $M = 0$"
    assert {o.symbol for o in sig.objects} >= {"R", "M"}
    assert m.candidate.source == "planetmath:NakayamasLemma"
    kinds = [q.kind for q in m.questions]
    assert kinds[0] == "objects" and kinds[-1] == "conclusion"
    assert kinds.count("precondition") == len(m.candidate.preconditions) == 3
    q1 = next(q for q in m.questions if q.id == "P2")
    assert q1.candidate_side == "Let $M$ be a finitely generated $R$-module"
    assert any("finitely generated" in h for h in q1.likely_matches)
    tpl = m.answer_template
    assert tpl["candidate"] == "planetmath:NakayamasLemma" and tpl["verdict"] is None
    assert [p["id"] for p in tpl["preconditions"]] == ["P1", "P2", "P3"]
    assert set(tpl["object_mapping"]) >= {"R", "M"}
    json.dumps(dataclasses.asdict(m))  # JSON-able


def test_mapping_matches_whole_words_only():
    # "string" contains "ring", "improve" contains "prove": neither may count as a match
    problem = "We improve the string bound. Assume the substring is stringent."
    m = mapping_scaffold(problem, "Let $R$ be a ring. Then $R$ has a maximal ideal.")
    assert all(q.likely_matches == [] for q in m.questions)
    assert m.problem_signature.goal == ""          # "improve" is not "prove"
    assert "ring" not in m.problem_signature.terms and "prove" not in words(problem)
    assert "string" in m.problem_signature.terms


# ------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("bad", ["", "   \n\t", None, 42])
def test_empty_or_wrong_type_is_a_usage_error(bad):
    with pytest.raises(UsageError):
        applicability_checklist(bad)
    with pytest.raises(UsageError):
        mapping_scaffold(bad, "Let $x$ be real. Then $x^2 \\geq 0$.")
    with pytest.raises(UsageError):
        mapping_scaffold("Prove that $1 = 1$.", bad)


def test_very_long_input_is_bounded():
    sentence = "Let $x_{%d}$ be a real number and $y$ a unit. "
    long = "".join(sentence % i for i in range(4000)) + "Then $x_1 = 1$."
    assert len(long) > MAX_CHARS
    c = applicability_checklist(long)
    assert c.truncated and any("cut" in n for n in c.notes)
    assert len(c.preconditions) <= 64 and len(c.statement) <= MAX_CHARS
    c = applicability_checklist("(" * 5000 + "$" * 3001 + "\\begin{enumerate}" * 100)  # unbalanced junk
    assert c.truncated is False and isinstance(c.conclusion, str)


def test_unknown_id_is_an_error(bundle):
    from mathlas.errors import MathlasError

    with pytest.raises(MathlasError):
        applicability_checklist("stacks:ZZZZ", bundle=bundle)


# ------------------------------------------------------------------------------ search_directive

def test_search_directive_on_default_bundle(bundle):
    from mathlas.tools.directive import MSC_ARXIV, search_directive
    from mathlas.engine import OPEN_BUNDLES

    d = search_directive("Let $M$ be a finitely generated module over a local ring $R$ with maximal ideal "
                         "$\\mathfrak m$ such that $\\mathfrak m M = M$. Show that $M = 0$.", bundle=bundle)
    b = OPEN_BUNDLES.get(bundle)
    assert d.named_results, "no named results"
    for r in d.named_results:
        assert b.get(r.id).id == r.id  # a real id of the bundle
    assert any("Nakayama" in r.name for r in d.named_results)
    assert d.subfields[0].msc == "13" and d.arxiv_categories[0] == "math.AC"
    assert all(s.msc in MSC_ARXIV for s in d.subfields)
    assert all(e in {h for s in d.subfields for h in s.evidence} for e in d.subfields[0].evidence)
    assert any('"local ring"' in q.query for q in d.arxiv_queries)
    assert any("Nakayama" in q.query for q in d.arxiv_queries)
    assert all(q.url.startswith("https://export.arxiv.org/api/query?search_query=") for q in d.arxiv_queries)
    tools = set(available_tool_names())
    assert d.next_tools and all(s.tool in tools for s in d.next_tools)
    assert any(s.tool == "mapping_scaffold" and s.arguments["candidate"] == d.named_results[0].id
               for s in d.next_tools)


def test_search_directive_topology_and_categories(bundle):
    from mathlas.tools.directive import msc_for, search_directive

    d = search_directive("Every continuous function on a compact metric space is uniformly continuous.", bundle=bundle)
    assert {"54", "26"} & {s.msc for s in d.subfields}
    assert "math.GN" in d.arxiv_categories or "math.CA" in d.arxiv_categories
    assert any(r.id == "planetmath:HeineCantorTheorem" for r in d.named_results)
    assert msc_for("planetmath", "Commutative rings and algebras") == "13"
    assert msc_for("stacks", "Étale Cohomology > Étale morphisms") == "14"
    assert msc_for("stacks", "Commutative Algebra > Nakayama's lemma") == "13"
    assert msc_for("hott", "Homotopy type theory > Univalence") in {"03", "55"}


def test_search_directive_bad_input(bundle):
    from mathlas.tools.directive import search_directive

    with pytest.raises(UsageError):
        search_directive("  ", bundle=bundle)
    with pytest.raises(UsageError):
        search_directive("groups", k=0, bundle=bundle)


# A new user's `mathlas directive "🙂🙂🙂"` made a plan from nothing: no key terms, an arXiv query for
# Hilbert's epsilon-operator and ten unrelated "named results", exit 0.
NOTHING_TO_SEARCH = ["🙂🙂🙂", "Is it true?", "a b c", "x", "?!"]


@pytest.mark.parametrize("problem", NOTHING_TO_SEARCH)
def test_directive_refuses_a_problem_with_nothing_to_search(bundle, problem):
    from mathlas.tools.directive import search_directive

    with pytest.raises(UsageError) as e:
        search_directive(problem, bundle=bundle)
    assert str(e.value).startswith("no mathematical terms found in the problem: describe it in words or LaTeX")


@pytest.mark.parametrize("problem", ["$x^2 + y^2 = z^2$", "1, 1, 2, 3, 5, 8, 13", "π", "∫ f = 0", "primes"])
def test_directive_plans_for_a_formula_or_a_word(bundle, problem):
    """Math without a word still has something to search (a formula, a sequence, a constant), and so has a word."""
    from mathlas.tools.directive import has_math, search_directive

    d = search_directive(problem, k=3, bundle=bundle)
    assert d.key_terms or has_math(problem)


def test_directive_cli_refuses_nothing_to_search(bundle, capsys):
    rc, out, err = _cli(["directive", "🙂🙂🙂", "-b", bundle], capsys)
    assert rc == 2 and out == ""
    assert err.splitlines() == ["mathlas: no mathematical terms found in the problem: describe it in words or LaTeX "
                                "(e.g. 'is every finitely generated flat module over a local ring free?')"]
    rc, out, _ = _cli(["directive", "🙂🙂🙂", "-b", bundle, "--json"], capsys)
    assert rc == 2 and out == ""


@pytest.mark.slow
def test_directive_over_mcp_refuses_nothing_to_search(bundle):
    pytest.importorskip("mcp")
    from test_mcp import McpServer, error_text, ok, server_env

    server = McpServer(server_env(MATHLAS_BUNDLE=bundle))
    try:
        text = error_text(server.call("search_directive", problem="🙂🙂🙂"))
        assert "no mathematical terms found in the problem: describe it in words or LaTeX" in text
        assert ok(server.call("search_directive", problem="$x^2 + y^2 = z^2$", k=3))["named_results"] is not None
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()


# ------------------------------------------------------------------------------ CLI and registry

def test_tools_registered():
    names = available_tool_names()
    assert {"applicability_checklist", "mapping_scaffold", "search_directive"} <= set(names)


def test_cli_json(bundle, capsys):
    import argparse

    from mathlas.cli import scaffold as cli_scaffold

    def _run(args):
        return args.run(args)

    parser = argparse.ArgumentParser()
    cli_scaffold.add_parser(parser.add_subparsers(dest="command"))
    assert _run(parser.parse_args(["checklist", "stacks:0E8M", "--bundle", bundle, "--json"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["source"] == "stacks:0E8M" and len(out["preconditions"]) == 5
    assert _run(parser.parse_args(["scaffold", "--problem", "Let $G$ be a group. Prove that $G$ is abelian.",
                                               "--candidate", "Let $G$ be a cyclic group. Then $G$ is abelian.",
                                               "--json"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answer_template"]["verdict"] is None and out["problem_signature"]["goal"]
    assert _run(parser.parse_args(["directive", "finite integral domain is a field", "-b", bundle,
                                               "--json"])) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["named_results"][0]["id"].startswith(("planetmath:", "stacks:", "hott:", "napkin:", "openlogic:", "proofnet:",
                                                       "proofwiki:", "metamath:"))
    assert _run(parser.parse_args(["checklist", "If $a$ then $b$."])) == 0
    assert "[ ] P1. $a$" in capsys.readouterr().out


# ------------------------------------------------------------------------------ what a person sees

PID = "Show that every finitely generated module over a PID is a direct sum of cyclic modules"


@pytest.fixture
def no_formal(monkeypatch):
    """No formal (Lean) bundle installed or named, whatever the session's data directory holds."""
    import mathlas.releases.formal_specs as formal_specs

    monkeypatch.delenv("MATHLAS_FORMAL_BUNDLE", raising=False)
    monkeypatch.setattr(formal_specs, "installed_formal", lambda: [])


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    from mathlas.cli.main import main

    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def _next_steps(out: str) -> list[tuple[str, list[str]]]:
    """The directive's "next steps:" block: (why, argv of the command) for each step."""
    lines = out.split("next steps:\n", 1)[1].splitlines()
    return [(why.removeprefix("  # "), shlex.split(cmd)) for why, cmd in zip(lines[::2], lines[1::2])]


def test_directive_next_steps_are_whole_runnable_commands(bundle, capsys, no_formal):
    rc, out, err = _cli(["directive", PID, "-b", bundle], capsys)
    assert rc == 0
    steps = _next_steps(out)
    assert steps and all(argv[0] == "mathlas" for _, argv in steps)
    scaffolds = [argv for _, argv in steps if argv[1] == "scaffold"]
    assert scaffolds
    for argv in scaffolds:  # the problem whole, not cut at 120 characters; the candidate a real id
        assert argv[argv.index("--problem") + 1] == PID
        assert argv[argv.index("--candidate") + 1].startswith(("stacks:", "planetmath:", "napkin:"))
        assert argv[argv.index("--bundle") + 1] == bundle  # the bundle named goes on
    # no formal bundle here: no Lean step, and a note saying how to get one
    assert not any(argv[1] == "lean" for _, argv in steps) and "search_formal_math" not in out
    assert "no formal (Lean) bundle is installed" in err and "mathlas index build-lean" in err
    # a printed command runs as printed
    rc, out, _ = _cli(scaffolds[0][1:], capsys)
    assert rc == 0 and "questions:" in out  # the whole problem went through: its subject given, its claim asked
    assert ("problem gives:\n  - it is a finitely generated module over a PID\n"
            "problem asks:\n  Show that it is a direct sum of cyclic modules\n") in out


def test_directive_command_lines_quote_latex_and_apostrophes():
    from mathlas.cli.scaffold import command_line

    problem = "Let $M$ be a module with $\\mathfrak m M = M$. Show Nakayama's lemma gives $M = 0$ (\"or not\")."
    cmd = command_line("mapping_scaffold", {"problem": problem, "candidate": "planetmath:NakayamasLemma"})
    assert shlex.split(cmd) == ["mathlas", "scaffold", "--problem", problem, "--candidate",
                                "planetmath:NakayamasLemma"]
    assert shlex.split(command_line("identify_sequence", {"terms": [1, 1, 2, 3, 5]})) == \
        ["mathlas", "sequence", "1", "1", "2", "3", "5"]
    assert command_line("search_formal_math", {"query": "cyclic modules"}) == "mathlas lean search 'cyclic modules'"
    assert command_line("no_such_tool", {}) is None


def test_directive_queries_say_each_word_once(bundle, monkeypatch):
    import mathlas.releases.formal_specs as formal_specs
    from mathlas.tools.directive import search_directive

    monkeypatch.delenv("MATHLAS_FORMAL_BUNDLE", raising=False)
    monkeypatch.setattr(formal_specs, "installed_formal", lambda: ["mathlib"])
    d = search_directive(PID, bundle=bundle)
    formal = [s for s in d.next_tools if s.tool == "search_formal_math"]
    assert len(formal) == 1  # a formal bundle is installed: suggested
    assert formal[0].arguments["query"] == "finitely generated module direct sum cyclic modules pid"
    for s in d.next_tools:
        if "query" in s.arguments:
            said = s.arguments["query"].split()
            assert len(said) == len(set(said)), s.arguments["query"]
    assert not any("formal" in n for n in d.notes)


def test_mcp_text_of_the_directive_is_whole(bundle, no_formal):
    from mathlas.mcp.text import render
    from mathlas.tools.directive import search_directive

    d = search_directive(PID, bundle=bundle)
    text = render("search_directive", dataclasses.asdict(d), {"problem": PID})
    steps = json.loads(text)["next_tools"]
    assert any(s["tool"] == "mapping_scaffold" and s["arguments"]["problem"] == PID for s in steps)
    assert "search_formal_math" not in {s["tool"] for s in steps}
    assert any("no formal (Lean) bundle" in n for n in json.loads(text)["notes"])


def test_scaffold_text_shows_likely_matches(bundle, capsys):
    problem = ("Let $R$ be a local ring with maximal ideal $\\mathfrak m$ and let $M$ be a finitely generated "
               "$R$-module with $\\mathfrak m M = M$. Prove that $M = 0$.")
    rc, out, _ = _cli(["scaffold", "--problem", problem, "--candidate", "planetmath:NakayamasLemma", "-b", bundle],
                      capsys)
    assert rc == 0
    questions = out.split("questions:\n", 1)[1].split("answer template", 1)[0]
    assert ("  P2. The candidate needs: \"Let $M$ be a finitely generated $R$-module\". Does the problem provide "
            "this (after mapping the symbols), follow from its hypotheses, or fail?\n"
            "      likely matches in the problem:\n"
            "        - let $M$ be a finitely generated $R$-module with $\\mathfrak m M = M$\n") in questions
    assert "      problem:   $R$: local ring; $M$: finitely generated $R$-module\n" in questions
    m = mapping_scaffold(problem, "planetmath:NakayamasLemma", bundle=bundle)
    for q in m.questions:  # every likely match the JSON has is printed
        for match in q.likely_matches:
            assert f"        - {match}\n" in questions
    assert "  C. " in questions and "likely matches in the problem: none share its words" in questions
