import Toy.Basic

/-!
# Closed intervals of natural numbers
-/

namespace Toy

/-- A closed interval `[lo, hi]` of natural numbers, its endpoints in order. -/
structure Interval where
  /-- The left endpoint. -/
  lo : Nat
  /-- The right endpoint. -/
  hi : Nat
  /-- The endpoints are in order. -/
  le : lo ≤ hi

namespace Interval

/-- The length `hi - lo` of an interval. -/
def length (I : Interval) : Nat := I.hi - I.lo

/-- A number lies in an interval when it is between the two endpoints. -/
def Mem (I : Interval) (x : Nat) : Prop := I.lo ≤ x ∧ x ≤ I.hi

/-- The left endpoint lies in the interval. -/
theorem lo_mem (I : Interval) : Mem I I.lo := ⟨Nat.le_refl _, I.le⟩

/-- The one-point interval `[n, n]`. -/
def point (n : Nat) : Interval := ⟨n, n, Nat.le_refl n⟩

/-- A one-point interval has length zero. -/
@[simp] theorem length_point (n : Nat) : length (point n) = 0 := Nat.sub_self n

/-- The interval with both endpoints doubled (doubling keeps them in order). -/
def double (I : Interval) : Interval := ⟨Toy.double I.lo, Toy.double I.hi, double_le_double I.le⟩

/-- Doubling an interval doubles its length. -/
theorem length_double (I : Interval) : length (double I) = Toy.double (length I) := by
  unfold length double
  rw [double_eq_two_mul, double_eq_two_mul, double_eq_two_mul]
  omega

/-- The default interval is the one point `[0, 0]`. -/
instance : Inhabited Interval := ⟨point 0⟩

end Interval

end Toy
