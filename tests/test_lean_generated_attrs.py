"""Lemmas Lean makes from attributes (lean_generated.attribute_lemmas): @[ext], @[reassoc], @[elementwise],
@[to_app], @[mk_iff], and those of ``to_additive (attr := ..)``, read through the real ``lean.read`` from
passages copied from Mathlib (file named above each)."""
from __future__ import annotations

from mathlas_build.sources import lean

ATTR_KINDS = {"ext", "ext_iff", "reassoc", "elementwise", "to_app", "to_fun", "mk_iff"}


def _snippet(tmp_path, text: str) -> dict:
    (tmp_path / "Snippet.lean").write_text(text, encoding="utf-8")
    return {d.id: d for d in lean.read(tmp_path, files=["Snippet.lean"], commit="c0ffee",
                                       repo_url="https://github.com/o/r")}


def _made(docs: dict) -> dict[str, tuple[str, str]]:
    """id -> (generated tag, generated_from) of the attribute lemmas."""
    return {i: (d.extra["generated"], d.extra["generated_from"]) for i, d in docs.items()
            if d.extra.get("generated") in ATTR_KINDS}


# Mathlib/NumberTheory/Zsqrtd/Basic.lean
ZSQRTD = """@[ext]
structure Zsqrtd (d : ℤ) where
  /-- Component of the integer not multiplied by `√d` -/
  re : ℤ
  /-- Component of the integer multiplied by `√d` -/
  im : ℤ
  deriving DecidableEq

namespace Zsqrtd

theorem uses (x y : Zsqrtd 2) : x = y ↔ x.re = y.re ∧ x.im = y.im := by simp [Zsqrtd.ext_iff]
-- not Mathlib's: Lean protects Zsqrtd.ext_iff, so a bare `ext_iff` here is not it
theorem bare (x y : Zsqrtd 2) : x = y ↔ x.re = y.re ∧ x.im = y.im := by simp [ext_iff]

end Zsqrtd
"""


def test_ext_structure_makes_ext_and_ext_iff(tmp_path):
    docs = _snippet(tmp_path, ZSQRTD)
    assert _made(docs) == {"lean:Zsqrtd.ext": ("ext", "Zsqrtd"), "lean:Zsqrtd.ext_iff": ("ext_iff", "Zsqrtd")}
    iff = docs["lean:Zsqrtd.ext_iff"]
    assert iff.kind == "theorem" and iff.line == 1 and iff.body == "@[ext] Zsqrtd"
    assert iff.extra["dependencies"] == ["Zsqrtd"]
    assert "Zsqrtd.ext_iff" in docs["lean:Zsqrtd.uses"].extra["dependencies"]
    assert "Zsqrtd.ext_iff" not in docs["lean:Zsqrtd.bare"].extra["dependencies"]


# Mathlib/GroupTheory/Congruence/Defs.lean (the structure, then `namespace Con`)
CON = """@[to_additive AddCon]
structure Con [Mul M] extends Setoid M where
  /-- Congruence relations are closed under multiplication -/
  mul' : ∀ {w x y z}, r w x → r y z → r (w * y) (x * z)

namespace Con

/-- Extensionality rule for congruence relations. -/
@[to_additive (attr := ext) /-- Extensionality rule for additive congruence relations. -/]
theorem ext {c d : Con M} (H : ∀ x y, c x y ↔ d x y) : c = d :=
  ext' <| by ext; apply H

end Con

-- Mathlib/Algebra/Lie/DirectSum.lean
@[ext (iff := false)]
theorem lieAlgebra_ext {x y : ⨁ i, L i}
    (h : ∀ i, lieAlgebraComponent R ι L i x = lieAlgebraComponent R ι L i y) : x = y :=
  DFinsupp.ext h
"""


def test_ext_theorem_iff_also_under_the_additive_name(tmp_path):
    # Lean core's realizeExtIffTheorem: ext theorem `n.s` -> `n.s_iff`; to_additive's (attr := ext)
    # tags the additive theorem too; (iff := false) makes none
    docs = _snippet(tmp_path, CON)
    made = _made(docs)
    assert made == {"lean:Con.ext_iff": ("ext_iff", "Con.ext"), "lean:AddCon.ext_iff": ("ext_iff", "AddCon.ext")}
    assert "lean:lieAlgebra_ext" in docs and "lean:lieAlgebra_ext_iff" not in docs
    assert "lean:Con.ext.ext" not in docs   # a theorem is not a structure


# Mathlib/Algebra/SkewMonoidAlgebra/Basic.lean: an explicit ext_iff before the @[ext] theorem
SKEW = """namespace SkewMonoidAlgebra

theorem ext_iff {p q : SkewMonoidAlgebra k G} : p = q ↔ ∀ n, coeff p n = coeff q n := by
  rcases p with ⟨f : G →₀ k⟩
  rcases q with ⟨g : G →₀ k⟩
  simpa [coeff] using DFunLike.ext_iff (f := f) (g := g)

@[ext]
theorem ext {p q : SkewMonoidAlgebra k G} : (∀ a, coeff p a = coeff q a) → p = q := ext_iff.2

end SkewMonoidAlgebra
"""


def test_declared_ext_iff_is_not_duplicated(tmp_path):
    docs = _snippet(tmp_path, SKEW)
    assert _made(docs) == {}
    assert "generated" not in docs["lean:SkewMonoidAlgebra.ext_iff"].extra
    assert docs["lean:SkewMonoidAlgebra.ext_iff"].line == 3


# Mathlib/Algebra/Homology/ImageToKernel.lean, Mathlib/Algebra/Homology/ShortComplex/ModuleCat.lean,
# Mathlib/CategoryTheory/Bicategory/NaturalTransformation/Pseudo.lean
CATS = """@[reassoc (attr := simp), elementwise (attr := simp)]
theorem imageToKernel_arrow (w : f ≫ g = 0) :
    imageToKernel f g w ≫ (kernelSubobject g).arrow = (imageSubobject f).arrow := by
  simp [imageToKernel]

namespace ShortComplex

@[reassoc (attr := simp, elementwise)]
lemma moduleCatCyclesIso_hom_i :
    S.moduleCatCyclesIso.hom ≫ S.moduleCatLeftHomologyData.i = S.iCycles :=
  S.moduleCatLeftHomologyData.cyclesIso_hom_comp_i

end ShortComplex

@[to_app (attr := reassoc)]
lemma naturality_id_hom (α : F ⟶ G) (a : B) :
    (α.naturality (𝟙 a)).hom = (F.mapId a).hom ▷ α.app a ≫
      (λ_ (α.app a)).hom ≫ (ρ_ (α.app a)).inv ≫ α.app a ◁ (G.mapId a).inv := by
  simp

@[simp]
theorem plain (w : f ≫ g = 0) : f ≫ g = 0 := w
"""


def test_reassoc_elementwise_to_app(tmp_path):
    # Mathlib's addRelatedDecl: `_assoc`, `_apply`, `_app` after the name, the (attr := ..) attributes
    # applied to the source and to the new lemma alike
    docs = _snippet(tmp_path, CATS)
    assert _made(docs) == {
        "lean:imageToKernel_arrow_assoc": ("reassoc", "imageToKernel_arrow"),
        "lean:imageToKernel_arrow_apply": ("elementwise", "imageToKernel_arrow"),
        "lean:ShortComplex.moduleCatCyclesIso_hom_i_assoc": ("reassoc", "ShortComplex.moduleCatCyclesIso_hom_i"),
        "lean:ShortComplex.moduleCatCyclesIso_hom_i_apply": ("elementwise", "ShortComplex.moduleCatCyclesIso_hom_i"),
        "lean:ShortComplex.moduleCatCyclesIso_hom_i_assoc_apply":
            ("elementwise", "ShortComplex.moduleCatCyclesIso_hom_i_assoc"),
        "lean:naturality_id_hom_app": ("to_app", "naturality_id_hom"),
        "lean:naturality_id_hom_assoc": ("reassoc", "naturality_id_hom"),
        "lean:naturality_id_hom_app_assoc": ("reassoc", "naturality_id_hom_app"),
    }
    d = docs["lean:imageToKernel_arrow_assoc"]
    assert d.kind == "theorem" and d.extra["signature"] == "" and d.body == "@[reassoc] imageToKernel_arrow"
    assert d.link.endswith("Snippet.lean#L1")
    assert not any(i.startswith("lean:plain_") for i in docs)


# Mathlib/Logic/Relation.lean (in `namespace Relation`), Mathlib/FieldTheory/Separable.lean
MK_IFF = """namespace Relation

/-- `EqvGen r`: equivalence closure of `r`. -/
@[mk_iff]
inductive EqvGen : α → α → Prop
  | rel x y : r x y → EqvGen x y
  | refl x : EqvGen x x

inductive ReflGen (r : α → α → Prop) (a : α) : α → Prop
  | refl : ReflGen r a a
  | single {b} : r a b → ReflGen r a b

end Relation

@[mk_iff isSeparable_def, stacks 09H1 "third part"]
protected class Algebra.IsSeparable : Prop where
  isSeparable' (x : K) : IsSeparable F x
"""


def test_mk_iff(tmp_path):
    # MkIffOfInductiveProp.lean: the name decapitalized + `_iff`; `mk_iff bar` in the declaration's namespace
    docs = _snippet(tmp_path, MK_IFF)
    assert _made(docs) == {"lean:Relation.eqvGen_iff": ("mk_iff", "Relation.EqvGen"),
                           "lean:Algebra.isSeparable_def": ("mk_iff", "Algebra.IsSeparable")}
    assert "lean:Relation.reflGen_iff" not in docs


# Mathlib/CategoryTheory/Limits/Shapes/BinaryBiproducts.lean (line 916),
# Mathlib/Analysis/Calculus/ContDiff/Operations.lean (line 511)
DOCS = """/-- The braiding isomorphism can be passed through a map by swapping the order. -/
@[reassoc]
theorem biprod.braid_natural {W X Y Z : C} (f : X ⟶ Y) (g : Z ⟶ W) :
    biprod.map f g ≫ (biprod.braiding _ _).hom = (biprod.braiding _ _).hom ≫ biprod.map g f := by
  cat_disch

/-- The scalar multiplication of two `C^n` functions within a set at a point is `C^n` within this
set at this point. -/
@[to_fun (attr := fun_prop)]
theorem ContDiffWithinAt.smul {s : Set E} {f : E → 𝕜'} {g : E → F} (hf : ContDiffWithinAt 𝕜 n f s x)
    (hg : ContDiffWithinAt 𝕜 n g s x) : ContDiffWithinAt 𝕜 n (f • g) s x :=
  contDiff_smul.contDiffWithinAt.comp x (hf.prodMk hg) subset_preimage_univ
"""


def test_a_related_lemma_takes_its_sources_docstring(tmp_path):
    # Mathlib/Util/AddRelatedDecl.lean: the source's docstring, after `docstringPrefix?` where one is given
    docs = _snippet(tmp_path, DOCS)
    assert docs["lean:biprod.braid_natural_assoc"].extra["docstring"] == \
        "The braiding isomorphism can be passed through a map by swapping the order."
    fun = docs["lean:ContDiffWithinAt.fun_smul"].extra["docstring"]
    assert fun.startswith("Eta-expanded form of `ContDiffWithinAt.smul`\n\n---\n\nThe scalar multiplication")


# Mathlib/Algebra/Homology/ShortComplex/Exact.lean (lines 486-498, cut): the command names fields
SPLITTING = """namespace ShortComplex

/-- A splitting of a short complex. -/
structure Splitting (S : ShortComplex C) where
  /-- a retraction of `S.f` -/
  r : S.X₂ ⟶ S.X₁
  /-- a section of `S.g` -/
  s : S.X₃ ⟶ S.X₂
  f_r : S.f ≫ r = 𝟙 _ := by cat_disch
  s_g : s ≫ S.g = 𝟙 _ := by cat_disch

namespace Splitting

attribute [reassoc (attr := simp)] f_r s_g

end Splitting
end ShortComplex
"""


def test_an_attribute_command_on_generated_names(tmp_path):
    docs = _snippet(tmp_path, SPLITTING)
    made = _made(docs)
    assert made["lean:ShortComplex.Splitting.f_r_assoc"] == ("reassoc", "ShortComplex.Splitting.f_r")
    assert made["lean:ShortComplex.Splitting.s_g_assoc"] == ("reassoc", "ShortComplex.Splitting.s_g")
