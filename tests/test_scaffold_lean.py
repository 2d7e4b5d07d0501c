"""applicability_checklist and mapping_scaffold on a Lean declaration (a formal bundle's ``lean:`` id).

A new user ran ``mathlas checklist lean:Nat.Prime.two_le`` and got no preconditions, the conclusion
``theorem Prime.two_le : ∀ {p : ℕ}, Prime p → 2 ≤ p`` (keyword and name included) and a note about
"the subject's noun phrase", written for prose. A declaration is now read from its signature
(``mathlas.tools.lean_split``): binders and the premises of its ``→`` chain are the preconditions,
the final target the conclusion. Checked on real Mathlib signatures (pure text), and through the
library, the human CLI, ``--json`` and a real MCP server on the tests' own Lean project (toy) and on
the tests' formal bundle (a few real Mathlib files).
"""
from __future__ import annotations

import json

import pytest

from mathlas.tools.lean_split import split_declaration

# (kind, signature as the Mathlib bundle stores it, preconditions, conclusion)
MATHLIB = [
    # the walkthrough's case: an implicit variable and an arrow premise
    ("theorem", ": ∀ {p : ℕ}, Prime p → 2 ≤ p", ["for p : ℕ", "Prime p"], "2 ≤ p"),
    # an instance; the universe binder {G : Type*} says nothing to check; a bare ∀'s variables
    ("theorem", "{G : Type*} [AddCommMagma G] : ∀ a b : G, a + b = b + a",
     ["AddCommMagma G", "for a b : G"], "a + b = b + a"),
    # an iff is the conclusion, whole, with the ∀ and → inside its right side
    ("theorem", "{p : ℕ} : Prime p ↔ 2 ≤ p ∧ ∀ m < p, m ∣ p → m = 1",
     ["for p : ℕ"], "Prime p ↔ 2 ≤ p ∧ ∀ m < p, m ∣ p → m = 1"),
    ("theorem", "{α : Type u} {β : Type v} [PseudoMetricSpace α] [PseudoMetricSpace β] {f : α → β} : "
                "Continuous f ↔ ∀ b, ∀ ε > 0, ∃ δ > 0, ∀ a, dist a b < δ → dist (f a) (f b) < ε",
     ["PseudoMetricSpace α", "PseudoMetricSpace β", "for f : α → β"],
     "Continuous f ↔ ∀ b, ∀ ε > 0, ∃ δ > 0, ∀ a, dist a b < δ → dist (f a) (f b) < ε"),
    # hypotheses by name (hp, hs) and by an unused explicit binder (pp : p.Prime), or a relation (n_pos)
    ("theorem", "{p : ℕ} (pp : p.Prime) (m : ℕ) (hm : m ∣ p) : m = 1 ∨ m = p",
     ["for p : ℕ", "p.Prime", "for m : ℕ", "m ∣ p"], "m = 1 ∨ m = p"),
    ("theorem", "{α β : Type*} [LinearOrder α] [TopologicalSpace α] [TopologicalSpace β] [ClosedIicTopology α] "
                "{s : Set β} (hs : IsCompact s) (ne_s : s.Nonempty) {f : β → α} (hf : ContinuousOn f s) : "
                "∃ x ∈ s, IsMinOn f s x",
     ["LinearOrder α", "TopologicalSpace α", "TopologicalSpace β", "ClosedIicTopology α", "for s : Set β",
      "IsCompact s", "s.Nonempty", "for f : β → α", "ContinuousOn f s"], "∃ x ∈ s, IsMinOn f s x"),
    # ∀ ε > 0 is a variable with its bound; an ∃ conclusion is not split
    ("theorem", "{α : Type u} [PseudoMetricSpace α] {s : Set α} (hs : TotallyBounded s) : "
                "∀ ε > 0, ∃ t, t ⊆ s ∧ Set.Finite t ∧ s ⊆ ⋃ y ∈ t, ball y ε",
     ["PseudoMetricSpace α", "for s : Set α", "TotallyBounded s", "for ε > 0"],
     "∃ t, t ⊆ s ∧ Set.Finite t ∧ s ⊆ ⋃ y ∈ t, ball y ε"),
    # a named instance, ℝ≥0∞ is a type (not a relation)
    ("theorem", "{T : ℝ} [hT : Fact (0 < T)] (p : ℝ≥0∞) [Fact (1 ≤ p)] (n : ℤ) : "
                "@fourierLp T hT p _ n =ᵐ[haarAddCircle] fourier n",
     ["for T : ℝ", "Fact (0 < T)", "for p : ℝ≥0∞", "Fact (1 ≤ p)", "for n : ℤ"],
     "@fourierLp T hT p _ n =ᵐ[haarAddCircle] fourier n"),
    # ℚ≥0 is a type too (NNRat; 422 Mathlib signatures): it was read as a hypothesis, its variable lost
    ("theorem", "(q : ℚ≥0) : ↑⌊q⌋₊ = ⌊(q : ℚ)⌋", ["for q : ℚ≥0"], "↑⌊q⌋₊ = ⌊(q : ℚ)⌋"),
    # a ∀ of bracketed binders, then an arrow premise
    ("field", "(self : FirstOrder.Language.Hom) : ∀ {n} (r : L.Relations n) (x), RelMap r x → RelMap r (toFun ∘ x)",
     ["for self : FirstOrder.Language.Hom", "for n", "for r : L.Relations n", "for x", "RelMap r x"],
     "RelMap r (toFun ∘ x)"),
    # a premise, then a ∀ after the arrow; (x : α) → ... is a binder
    ("theorem", "{s t : Finset α} : s ⊆ t → ∀ x, (hx : x ∈ s) → x ∈ t",
     ["for s t : Finset α", "s ⊆ t", "for x", "x ∈ s"], "x ∈ t"),
    # (a → b) ↔ c: the iff binds looser than the arrow, nothing is split
    ("theorem", "{a b c : Prop} : a → b ↔ c", ["for a b c : Prop"], "a → b ↔ c"),
    # definitions state no result: their binders, no conclusion
    ("def", "(p : ℕ)", ["for p : ℕ"], ""),
    ("class", "{α : Type u} [Semiring α] (I : Ideal α) : Prop", ["Semiring α", "for I : Ideal α"], ""),
    ("structure", "(G : Type*) [Group G] extends Submonoid G", ["Group G"], ""),
]


@pytest.mark.parametrize("kind, signature, pre, conclusion", MATHLIB)
def test_mathlib_signatures(kind, signature, pre, conclusion):
    split = split_declaration(kind, signature)
    assert [p.text for p in split.preconditions] == pre
    assert split.conclusion == conclusion
    assert split.definition == (kind in ("def", "class", "structure"))


def test_cues_and_variables():
    split = split_declaration("theorem", "{G : Type*} [Group G] {x : G} (hx : x ≠ 1) : ∀ n > 0, x ^ n = 1 → orderOf x ∣ n")
    assert [p.cue for p in split.preconditions] == ["instance", "for", "hypothesis", "for", "→"]
    assert split.variables == [("G", "Type*"), ("x", "G"), ("n", "> 0")]
    assert not any(p.nested for p in split.preconditions)


def test_names_are_read_without_backtracking():
    """A long name before a symbol: the names' pattern matches one way only (it was exponential in the name)."""
    import time

    start = time.perf_counter()
    split = split_declaration("theorem", ": ∀ " + "a" * 40 + "+ 1, True")
    assert time.perf_counter() - start < 1 and split.conclusion == "True"


def test_many_binders_are_read_in_one_pass():
    """Each binder scanned the rest of the signature for its names (4,000 binders: 8 s, with a
    signature of 55,000 characters, within scaffold's 20,000 only by cutting); now one count of the
    names serves every binder: 0.05 s. Whether a binder is a hypothesis is decided as before: by
    whether the text outside it (top level) or after it (a ∀'s binders) names it."""
    n = 4_000
    top = split_declaration("theorem", " ".join(f"(x{i} : Nat)" for i in range(n)) + " (h : 0 < 1) : x0 = x0")
    # x1, x2, ... are named nowhere else: read as hypotheses (unnamed premises), x0 a variable
    assert top.variables == [("x0", "Nat")] and top.conclusion == "x0 = x0"
    assert top.preconditions[0].text == "for x0 : Nat" and top.preconditions[1].cue == "hypothesis"
    inner = split_declaration("theorem", ": ∀ " + " ".join(f"(x{i} : Nat)" for i in range(n)) + ", x0 = x0")
    assert inner.variables == [("x0", "Nat")] and inner.conclusion == "x0 = x0"
    assert inner.preconditions[0].text == "for x0 : Nat" and inner.preconditions[1].cue == "hypothesis"
    # a name used by a later binder, or only before it at the top level, keeps its binder a variable
    split = split_declaration("theorem", "(n : Nat) (h : 0 < n) (m : Nat) : m = m")
    assert [p.cue for p in split.preconditions] == ["for", "hypothesis", "for"]
    split = split_declaration("theorem", ": ∀ (n : Nat) (k : Nat), n = n")
    assert [p.cue for p in split.preconditions] == ["for", "hypothesis"]


def test_an_optional_hypothesis_is_its_type():
    split = split_declaration("lemma", "{V : Type*} [Quiver V] {a b : V} (p : Path a b) "
                                       "(h : p.vertices ≠ [] := p.vertices_ne_nil) : p.vertices.getLast h = b")
    assert [p.text for p in split.preconditions] == ["Quiver V", "for a b : V", "for p : Path a b", "p.vertices ≠ []"]


# ------------------------------------------------------------------------------ through the surfaces

@pytest.fixture(scope="module")
def toy(lean_project_bundle_dir):
    return str(lean_project_bundle_dir)


def test_checklist_cli_human_on_a_lean_declaration(toy, capsys):
    from mathlas.cli.main import main

    assert main(["checklist", "lean:Toy.double_le_double", "--bundle", toy]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "statement (lean:Toy.double_le_double):",
        "  theorem Toy.double_le_double {m n : Nat} (h : m ≤ n) : double m ≤ double n",
        "preconditions:",
        "  [ ] P1. for m n : Nat",
        "  [ ] P2. m ≤ n",
        "conclusion:",
        "  double m ≤ double n",
    ]
    assert "noun phrase" not in err and "no conclusion" not in err
    # a definition: no conclusion, said in one line
    assert main(["checklist", "lean:Toy.IsEven", "--bundle", toy, "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["conclusion"] == "" and [p["text"] for p in c["preconditions"]] == ["for n : Nat"]
    assert [n for n in c["notes"] if "definition" in n] == [
        "lean:Toy.IsEven is a def, a definition: it states no result, so there is no conclusion to check; "
        "its binders are listed as preconditions"]
    assert not any("noun phrase" in n for n in c["notes"])


def test_scaffold_maps_a_lean_declarations_variables(toy, capsys):
    from mathlas.cli.main import main

    problem = "Let $a$ and $b$ be even natural numbers. Show that $a + b$ is even."
    assert main(["scaffold", "--problem", problem, "--candidate", "lean:Toy.IsEven.add", "--bundle", toy,
                 "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert [p["text"] for p in s["candidate"]["preconditions"]] == ["for m n : Nat", "IsEven m", "IsEven n"]
    assert s["candidate"]["conclusion"] == "IsEven (m + n)"
    assert s["answer_template"]["object_mapping"] == {"m": None, "n": None}
    objects = next(q for q in s["questions"] if q["id"] == "objects")
    assert objects["candidate_side"] == "m : Nat; n : Nat"


def test_checklist_of_mathlibs_nat_prime_two_le(formal_bundle_dir, capsys):
    """The walkthrough's own command, on the tests' formal bundle (real Mathlib files)."""
    from mathlas.cli.main import main

    assert main(["checklist", "lean:Nat.Prime.two_le", "--bundle", str(formal_bundle_dir)]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[lines.index("preconditions:") + 1:] == ["  [ ] P1. for p : ℕ", "  [ ] P2. Prime p", "conclusion:",
                                                          "  2 ≤ p"]
    assert lines[1] == "  theorem Nat.Prime.two_le : ∀ {p : ℕ}, Prime p → 2 ≤ p"
    assert "noun phrase" not in err


@pytest.mark.slow
def test_checklist_over_mcp(toy):
    pytest.importorskip("mcp")
    from test_mcp import McpServer, ok, server_env

    server = McpServer(server_env(MATHLAS_BUNDLE=toy, MATHLAS_FORMAL_BUNDLE=toy))
    try:
        c = ok(server.call("applicability_checklist", statement="lean:Toy.IsEven.add"))
        assert [p["text"] for p in c["preconditions"]] == ["for m n : Nat", "IsEven m", "IsEven n"]
        assert c["conclusion"] == "IsEven (m + n)" and not any("noun phrase" in n for n in c["notes"])
        assert not server.stream_errors and "Traceback" not in server.stderr()
    finally:
        server.close()
