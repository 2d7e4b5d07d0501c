"""Atomic preconditions from coordinated hypotheses, notation kept apart, and a problem's given part.

The walkthrough's case: "Let G be a finite group and p a prime dividing |G|." came back as one
precondition; "G is a group of order 15; does it have an element of order 5?" gave no hypothesis and the
whole text as the goal; mapping "Show every group of order 15 is cyclic" against the Sylow theorems found
no object in the problem, listed "Let $n_p$ be the number of Sylow $p$-subgroups" as a precondition and
opened the conclusion with a definition. Statements here are common theorems written as a person (or an
agent) writes them, with and without math delimiters.
"""
from __future__ import annotations

import time

import pytest

from mathlas.tools.latex_split import analyse_statement, split_problem, split_statement
from mathlas.tools.scaffold import MAX_CHARS, applicability_checklist, mapping_scaffold

CAUCHY = "Let G be a finite group and p a prime dividing |G|. Then G has an element of order p."
ORDER_15 = "G is a group of order 15; does it have an element of order 5?"
# napkin:H113/sylow:1 as the default bundle holds it, up to its first items
SYLOW = (r"Let $G$ be a group of order $p^n m$, where $\gcd(p,m)=1$ and $p$ is a prime. A Sylow $p$-subgroup is "
         r"a subgroup of order $p^n$. Let $n_p$ be the number of Sylow $p$-subgroups of $G$. Then "
         r"\begin{enumerate}[(a)] \item $n_p \equiv 1 \pmod p$. \item $n_p$ divides $m$. \end{enumerate}")


def texts(pre) -> list[str]:
    return [p.text for p in pre]


# ------------------------------------------------------------------------------ conjunctions

@pytest.mark.parametrize("statement, pre", [
    (CAUCHY, ["Let G be a finite group", "Let p be a prime", "p divides |G|"]),
    ("Let G be a finite group and H a subgroup of G. Then |H| divides |G|.",
     ["Let G be a finite group", "Let H be a subgroup of G"]),
    ("Let G be a group and H be a normal subgroup of G. Then G/H is a group.",
     ["Let G be a group", "Let H be a normal subgroup of G"]),
    ("Suppose G is a group and H a normal subgroup of G. Then G/H is a group.",
     ["G is a group", "H is a normal subgroup of G"]),
    ("Let R be a commutative ring, I an ideal contained in the Jacobson radical of R and M a finitely generated "
     "R-module. If IM = M, then M = 0.",
     ["Let R be a commutative ring", "Let I be an ideal contained in the Jacobson radical of R",
      "Let M be a finitely generated R-module", "IM = M"]),
    ("Let X be a normal space and A, B disjoint closed subsets of X. Then there is a continuous f: X → [0,1] "
     "with f = 0 on A and f = 1 on B.", ["Let X be a normal space", "Let A, B be disjoint closed subsets of X"]),
    ("Let (X, d) be a non-empty complete metric space and T: X → X a contraction mapping. Then T has a unique "
     "fixed point.", ["Let (X, d) be a non-empty complete metric space", "Let T: X → X be a contraction mapping"]),
    ("If f is continuous on [a, b] and differentiable on (a, b), then f(b) - f(a) = f'(c)(b - a) for some c.",
     ["f is continuous on [a, b]", "f is differentiable on (a, b)"]),
    ("Suppose f is continuous on [a, b], differentiable on (a, b), and f(a) = f(b). Then f'(c) = 0 for some c.",
     ["f is continuous on [a, b]", "f is differentiable on (a, b)", "f(a) = f(b)"]),
    ("Let p be a prime and a an integer not divisible by p. Then a^(p-1) ≡ 1 (mod p).",
     ["Let p be a prime", "Let a be an integer not divisible by p"]),
    ("Suppose X is Hausdorff and second countable. Then X is paracompact.",
     ["X is Hausdorff", "X is second countable"]),
    ("If f is bounded and has a maximum on X, then f attains its supremum.", ["f is bounded", "f has a maximum on X"]),
    ("Let X be a compact and connected space and f: X → R a continuous function. Then f(X) is an interval.",
     ["Let X be a compact and connected space", "Let f: X → R be a continuous function"]),
    ("Let $R$ be a local ring with maximal ideal $\\mathfrak m$ and $M$ a finitely generated $R$-module such that "
     "$\\mathfrak m M = M$. Then $M = 0$.",
     ["Let $R$ be a local ring with maximal ideal $\\mathfrak m$", "Let $M$ be a finitely generated $R$-module",
      "$\\mathfrak m M = M$"]),
    ("Let $k$ be a field and let $x' \\in X$ be a point lying over $x$. Then x.",
     ["Let $k$ be a field", "let $x' \\in X$ be a point", "$x'$ lies over $x$"]),
    ("Let a, b and c be integers such that a divides bc and gcd(a, b) = 1. Then a divides c.",
     ["Let a, b and c be integers", "a divides bc", "gcd(a, b) = 1"]),
])
def test_coordinated_hypotheses_split_with_their_verb(statement, pre):
    got, _, _ = split_statement(statement)
    assert texts(got) == pre


@pytest.mark.parametrize("statement, pre", [
    # an "and" inside a noun phrase, a pair of symbols, a range, a disjunction, an adverb pair: one precondition
    ("Let X be a regular, Hausdorff and second countable space. Then X is metrizable.",
     ["Let X be a regular, Hausdorff and second countable space"]),
    ("Let m and n be coprime positive integers. Then Z/mnZ ≅ Z/mZ × Z/nZ.", ["Let m and n be coprime positive integers"]),
    ("Suppose a and b are coprime. Then ab is a square only if a and b are.", ["a and b are coprime"]),
    ("Let f be a continuous function between A and B. Then f is bounded.",
     ["Let f be a continuous function between A and B"]),
    ("Let f be a function continuous on [a, b] and differentiable on (a, b). Then x.",
     ["Let f be a function continuous on [a, b] and differentiable on (a, b)"]),
    ("Let a and b be integers, not both zero. Then x.", ["Let a and b be integers, not both zero"]),
    ("If y is between f(a) and f(b), then y = f(c) for some c.", ["y is between f(a) and f(b)"]),
    ("Suppose $f$ is isotone, antitone, or monotone in each variable. Then x.",
     ["$f$ is isotone, antitone, or monotone in each variable"]),
    ("Assume $X_1, X_2, \\dotsc$ are identically and independently distributed, with mean $m$ and variance $v$. "
     "Then x.", ["$X_1, X_2, \\dotsc$ are identically and independently distributed, with mean $m$ and variance $v$"]),
    ("Let $f: S \\to T$ be a directed suprema preserving mapping. Then x.",
     ["Let $f: S \\to T$ be a directed suprema preserving mapping"]),
    ("Suppose a trapezoid has bases of lengths $b_1$ and $b_2$ and a height $h$. Then x.",
     ["a trapezoid has bases of lengths $b_1$ and $b_2$ and a height $h$"]),
])
def test_and_inside_a_phrase_stays(statement, pre):
    got, _, _ = split_statement(statement)
    assert texts(got) == pre


def test_checklist_of_the_walkthrough():
    c = applicability_checklist(CAUCHY, problem=ORDER_15)
    assert texts(c.preconditions) == ["Let G be a finite group", "Let p be a prime", "p divides |G|"]
    assert c.conclusion == "G has an element of order p"
    assert c.problem_hypotheses == ["G is a group of order 15"]
    assert c.problem_goal == "Does it have an element of order 5?"


# ------------------------------------------------------------------------------ notation

def test_notation_and_definitions_are_set_apart():
    res = analyse_statement(SYLOW)
    assert texts(res.preconditions) == ["Let $G$ be a group of order $p^n m$", "$\\gcd(p,m)=1$", "$p$ is a prime"]
    assert res.notations == ["A Sylow $p$-subgroup is a subgroup of order $p^n$",
                             "Let $n_p$ be the number of Sylow $p$-subgroups of $G$"]
    assert res.conclusion == "(1) $n_p \\equiv 1 \\pmod p$; (2) $n_p$ divides $m$"  # no definition in front
    c = applicability_checklist(SYLOW)
    assert any(n.startswith("not preconditions, what the statement names or defines") and "'Let $n_p$ be" in n
               for n in c.notes)
    # the same in prose, and a notation made by an ellipsis ("p its characteristic polynomial")
    pre, _, _ = split_statement("Let G be a finite group, p a prime and n_p the number of Sylow p-subgroups of G. "
                                "Then n_p divides |G|.")
    assert texts(pre) == ["Let G be a finite group", "Let p be a prime"]
    res = analyse_statement("Let A be an n × n matrix over a commutative ring R and p its characteristic "
                            "polynomial. Then p(A) = 0.")
    assert texts(res.preconditions) == ["Let A be an n × n matrix over a commutative ring R"]
    assert res.notations == ["Let p be its characteristic polynomial"]


@pytest.mark.parametrize("statement, pre", [
    # a definite noun phrase that brings in a new object is a condition: a number field
    ("Let $A$ be the ring of integers of a number field $K$. Then $A$ is Dedekind.",
     ["Let $A$ be the ring of integers of a number field $K$"]),
    # a claim about a symbol between a hypothesis and the conclusion is a precondition
    ("Let $M$ be a module. $M$ is finite. Then $M$ is finitely presented.", ["Let $M$ be a module", "$M$ is finite"]),
])
def test_what_is_not_notation(statement, pre):
    got, _, _ = split_statement(statement)
    assert texts(got) == pre


def test_prose_before_the_first_hypothesis_stays_in_the_conclusion():
    res = analyse_statement("A pentagram is a star. Let $P$ be a pentagram. Then $P$ has five points.")
    assert res.notations == [] and res.conclusion.startswith("A pentagram is a star")


# ------------------------------------------------------------------------------ problems

@pytest.mark.parametrize("problem, hyps, goal", [
    (ORDER_15, ["G is a group of order 15"], "Does it have an element of order 5?"),
    ("If G is abelian, is G cyclic?", ["G is abelian"], "Is G cyclic?"),
    ("Let n be an odd integer; show that n^2 - 1 is divisible by 8.", ["Let n be an odd integer"],
     "Show that n^2 - 1 is divisible by 8"),
    ("f is continuous on [0, 1] and f(0) = f(1); must f have a horizontal chord of length 1/2?",
     ["f is continuous on [0, 1]", "f(0) = f(1)"], "Must f have a horizontal chord of length 1/2?"),
    ("X is a compact metric space, is every continuous function on X bounded?",
     ["X is a compact metric space"], "Is every continuous function on X bounded?"),
    ("Let R be a ring in which x^2 = x for all x: prove that R is commutative.",
     ["Let R be a ring in which x^2 = x for all x"], "Prove that R is commutative"),
    ("Given a finite group G and a prime p dividing |G|, does G contain an element of order p?",
     ["a finite group G", "a prime p dividing |G|"], "Does G contain an element of order p?"),
    ("Show every group of order 15 is cyclic", ["it is a group of order 15"], "Show it is cyclic"),
    ("Let p be a prime and G a group of order p^2. Prove that G is abelian.",
     ["Let p be a prime", "Let G be a group of order p^2"], "Prove that G is abelian"),
    # a question without a given part, and a claim without a task, as before
    ("Is every finite integral domain a field?", [], "Is every finite integral domain a field?"),
    ("Every finite integral domain is a field.", ["Every finite integral domain is a field"], ""),
    ("Which of the following is true: A, B or C?", [], "Which of the following is true: A, B or C?"),
])
def test_problem_given_part_and_question(problem, hyps, goal):
    assert split_problem(problem) == (hyps, goal)


def test_mapping_finds_the_problems_objects():
    m = mapping_scaffold("Show every group of order 15 is cyclic", SYLOW)
    sig = m.problem_signature
    assert [(o.symbol, o.description) for o in sig.objects] == [("", "group of order 15")]
    assert sig.hypotheses == ["it is a group of order 15"] and sig.goal == "Show it is cyclic"
    objects = next(q for q in m.questions if q.kind == "objects")
    assert objects.problem_side == "group of order 15"
    p1 = next(q for q in m.questions if q.id == "P1")
    assert p1.likely_matches == ["it is a group of order 15"]
    assert [q.candidate_side for q in m.questions if q.kind == "precondition"] == [
        "Let $G$ be a group of order $p^n m$", "$\\gcd(p,m)=1$", "$p$ is a prime"]
    assert m.candidate.conclusion.startswith("(1)")
    assert set(m.answer_template["object_mapping"]) == {"G", "p"}  # the candidate's symbols, none empty
    # symbols written without math delimiters are objects too
    m = mapping_scaffold(ORDER_15, CAUCHY)
    assert [(o.symbol, o.description) for o in m.problem_signature.objects] == [("G", "group of order 15")]


# ------------------------------------------------------------------------------ the command line

def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    from mathlas.cli.main import main

    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_checklist_cli_human(capsys):
    rc, out, err = _cli(["checklist", CAUCHY, "--problem", ORDER_15], capsys)
    assert rc == 0
    assert ("preconditions:\n  [ ] P1. Let G be a finite group\n  [ ] P2. Let p be a prime\n  [ ] P3. p divides |G|\n"
            "conclusion:\n  G has an element of order p\n") in out
    assert "problem gives:\n  - G is a group of order 15\nproblem asks:\n  Does it have an element of order 5?\n" in out


def test_scaffold_cli_human(capsys):
    rc, out, err = _cli(["scaffold", "--problem", "Show every group of order 15 is cyclic", "--candidate", SYLOW],
                        capsys)
    assert rc == 0
    assert "      problem:   group of order 15\n" in out
    assert "problem gives:\n  - it is a group of order 15\nproblem asks:\n  Show it is cyclic\n" in out
    assert "P4." not in out and "Let $n_p$ be the number" not in out.split("questions:")[1]
    assert "note: not preconditions, what the statement names or defines" in err and "'Let $n_p$ be" in err


# ------------------------------------------------------------------------------ bounded

@pytest.mark.parametrize("text", [
    "Let " + ", ".join("ABCDEFGHXYZ"[i % 11] for i in range(MAX_CHARS // 3)) + " be sets.",  # 35 s before
    "Let G be a group and " + " and ".join(f"H_{i} a subgroup" for i in range(MAX_CHARS // 16)),
    "If f is " + " and ".join(["continuous on [a, b]"] * (MAX_CHARS // 25)) + ", then f is bounded.",
    "G is a group, " * (MAX_CHARS // 14) + "is it cyclic?",
])
def test_long_coordinations_are_bounded(text):
    start = time.perf_counter()
    c = applicability_checklist(text[:MAX_CHARS], problem=text[:MAX_CHARS])
    mapping_scaffold(text[:MAX_CHARS], "Let $G$ be a group. Then $G$ is a group.")
    assert time.perf_counter() - start < 10 and len(c.preconditions) <= 64


def test_trailing_joins_are_taken_off_in_linear_time():
    """latex_split.tidy took the separators a conjunct ends with off with one regex that backtracked from
    every position of a long ", and , and ..." (1.8 s for 20,000 characters, reached through a
    statement's last conjunct); the loop takes them off from the end."""
    import time

    from mathlas.tools.latex_split import analyse_statement, tidy

    assert tidy("f is continuous, and") == "f is continuous" and tidy("x ; and ,") == "x"
    assert tidy("p is a prime or") == "p is a prime" and tidy("a band") == "a band"
    t = time.monotonic()
    tidy("x" + ", and " * 50_000)
    analyse_statement(("Let " + ", and " * 3400)[:20000])
    assert time.monotonic() - t < 5     # the regex took minutes for the first
