"""Words for Lean signatures and notation (mathlas.lean_gloss): exact sentences for instance and
hypothesis binders, nothing for what cannot be read with confidence, and the notation table's
longest-match reading."""
from __future__ import annotations

from mathlas.lean_gloss import (
    NOTATION,
    binder_words,
    binders,
    notation_gloss,
    query_notation_words,
)


def test_binder_words_reads_instances_and_hypotheses_in_order():
    sig = ("{G : Type*} [Group G] (p : ℕ) (hp : p.Prime) (hf : Continuous f) [inst : Fintype α] "
           "(x : ℝ) : Irrational (√x)")
    assert binder_words(sig) == ["G is a group", "p is prime", "f is continuous", "α is a fintype"]


def test_instance_binders():
    sig = ("[CommRing R] [Module R M] [Fact p.Prime] [hq : Fact (Nat.Prime q)] [OrderedField K] "
           "[UniformSpace X] [TopologicalSpace.Foo X] [IsDomain R] [NormedSpace ℝ E] [T2Space X] : True")
    assert binder_words(sig) == [
        "R is a comm ring", "M is a module", "p is prime", "q is prime", "K is an ordered field",
        "X is a uniform space", "X is a foo", "R is domain", "E is a normed space", "X is a t2 space"]


def test_instance_binders_that_are_skipped():
    sig = ("[Inhabited] [Fact (1 < p)] [Fact p] [∀ i, Fintype (β i)] [Group (G × H)] "
           "[Module R M.Foo] [inst : DecidableEq (α → β)] : True")
    assert binder_words(sig) == []


def test_hypothesis_binders():
    sig = ("(hs : IsCompact s) (h : ¬ IsCompact t) (h₂ : ¬x.Prime) (hq : Nat.Prime q) "
           "(hf : Function.Injective f) (hx : Irrational x) ⦃y : α⦄ (_ : Even n) : True")
    assert binder_words(sig) == ["s is compact", "t is not compact", "x is not prime", "q is prime",
                                 "f is injective", "x is irrational", "n is even"]


def test_binders_with_operators_or_several_arguments_say_nothing():
    sig = ("(x y : ℝ) {n : ℕ} (h : x ≤ y) (hx : 0 < x) (h : ContinuousOn f s) (hx : x ∈ s) "
           "(h : IsCompact (s ∪ t)) (h : Continuous ⇑f) (h : Nat.Prime) (h : p.prime) (h : x.1.Prime) : True")
    assert binder_words(sig) == []


def test_term_binders_are_not_read_as_hypotheses():
    # (s : Set α) is a term, not "α is set"
    assert binder_words("(s : Set α) (i : Fin n) (p : Polynomial R) (inst : Fintype α) : True") == []


def test_only_top_level_binders_before_the_colon():
    assert binder_words("(hf : Continuous f) : ∀ (hg : Continuous g), Continuous (g ∘ f)") == ["f is continuous"]
    assert binder_words("(hf : Continuous f) (hf' : Continuous f) : True") == ["f is continuous"]
    # nested brackets are matched; an unmatched one ends the walk
    assert binders("{f : ℕ → (α × β)} [Group G] (x : ℝ) : True") == [
        ("{", "f : ℕ → (α × β)"), ("[", "Group G"), ("(", "x : ℝ")]
    assert binder_words("[Group G] (hf : Continuous f") == ["G is a group"]
    assert binder_words("") == []


def test_notation_gloss_longest_key_first():
    assert notation_gloss("∫⁻ x, f x ∂μ ≤ ∑' n, g n") == ["lower Lebesgue integral", "infinite sum series"]
    assert notation_gloss("∫ x in a..b, f x = ∑ i ∈ s, g i") == ["integral", "sum"]
    assert notation_gloss("Tendsto f (𝓝[≠] x) (𝓝 y)") == ["neighborhood within", "neighborhood"]
    assert notation_gloss("f : R →+* S") == ["ring homomorphism"]
    assert notation_gloss("f =ᵐ[μ] g ∧ ∀ᵐ x ∂μ, f x ≤ᵐ[μ] 0") == [
        "almost everywhere equal", "almost everywhere", "almost everywhere less or equal"]
    assert notation_gloss("ℍ[ℝ]") == ["quaternion", "real number"]


def test_notation_gloss_context_guards():
    assert notation_gloss("#s = #{x ∈ s | p x}") == ["number of elements cardinality"]
    assert notation_gloss("a # b") == []
    assert notation_gloss("f '' s ⊆ t") == ["image", "subset"]
    assert notation_gloss("x'' = y") == []
    assert notation_gloss("f ⁻¹' t") == ["preimage"]
    assert notation_gloss("n ! ∣ (n + 1)!") == ["factorial", "divides"]
    assert notation_gloss("xs.get! 0 = !b") == []
    assert notation_gloss("φ n = σ 1 n") == ["Euler totient", "sum of divisors"]
    assert notation_gloss("φ x = σ y") == []  # a ring hom and a permutation
    assert notation_gloss("∫ x, f x ∂μ") == ["integral"]  # ∂μ is the measure, not a derivative
    assert notation_gloss("a ≡ b [ZMOD n]") == ["congruent modulo"]
    assert notation_gloss("no notation here") == []


def test_query_notation_words():
    assert query_notation_words("∑' n, 1 / n ^ 2 = π ^ 2 / 6") == "tsum infinite sum series pi"
    assert query_notation_words("f ≤ᵐ[μ] g") == "ae le almost everywhere less or equal"
    assert query_notation_words("plain words") == ""


def test_notation_table_entries():
    assert NOTATION["∫⁻"] == ("lintegral", "lower Lebesgue integral")
    assert NOTATION["→L["] == ("continuous linear map", "continuous linear map")
    assert NOTATION["⋃"] == ("iUnion", "union")
    for skipped in ("μ", "∂", "Ω", "∈", "deriv"):
        assert skipped not in NOTATION
    for key, (naming, english) in NOTATION.items():
        assert key and naming and english, key
