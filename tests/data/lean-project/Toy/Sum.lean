import Toy.Basic

/-!
# Gauss's formula for the sum of the first natural numbers
-/

namespace Toy

/-- `sumTo n` is `0 + 1 + ⋯ + n`, the sum of the first `n` natural numbers. -/
def sumTo : Nat → Nat
  | 0 => 0
  | n + 1 => sumTo n + (n + 1)

/-- The empty sum is zero. -/
@[simp] theorem sumTo_zero : sumTo 0 = 0 := rfl

/-- Adding the next number: `sumTo (n + 1) = sumTo n + (n + 1)`. -/
theorem sumTo_succ (n : Nat) : sumTo (n + 1) = sumTo n + (n + 1) := rfl

/-- Adding one more number to the sum: the old name of `sumTo_succ`. -/
@[deprecated sumTo_succ (since := "2025-01-01")]
theorem sumTo_add_one (n : Nat) : sumTo (n + 1) = sumTo n + (n + 1) := rfl

/-- **Gauss's formula**: twice the sum of the first `n` natural numbers is `n * (n + 1)`. -/
theorem gauss_sum (n : Nat) : double (sumTo n) = n * (n + 1) := by
  induction n with
  | zero => rfl
  | succ k ih =>
    rw [sumTo_succ, double_eq_two_mul] at *
    simp only [Nat.mul_add, Nat.add_mul, Nat.mul_one, Nat.one_mul] at *
    omega

/-- The product of two consecutive natural numbers is even (by Gauss's formula). -/
theorem isEven_mul_succ (n : Nat) : IsEven (n * (n + 1)) :=
  gauss_sum n ▸ isEven_double (sumTo n)

/-- The sum of the first `n` numbers is at most `n * n`. -/
theorem sumTo_le (n : Nat) : sumTo n ≤ n * n := by
  induction n with
  | zero => simp
  | succ k ih =>
    rw [sumTo_succ]
    simp only [Nat.mul_add, Nat.add_mul, Nat.mul_one, Nat.one_mul]
    omega

end Toy
