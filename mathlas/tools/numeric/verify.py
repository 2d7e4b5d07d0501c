"""verify_numeric: check a numeric claim by independent high-precision evaluation.

Each side is parsed by the whitelist parser and evaluated with mpmath twice, at ``digits + 10`` and
``digits + 25`` working digits; infinite sums and products use extrapolation in strict mode (it fails
rather than guess) and integrals tanh-sinh quadrature with its error estimate. The two evaluations of a
side agree to some number of digits: that is how far the side is trusted. The verdict is

* VERIFIED when both sides are trusted to the requested digits and agree to all of them;
* REFUTED when the sides are each trusted further than the point where they differ;
* UNDETERMINED when a side cannot be evaluated (pole, divergence, non-convergence, timeout) or is not
  trusted far enough to decide.

A comparison where one side is zero is absolute: ``|left - right| < 10**-digits``. With a decimal
``value`` the expression must round or truncate to the digits given.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from mathlas.checks import integer
from mathlas.errors import UsageError

from .parser import Node, parse_claim, parse_expression, to_text
from .timebound import check_timeout, run_bounded
from .value import DecimalValue, parse_value

MAX_DIGITS = 1000
DEFAULT_TIMEOUT = 20.0
_INF = 10 ** 9


@dataclass
class VerifyResult:
    """The verdict of verify_numeric.

    ``verdict`` is VERIFIED, REFUTED or UNDETERMINED; ``verified`` is True, False or None to match.
    ``digits_agreed``: significant digits in which the two sides agree (capped at ``digits``);
    ``reevaluated``: the independent high-precision value(s); ``reason``: how the verdict was reached.
    """

    verdict: Literal["VERIFIED", "REFUTED", "UNDETERMINED"]
    verified: bool | None
    digits_agreed: int
    reevaluated: str
    reason: str
    digits: int
    left: str = ""
    right: str = ""
    elapsed_s: float = 0.0


def verify_numeric(claim: str | None = None, expression: str | None = None, value: str | float | None = None,
                   digits: int = 50, timeout: float = DEFAULT_TIMEOUT) -> VerifyResult:
    """Check a numeric claim ("sum_{n>=1} 1/n^2 = pi^2/6"), or expression against value, at high
    precision: VERIFIED, REFUTED or UNDETERMINED. Constants, functions, sums, products, integrals
    and LaTeX are understood (docs/numeric.md).

    Args:
        claim: "left = right"; or expression and value.
        value: a decimal (the expression must round to it) or another expression.
        digits: digits to confirm.
        timeout: seconds.
    """
    integer(digits, "digits", 1, MAX_DIGITS)
    timeout = check_timeout(timeout)
    decimal: DecimalValue | None = None
    if claim is not None:
        if expression is not None or value is not None:
            raise UsageError("pass either claim, or expression with value, not both")
        left, right = parse_claim(claim)
    else:
        if expression is None or value is None:
            raise UsageError("pass claim='left = right', or both expression= and value=")
        left = parse_expression(expression)
        try:
            decimal = parse_value(value)
            right = None
        except UsageError:
            if not isinstance(value, str):
                raise
            try:
                right = parse_expression(value)
            except UsageError as exc:
                raise UsageError(f"value is neither a decimal number nor an expression: {exc}") from None
    out = run_bounded(_verify_work, left, right, decimal, digits, timeout=timeout)
    if out.value is not None:
        out.value.elapsed_s = round(out.elapsed, 3)
        return out.value
    why = f"timed out after {timeout:g} s" if out.timed_out else out.crashed
    return VerifyResult("UNDETERMINED", None, 0, "", f"{why} while evaluating; nothing was decided",
                        digits, to_text(left), to_text(right) if right is not None else str(value),
                        round(out.elapsed, 3))


def _agree(a, b, absolute: bool) -> int:
    """Digits in which ``a`` and ``b`` agree: relative to the larger, or absolute (for zero)."""
    from mpmath import mp

    d = abs(a - b)
    if d == 0:
        return _INF
    if absolute:
        return max(0, math.floor(-float(mp.log10(d))))
    m = max(abs(a), abs(b))
    lead = math.floor(float(mp.log10(m))) + 1
    return max(0, math.floor(lead - float(mp.log10(d))))


def _eval_twice(node: Node, digits: int):
    """(value at the higher precision, digits to which two precisions agree) or raise EvaluationError."""
    from .evaluate import evaluate

    low = evaluate(node, digits + 10)
    high = evaluate(node, digits + 25)
    return high, low


def _verify_work(left: Node, right: Node | None, decimal: DecimalValue | None, digits: int, send) -> VerifyResult:
    from mpmath import mp

    from .evaluate import EvaluationError

    target = digits if decimal is None else min(digits, decimal.digits)
    mp.dps = target + 30
    ltext = to_text(left)
    rtext = to_text(right) if right is not None else decimal.text
    sides = [("left", left)] + ([("right", right)] if right is not None else [])
    values = {}
    for name, node in sides:
        try:
            values[name] = _eval_twice(node, target)
        except EvaluationError as exc:
            what = f"the {name} side" if right is not None else "the expression"
            return VerifyResult("UNDETERMINED", None, 0, "", f"{what} could not be evaluated: {exc}",
                                digits, ltext, rtext)
    shown = min(target, 60) + 2

    def show(v):
        return mp.nstr(v, shown)

    L, L_low = values["left"]
    if decimal is not None:
        R, R_low = decimal.mpf(), decimal.mpf()
    else:
        R, R_low = values["right"]
    absolute = L == 0 or R == 0 or max(abs(L), abs(R)) < mp.mpf(10) ** (-target)
    trust_L = _agree(L, L_low, absolute)
    trust_R = _INF if decimal is not None else _agree(R, R_low, absolute)
    trusted = min(trust_L, trust_R)
    agreed = _agree(L, R, absolute)
    reevaluated = f"{show(L)}" if decimal is not None else f"left = {show(L)}; right = {show(R)}"
    shown_agreed = min(agreed, target)
    kind = "absolute digits" if absolute else "significant digits"

    if decimal is not None:
        if trust_L < target + 2:
            return VerifyResult("UNDETERMINED", None, shown_agreed, reevaluated,
                                f"the expression could be evaluated reliably to only {trust_L} digits, "
                                f"fewer than the {target} given", digits, ltext, rtext)
        ok = _rounds_to(L, decimal)
        if ok:
            return VerifyResult("VERIFIED", True, target, reevaluated,
                                f"the expression rounds or truncates to the {target} digits given "
                                f"(independent evaluation at {target + 10} and {target + 25} digits)",
                                digits, ltext, rtext)
        return VerifyResult("REFUTED", False, shown_agreed, reevaluated,
                            f"the expression is {show(L)}, which does not round or truncate to the value "
                            f"given (they agree to {shown_agreed} {kind})", digits, ltext, rtext)
    if agreed >= target and trusted >= target:
        return VerifyResult("VERIFIED", True, target, reevaluated,
                            f"both sides agree to {target} {kind} (independent evaluations at "
                            f"{target + 10} and {target + 25} digits agree)", digits, ltext, rtext)
    if agreed < target and trusted >= agreed + 3:
        return VerifyResult("REFUTED", False, shown_agreed, reevaluated,
                            f"the sides differ after {shown_agreed} {kind}, and each side is known "
                            f"to at least {min(trusted, target + 10)} digits", digits, ltext, rtext)
    return VerifyResult("UNDETERMINED", None, shown_agreed, reevaluated,
                        f"the sides agree to {shown_agreed} {kind}, but a side could be evaluated "
                        f"reliably to only {trusted} digits; ask for fewer digits or simplify",
                        digits, ltext, rtext)


def _rounds_to(v, decimal: DecimalValue) -> bool:
    """Whether ``v`` rounds (half a unit) or truncates (toward zero, under a unit) to the decimal."""
    from mpmath import mp

    x = decimal.fraction()
    ulp = decimal.ulp()
    if hasattr(v, "imag") and v.imag != 0:
        return False
    vf = _to_fraction(mp.mpf(v))
    diff = vf - x
    if abs(diff) * 2 <= ulp:
        return True
    return 0 <= diff * (1 if x >= 0 else -1) < ulp and (vf >= 0) == (x >= 0)


def _to_fraction(v):
    """The exact rational value of an mpf."""
    from fractions import Fraction

    sign, man, exp, _ = v._mpf_
    f = Fraction(man) * Fraction(2) ** exp
    return -f if sign else f
