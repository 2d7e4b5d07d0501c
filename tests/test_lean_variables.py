"""A Lean declaration's signature carries the section ``variable``s Lean gives it (lean_variables): the
passages are Mathlib's own (mathlib4 @ 8f9d9cff), cut to the lines that matter."""
import pytest

from mathlas_build.sources import lean, lean_variables as lvar
from mathlas_build.sources.lean import parse_file


def read(tmp_path, text: str) -> dict:
    """The documents ``lean.read`` makes of ``text`` as one file."""
    (tmp_path / "Snippet.lean").write_text(text, encoding="utf-8")
    return {d.id: d for d in lean.read(tmp_path, files=["Snippet.lean"])}


def sigs(src: str) -> dict[str, str]:
    """Each declaration's signature as shown: its section variables, then its own binders and type."""
    return {d["name"]: " ".join(x for x in (d["variables"], d["signature"]) if x)
            for d in parse_file(src, "Mathlib/X.lean")}


# Mathlib/RingTheory/Ideal/Height.lean
HEIGHT = '''@[expose] public section

variable {R : Type*} [CommRing R] (I : Ideal R)

open Ideal

/-- The height of a prime ideal is defined as the supremum of the lengths of strictly decreasing
chains of prime ideals below it. -/
noncomputable def Ideal.primeHeight [hI : I.IsPrime] : ℕ∞ :=
  Order.height (⟨I, hI⟩ : PrimeSpectrum R)

/-- The height of an ideal is defined as the infimum of the heights of its minimal prime ideals. -/
noncomputable def Ideal.height : ℕ∞ :=
  ⨅ J ∈ I.minimalPrimes, @Ideal.primeHeight _ _ J (minimalPrimes_isPrime (I := I) ‹_›)

/-- For a prime ideal, its height equals its prime height. -/
lemma Ideal.height_eq_primeHeight [I.IsPrime] : I.height = I.primeHeight := by
  unfold height primeHeight
  simp
'''


def test_a_statement_takes_the_variables_it_mentions_and_their_instances():
    s = sigs(HEIGHT)
    assert s["Ideal.height_eq_primeHeight"] == \
        "{R : Type*} [CommRing R] (I : Ideal R) [I.IsPrime] : I.height = I.primeHeight"
    assert s["Ideal.primeHeight"] == "{R : Type*} [CommRing R] (I : Ideal R) [hI : I.IsPrime] : ℕ∞"


def test_a_definition_also_takes_the_variables_its_body_uses():
    # `height`'s statement is `ℕ∞` alone; its body uses `I`, so Lean gives it `I` (and `R` through it)
    assert sigs(HEIGHT)["Ideal.height"] == "{R : Type*} [CommRing R] (I : Ideal R) : ℕ∞"


# Mathlib/Algebra/Order/Field/Basic.lean (lines 25-29, 140-145)
FIELD = '''variable {ι α β : Type*}

section PartialOrderedSemifield

variable [Semifield α] [PartialOrder α] [PosMulReflectLT α] {a b c d e : α} {m n : ℤ}

theorem add_div_two_lt_right : (a + b) / 2 < b ↔ a < b := by simp [div_lt_iff₀, mul_two]

omit [PosMulReflectLT α] in
theorem add_thirds (a : α) : a / 3 + a / 3 + a / 3 = a := by
  rw [← add_div]

end PartialOrderedSemifield

theorem after_the_section (x : α) : x = x := rfl
'''


def test_omit_in_leaves_out_one_instance_for_the_next_declaration_only():
    s = sigs(FIELD)
    assert s["add_div_two_lt_right"] == \
        "{α : Type*} [Semifield α] [PartialOrder α] [PosMulReflectLT α] {a b : α} : (a + b) / 2 < b ↔ a < b"
    assert s["add_thirds"] == \
        "{α : Type*} [Semifield α] [PartialOrder α] (a : α) : a / 3 + a / 3 + a / 3 = a"
    # the section's instances end with it; `α` (declared before it) stays
    assert s["after_the_section"] == "{α : Type*} (x : α) : x = x"


# Mathlib/RingTheory/IsAdjoinRoot.lean style: `variable (R) in`, `include h in`, binder updates
UPDATES = '''namespace Toy
variable {R : Type*} [CommRing R] {f : R} (h : IsUnit f)

variable (R) in
theorem explicit_once : (0 : R) = 0 := rfl

theorem implicit_again : (0 : R) = 0 := rfl

include h in
theorem uses_h : f = f := rfl

theorem no_h : f = f := rfl

variable {f} (f)
theorem explicit_f : f = f := rfl
end Toy
'''


def test_binder_updates_and_include_in():
    s = sigs(UPDATES)
    assert s["Toy.explicit_once"] == "(R : Type*) [CommRing R] : (0 : R) = 0"
    assert s["Toy.implicit_again"] == "{R : Type*} [CommRing R] : (0 : R) = 0"
    assert s["Toy.uses_h"] == "{R : Type*} [CommRing R] {f : R} (h : IsUnit f) : f = f"
    assert s["Toy.no_h"] == "{R : Type*} [CommRing R] {f : R} : f = f"
    assert s["Toy.explicit_f"] == "{R : Type*} [CommRing R] (f : R) : f = f"


# Mathlib/Probability/Independence/Basic.lean (line 437): `{_mΩ : MeasurableSpace Ω}` is found by
# instance resolution, never named
MEASURE = '''variable {Ω ι : Type*}
variable {m : ι → MeasurableSpace Ω} {_mΩ : MeasurableSpace Ω} {μ : Measure Ω}

theorem iIndep.symm (h : iIndep m μ) : iIndep m μ := h

theorem unrelated (n : ℕ) : n = n := rfl
'''


def test_an_implicit_structure_for_instance_resolution_comes_with_its_type():
    s = sigs(MEASURE)
    assert s["iIndep.symm"] == ("{Ω ι : Type*} {m : ι → MeasurableSpace Ω} {_mΩ : MeasurableSpace Ω} "
                                "{μ : Measure Ω} (h : iIndep m μ) : iIndep m μ")
    assert s["unrelated"] == "(n : ℕ) : n = n"


def test_redeclared_name_shadows_and_own_binder_wins():
    src = '''variable {α : Type*} (x : α)
variable {α : Type u} [Group α]
theorem own (x : α) : x = x := rfl
'''
    # the second `α` replaces the first; the theorem's own `x` is not the variable `x`
    assert sigs(src)["own"] == "{α : Type u} [Group α] (x : α) : x = x"
    # Mathlib/FieldTheory/KummerExtension.lean (rootOfSplitsXPowSubC): an own `(L)` without a type
    src = '''variable {K : Type u} [Field K] {n : ℕ} (L : Type*) [Field L] [Algebra K L]
def rootOf (hn : 0 < n) (a : K) (L) [Field L] [Algebra K L] : L := sorry
'''
    assert sigs(src)["rootOf"] == "{K : Type u} [Field K] {n : ℕ} (hn : 0 < n) (a : K) (L) [Field L] [Algebra K L] : L"


@pytest.mark.parametrize("text, groups", [
    ("{R S : Type*} [CommRing R] [inst : Algebra R S]",
     [("{", ["R", "S"], "Type*"), ("[", [], "CommRing R"), ("[", ["inst"], "Algebra R S")]),
    ("(R) {x}", [("(", ["R"], None), ("{", ["x"], None)]),
    ("⦃i j : ι⦄ {{k : ι}}", [("⦃", ["i", "j"], "ι"), ("{{", ["k"], "ι")]),
    ("[∀ i, Module R (M i)] in", [("[", [], "∀ i, Module R (M i)")]),
    ("", []),
])
def test_parse(text, groups):
    assert lvar.parse(text) == groups


# Mathlib/Algebra/Order/Group/Unbundled/Basic.lean (lines 31-39, 261-266, cut) and
# Mathlib/Algebra/Group/Defs.lean (lines 207, 1176): `attribute [to_additive] x` written after the
# declaration, or of a name not read here (`Group`, `MulLeftMono`: their translation only)
UNBUNDLED = '''attribute [to_additive] Group MulLeftMono

variable {α : Type u}

section Group

variable [Group α]

section MulLeftMono

variable [LE α] [MulLeftMono α] {a b c : α}

@[to_additive lt_neg]
theorem lt_inv' : a < b⁻¹ ↔ b < a⁻¹ := by rw [← inv_lt_inv_iff, inv_inv]

alias ⟨lt_inv_of_lt_inv, _⟩ := lt_inv'

attribute [to_additive] lt_inv_of_lt_inv

end MulLeftMono
end Group

class CommMagma (G : Type u) extends Mul G where
  protected mul_comm : ∀ a b : G, a * b = b * a

class AddCommMagma (G : Type u) extends Add G where
  protected add_comm : ∀ a b : G, a + b = b + a

attribute [to_additive] CommMagma

namespace Toy
theorem mul_comm_of [CommMagma G] (a b : G) : a * b = b * a := CommMagma.mul_comm a b
theorem f_r (x : Nat) : x = x := rfl
end Toy
namespace Toy
attribute [to_additive] mul_comm_of
attribute [reassoc] f_r
end Toy
'''


def test_attribute_commands_act_as_if_written_on_the_declaration(tmp_path):
    docs = read(tmp_path, UNBUNDLED)
    # the alias's twin, named by Lean's rule, states its additive statement
    twin = docs["lean:lt_neg_of_lt_neg"]
    assert twin.extra["generated_from"] == "lt_inv_of_lt_inv"
    assert twin.extra["signature"] == "{α : Type u} [AddGroup α] [LE α] [AddLeftMono α] {a b : α} : a < -b → b < -a"
    # written in `namespace Toy`, the names resolve there; the class's translation names the twin's binder
    assert docs["lean:Toy.add_comm_of"].extra["signature"] == "[AddCommMagma G] (a b : G) : a + b = b + a"
    assert docs["lean:Toy.f_r_assoc"].extra["generated"] == "reassoc"
    # a structure's additive version is written by hand: no twin is made of it
    assert docs["lean:AddCommMagma"].extra.get("generated") is None


def test_the_texts_searched_read_the_declarations_own_signature(tmp_path):
    """Shown with its variables, searched without them: with them the dev sets lost (docs/formal.md)."""
    from mathlas_build.retrieval_text import context_field, lean_retrieval_text, lexical_text, own_signature
    doc = read(tmp_path, HEIGHT)["lean:Ideal.height_eq_primeHeight"]
    assert doc.extra["signature"] == \
        "{R : Type*} [CommRing R] (I : Ideal R) [I.IsPrime] : I.height = I.primeHeight"
    assert own_signature(doc.extra) == "[I.IsPrime] : I.height = I.primeHeight"
    embedded = lean_retrieval_text(doc)
    assert "[I.IsPrime] : I.height = I.primeHeight." in embedded and "CommRing" not in embedded
    assert "CommRing" not in lexical_text(doc, embedded) and "commutative" not in context_field(doc)


# Mathlib/Algebra/MonoidAlgebra/Module.lean (lines 36-51, cut; `k[G]` written out)
DONT = '''variable (k : Type u₁) (G : Type u₂) (H : Type*) {R S M : Type*}

namespace MonoidAlgebra

variable {k G}

@[to_additive (dont_translate := R) distribMulAction]
instance distribMulAction [Monoid R] [Semiring k] [DistribMulAction R k] :
    DistribMulAction R (MonoidAlgebra k G) :=
  Finsupp.distribMulAction G k

end MonoidAlgebra
'''


def test_dont_translate_keeps_what_is_about_that_type(tmp_path):
    docs = read(tmp_path, "attribute [to_additive] Monoid MonoidAlgebra\n" + DONT)
    twin = docs["lean:AddMonoidAlgebra.distribMulAction"]
    # Mathlib's AddMonoidAlgebra.distribMulAction takes [Monoid R] and [DistribMulAction R k] as they are
    assert twin.extra["signature"] == ("{k : Type u₁} {G : Type u₂} {R : Type*} [Monoid R] [Semiring k] "
                                       "[DistribMulAction R k] : DistribMulAction R (AddMonoidAlgebra k G)")
