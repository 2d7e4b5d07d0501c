/-!
# Doubling and even numbers

Small definitions on natural numbers for the mathlas tests.
-/

namespace Toy

/-- `double n` is `n + n`, twice the natural number `n`. -/
def double (n : Nat) : Nat := n + n

/-- Doubling zero gives zero. -/
@[simp] theorem double_zero : double 0 = 0 := rfl

/-- Doubling a successor adds two: `double (n + 1) = double n + 2`. -/
theorem double_succ (n : Nat) : double (n + 1) = double n + 2 := by
  unfold double
  omega

/-- Doubling a number is multiplying it by two. -/
theorem double_eq_two_mul (n : Nat) : double n = 2 * n := by
  unfold double
  omega

/-- Doubling is monotone: `m ≤ n` gives `double m ≤ double n`. -/
theorem double_le_double {m n : Nat} (h : m ≤ n) : double m ≤ double n := by
  rw [double_eq_two_mul, double_eq_two_mul]
  omega

/-- A natural number is even when it is the double of some number. -/
def IsEven (n : Nat) : Prop := ∃ k, n = double k

/-- Every double is even. -/
theorem isEven_double (k : Nat) : IsEven (double k) := ⟨k, rfl⟩

/-- Zero is even. -/
theorem isEven_zero : IsEven 0 := ⟨0, double_zero.symm⟩

/-- The sum of two even numbers is even. -/
theorem IsEven.add {m n : Nat} (hm : IsEven m) (hn : IsEven n) : IsEven (m + n) := by
  obtain ⟨a, rfl⟩ := hm
  obtain ⟨b, rfl⟩ := hn
  exact ⟨a + b, by rw [double_eq_two_mul, double_eq_two_mul, double_eq_two_mul]; omega⟩

/-- An even number plus two is even. -/
theorem IsEven.add_two {n : Nat} (h : IsEven n) : IsEven (n + 2) :=
  h.add ⟨1, rfl⟩

end Toy
