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
``value`` the expression must round or truncate to the digits given (the first ``digits`` of them, when
it gives more), and those are the ``digits`` the answer reports; a decimal written in a claim is read as
the exact number it denotes (``pi = 3.14`` is REFUTED), and the reason names the check that reads it as
known only to its digits, in the words of the caller's surface (``verify_with_step``).

A float ``value`` (a JSON number) is read as its shortest decimal, the one its repr writes (3.14 -> "3.14",
as the client wrote it; ``value.number_text``, which counts no trailing zero, so 3.0 is "3"). Up to 15
significant digits that is exactly the decimal written (a double keeps 15); a repr of 16 or 17 digits ends in the double's digits, not necessarily the ones written (the nearest
double to log(3) reads 1.0986122886681098, and log(3) = 1.09861228866810969... neither rounds nor
truncates to that), so when the expression does not round or truncate to it, the double itself is
compared to 15 digits (``_double_agrees``) before anything is refuted.

Digits agreed are counted as a person reads them (``value.common_digits``: pi and 3.15 agree to 2,
3.1); the decision to refute uses the distance itself (``_agree``: within one unit), so that a refuted
claim is wrong by far more than either side's evaluation error.
"""
from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from mathlas.checks import integer
from mathlas.errors import UsageError

from .parser import Node, parse_claim, parse_expression, to_text
from .timebound import check_timeout, run_bounded
from .value import DecimalValue, common_digits, digits_text, lead_of, number_text, parse_value

MAX_DIGITS = 1000
DEFAULT_TIMEOUT = 20.0
DOUBLE_DIGITS = sys.float_info.dig  # 15: the significant digits a double keeps of any decimal written
_INF = 10 ** 9


@dataclass
class VerifyResult:
    """The verdict of verify_numeric.

    ``verdict`` is VERIFIED, REFUTED or UNDETERMINED; ``verified`` is True, False or None to match.
    ``digits``: the significant digits compared: those asked for, or, against a decimal ``value``, the
    digits it gives when they are fewer (``"3"`` is one digit, so pi against it is VERIFIED to 1 digit).
    ``digits_agreed``: the leading significant digits in which the two sides agree, as a person reads
    them (capped at ``digits``); ``reevaluated``: the independent high-precision value(s); ``reason``:
    how the verdict was reached.
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


# The next step after a claim refuted only because its decimal is read as exact ("pi = 3.14": pi does
# round to 3.14), as the caller's surface writes it: a template with {expression} and {value}, and the
# quoting for them. The tool (so the library and the MCP server) names its own arguments; the CLI passes
# its command (mathlas.cli.numeric). No result field carries it: every field costs each MCP session.
ARGUMENTS_STEP = ("pass expression={expression}, value={value} instead", repr)


def verify_numeric(claim: str | None = None, expression: str | None = None,
                   value: str | int | float | None = None, digits: int = 50,
                   timeout: float = DEFAULT_TIMEOUT) -> VerifyResult:
    """Check a numeric claim ("sum_{n>=1} 1/n^2 = pi^2/6") at high precision: VERIFIED, REFUTED or
    UNDETERMINED. Constants, functions, sums, products, integrals and LaTeX are understood.

    Args:
        claim: "left = right".
        expression: with value, instead of claim.
        value: a decimal it must round or truncate to (a string keeps trailing zeros), or an
            expression.
        digits: digits to confirm.
        timeout: seconds.
    """
    return verify_with_step(ARGUMENTS_STEP, claim, expression, value, digits, timeout)


def verify_with_step(step: tuple[str, Callable[[str], str]], claim: str | None = None, expression: str | None = None,
                     value: str | int | float | None = None, digits: int = 50,
                     timeout: float = DEFAULT_TIMEOUT) -> VerifyResult:
    """``verify_numeric``, with the next step after a claim refuted for its exact decimal written as
    ``step`` says (see ``ARGUMENTS_STEP``)."""
    integer(digits, "digits", 1, MAX_DIGITS)
    timeout = check_timeout(timeout)
    decimal: DecimalValue | None = None
    double: Fraction | None = None  # a float value whose repr carries more digits than a double keeps
    if claim is not None:
        if expression is not None or value is not None:
            raise UsageError("pass either claim, or expression with value, not both")
        left, right = parse_claim(claim)
    else:
        if expression is None or value is None:
            raise UsageError("pass claim='left = right', or both expression= and value=")
        left = parse_expression(expression)
        try:
            # a float as the decimal written: 3.14, not 3.14000000000000
            decimal = parse_value(number_text(value) if isinstance(value, float) else value)
            right = None
        except UsageError:
            if not isinstance(value, str):
                raise
            try:
                right = parse_expression(value)
            except UsageError as exc:
                raise UsageError(f"value is neither a decimal number nor an expression: {exc}") from None
        if isinstance(value, float) and decimal is not None and decimal.digits > DOUBLE_DIGITS:
            double = Fraction(value)
    out = run_bounded(_verify_work, left, right, decimal, digits, step, double, timeout=timeout)
    if out.value is not None:
        out.value.elapsed_s = round(out.elapsed, 3)
        return out.value
    why = f"timed out after {timeout:g} s" if out.timed_out else out.crashed
    return VerifyResult("UNDETERMINED", None, 0, "", f"{why} while evaluating; nothing was decided",
                        digits if decimal is None else min(digits, decimal.digits), to_text(left),
                        to_text(right) if right is not None else decimal.text, round(out.elapsed, 3))


def _agree(a, b, absolute: bool) -> int:
    """Digits to which ``a`` and ``b`` are within one unit: relative to the larger, or absolute (for zero).

    Not what a person reads as "digits agreed" (2 and 3 are within one unit of the first digit); the
    verdicts use it because it measures the distance, which is what a side's error is compared with.
    """
    return max(0, _agree_raw(a, b, absolute))


def _agree_raw(a, b, absolute: bool) -> int:
    """``_agree`` below zero too: a distance of 10^25 is -25 decimal places. The verdicts compare these
    (1e999999 = 0: the left side's error, 10^999974, is far below its distance from 0), the texts the
    clamped count."""
    from mpmath import mp

    d = abs(a - b)
    if d == 0:
        return _INF
    if absolute:
        return math.floor(-float(mp.log10(d)))
    m = max(abs(a), abs(b))
    lead = math.floor(float(mp.log10(m))) + 1
    return math.floor(lead - float(mp.log10(d)))


# Exact decimals (Fractions) of numbers past 10^±READ_EXPONENT take unbounded time (10^(10^11) has 10^11
# digits): their digits are read off both sides shifted by one power of ten (``_shift``).
READ_EXPONENT = 1000


def _shift(values, absolute: bool) -> int:
    """The power of ten the sides are divided by before their digits are read: the largest side's
    exponent when it is past ``READ_EXPONENT`` either way and the count is relative (significant digits
    do not change under it), else 0. Absolute counts (decimal places, a side is 0) read huge and tiny
    parts through ``_known_decimal``'s bounds instead."""
    from mpmath import mp

    if absolute:
        return 0
    m = max(abs(v) for v in values)
    if m == 0:
        return 0
    e = int(mp.floor(mp.log10(m)))
    return e if abs(e) > READ_EXPONENT else 0


def _shifted(v, shift: int):
    from mpmath import mp

    return v if not shift else v / mp.power(10, shift)


def _shifted_decimal(d: DecimalValue, shift: int) -> DecimalValue:
    """``d`` divided by 10^shift, exactly (its text unchanged: it names the number given)."""
    return d if not shift or d.is_zero else DecimalValue(d.text, d.negative, d.mantissa, d.lead - shift)


def _known_decimal(v, digits: int) -> tuple[Fraction, Fraction]:
    """(real, imaginary) parts of ``v`` as the decimals of ``digits`` significant digits they are known to.

    An evaluation of 3.1416 or 0.3 is a binary number a hair below or above it; digit counts and
    truncation are discontinuous exactly there (0.29999... truncates to 0.2), so they are read off the
    value rounded to its trusted digits, where that noise is gone.
    """
    from mpmath import mp

    n = max(1, digits)
    return tuple(_part_decimal(part, n) for part in (mp.re(v), mp.im(v)))


def _part_decimal(part, n: int) -> Fraction:
    """One part for ``_known_decimal``, within 10^±READ_EXPONENT (an exact Fraction past that takes
    unbounded time). A part below it is read as 0 and one above it as ±10^READ_EXPONENT: only absolute
    counts meet them (``_shift`` brings relative ones within), where the other side is 0 or below
    10^-digits, so neither changes a decimal place compared (MAX_DIGITS < READ_EXPONENT)."""
    from mpmath import mp

    if part == 0 or abs(part) < mp.mpf(10) ** -READ_EXPONENT:
        return Fraction(0)
    if abs(part) > mp.mpf(10) ** READ_EXPONENT:
        return Fraction(10) ** READ_EXPONENT * (1 if part > 0 else -1)
    return Fraction(mp.nstr(part, n))


def _shared_digits(a: tuple[Fraction, Fraction], b: tuple[Fraction, Fraction], limit: int, absolute: bool) -> int:
    """Leading digits in which ``a`` and ``b`` ((real, imaginary) pairs) agree as a person reads them:
    ``value.common_digits`` on each part, counted from the leading digit of the largest part (or after
    the decimal point when ``absolute``)."""
    if absolute:
        top = 0
    else:
        largest = max(abs(x) for x in (*a, *b))
        if largest == 0:
            return limit
        top = lead_of(largest)
    return min(common_digits(x, y, limit, top) for x, y in zip(a, b))


def _agree_text(n: int, absolute: bool) -> str:
    """``agree to 3 significant digits``, ``agree in no significant digit``, ``agree to 1 decimal place``."""
    unit = "decimal place" if absolute else "significant digit"
    if n == 0:
        return f"agree to no {unit}" if absolute else f"agree in no {unit}"
    return f"agree to {digits_text(n, unit)}"


def _differ_text(n: int, absolute: bool) -> str:
    """``the sides differ after 3 significant digits``, ``... in the first significant digit``."""
    if n == 0:
        return "the sides do not agree to one decimal place" if absolute else \
            "the sides differ in the first significant digit"
    return f"the sides differ after {digits_text(n, 'decimal place' if absolute else 'significant digit')}"


def _literal(node: Node) -> str | None:
    """The text of a side that is a plain number (``3.14``, ``-2.5e-3``), else None."""
    if node.kind == "num":
        return node.text
    if node.kind == "neg" and node.args[0].kind == "num":
        return "-" + node.args[0].text
    return None


def _plain(text: str) -> str:
    """``to_text`` without the parentheses around the whole: ``(1 + 1)`` -> ``1 + 1``."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and i < len(text) - 1:
            return text  # the first parenthesis closes before the end: (a) + (b)
    return text[1:-1]


def _eval_twice(node: Node, digits: int):
    """(value at the higher precision, digits to which two precisions agree) or raise EvaluationError."""
    from .evaluate import evaluate

    low = evaluate(node, digits + 10)
    high = evaluate(node, digits + 25)
    return high, low


def _verify_work(left: Node, right: Node | None, decimal: DecimalValue | None, digits: int, step,
                 double: Fraction | None, send) -> VerifyResult:
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
                                target, ltext, rtext)
    shown = min(target, 60) + 2

    def show(v):
        return mp.nstr(v, shown)

    L, L_low = values["left"]
    if decimal is not None:
        R, R_low = decimal.mpf(), decimal.mpf()
    else:
        R, R_low = values["right"]
    absolute = L == 0 or R == 0 or max(abs(L), abs(R)) < mp.mpf(10) ** (-target)
    # how far each evaluation can be trusted, below zero too (the refutation compares these), and clamped
    raw_L = _agree_raw(L, L_low, absolute)
    raw_R = _INF if decimal is not None else _agree_raw(R, R_low, absolute)
    trust_L, trust_R = max(0, raw_L), max(0, raw_R)
    trusted = min(trust_L, trust_R)
    # each side as the decimal it is known to be; a decimal value exactly as written; past
    # 10^±READ_EXPONENT, both divided by one power of ten first
    shift = _shift((L, R), absolute)
    Lq = _known_decimal(_shifted(L, shift), min(trust_L, target + 10))
    Rq = (_shifted_decimal(decimal, shift).fraction(), Fraction(0)) if decimal is not None else \
        _known_decimal(_shifted(R, shift), min(trust_R, target + 10))
    agreed = _shared_digits(Lq, Rq, target, absolute)
    reevaluated = f"{show(L)}" if decimal is not None else f"left = {show(L)}; right = {show(R)}"

    if decimal is not None:
        # the digits compared: all those given, or the first ``digits`` of them (rounding or truncating
        # to a decimal implies truncating or rounding to its leading digits, so this refutes nothing true)
        checked = _shifted_decimal(decimal.truncated(target), shift)
        given = (f"the {digits_text(target)} given" if target == decimal.digits else
                 f"the first {target} of the {decimal.digits:,} digits given, as many as were asked for")
        evaluated = f"independent evaluation at {target + 10} and {target + 25} digits"
        if trust_L < target + 2:
            return VerifyResult("UNDETERMINED", None, agreed, reevaluated,
                                f"the expression could be evaluated reliably to only {digits_text(trust_L)}, "
                                f"fewer than the {target} to compare", target, ltext, rtext)
        if _rounds_to(Lq, checked):
            return VerifyResult("VERIFIED", True, target, reevaluated,
                                f"the expression rounds or truncates to {given} ({evaluated})", target, ltext, rtext)
        if double is not None and not shift:  # a double lies within 10^±324: never shifted
            n = min(target, DOUBLE_DIGITS)
            if _double_agrees(Lq, double, n):
                return VerifyResult("VERIFIED", True, n, reevaluated,
                                    f"the expression is {show(L)}: it does not round or truncate to {decimal.text}, "
                                    f"but a number's digits past the {DOUBLE_DIGITS}th are a double's (not "
                                    f"necessarily those written), and the double agrees with the expression to "
                                    f"{digits_text(n, 'significant digit')} ({evaluated}); pass the value as a "
                                    f"string to compare every digit", n, ltext, rtext)
        return VerifyResult("REFUTED", False, agreed, reevaluated,
                            f"the expression is {show(L)}, which does not round or truncate to "
                            f"{'the value given' if target == decimal.digits else given} "
                            f"(they {_agree_text(agreed, absolute)})", target, ltext, rtext)
    # agreeing as read (agreed) implies being within one unit (close); not the other way round
    if agreed >= target and trusted >= target:
        return VerifyResult("VERIFIED", True, target, reevaluated,
                            f"both sides {_agree_text(target, absolute)} (independent evaluations at "
                            f"{target + 10} and {target + 25} digits agree)", digits, ltext, rtext)
    # refuted only when each side's evaluation error is far below the distance between the sides
    # (counted below zero too: 1e999999 = 0 is refuted though no decimal place of the left is known)
    if min(raw_L, raw_R) >= _agree_raw(L, R, absolute) + 3:
        if absolute:  # how well a side is known, in significant digits where no decimal place is
            trust_L = trust_L or (_agree(L, L_low, False) if L != 0 else trust_L)
            trust_R = trust_R or (_agree(R, R_low, False) if R != 0 else trust_R)
        known = _refuted_sides(left, right, Lq, Rq, trust_L, trust_R, target, step, shift)
        return VerifyResult("REFUTED", False, agreed, reevaluated, f"{_differ_text(agreed, absolute)}{known}",
                            digits, ltext, rtext)
    return VerifyResult("UNDETERMINED", None, agreed, reevaluated,
                        f"the sides {_agree_text(agreed, absolute)}, but a side could be evaluated "
                        f"reliably to only {digits_text(trusted)}; ask for fewer digits or simplify",
                        digits, ltext, rtext)


def _refuted_sides(left: Node, right: Node, L: tuple, R: tuple, trust_L: int, trust_R: int, target: int,
                   step, shift: int = 0) -> str:
    """How well each side of a refuted claim is known; when one side is a decimal that the other side does
    round or truncate to (the claim is false only because the decimal is exact), the next ``step``.
    ``L`` and ``R`` are divided by 10^shift (``_shift``)."""
    lit = {"left": _literal(left), "right": _literal(right)}
    trust = {"left": trust_L, "right": trust_R}
    value = {"left": L, "right": R}
    computed = [s for s in ("left", "right") if lit[s] is None]
    if not computed:
        return f": {lit['left']} and {lit['right']} are read as exact numbers"
    t = min(min(trust[s] for s in computed), target + 10)
    if len(computed) == 2:
        return f", and each side is known to at least {digits_text(t)}"
    other = computed[0]
    number = lit["right" if other == "left" else "left"]
    expr = _plain(to_text(left if other == "left" else right))
    known = f": {number} is read as an exact number, and {expr} is known to at least {digits_text(t)}"
    if not any(c in number for c in ".eE"):
        return known  # an integer in a claim is meant exactly; a decimal may have been cut short
    try:
        dec = parse_value(number)
    except UsageError:  # a literal the decimal reader refuses (an exponent of ten digits or more)
        return known
    if trust[other] >= dec.digits + 2 and _rounds_to(value[other], _shifted_decimal(dec, shift)):
        template, quote = step
        return (f"{known}; {expr} does round or truncate to {number}, so if {number} is known only to its "
                f"digits, " + template.format(expression=quote(expr), value=quote(number)))
    return known


def _double_agrees(v: tuple[Fraction, Fraction], double: Fraction, n: int) -> bool:
    """Whether ``v`` ((real, imaginary), exact) and the exact value of a double read the same to ``n``
    significant digits (``value.common_digits``).

    Sound as a refutation test for ``n <= DOUBLE_DIGITS``: if ``v`` rounds or truncates to the decimal
    of 16 or more digits that was written, it lies within one unit of that decimal's 16th digit, and the
    double the decimal was read as lies within half its last binary digit (1.1e-16 relative) of the
    decimal; so ``v`` and the double are closer than half a unit of the 15th digit, and two numbers that
    close read the same to 15 digits (the one below a 15-digit boundary rounds up to it, the one above
    truncates down to it)."""
    if v[1] != 0:
        return False
    return _shared_digits(v, (double, Fraction(0)), n, absolute=False) >= n


def _rounds_to(v: tuple[Fraction, Fraction], decimal: DecimalValue) -> bool:
    """Whether ``v`` ((real, imaginary), exact) rounds (half a unit) or truncates (toward zero, under a
    unit) to the decimal."""
    vf, im = v
    if im != 0:
        return False
    x = decimal.fraction()
    ulp = decimal.ulp()
    diff = vf - x
    if abs(diff) * 2 <= ulp:
        return True
    return 0 <= diff * (1 if x >= 0 else -1) < ulp and (vf >= 0) == (x >= 0)
