"""Integer-relation search shared by identify_constant and conjecture_relation.

The honesty rule lives here. A relation found by PSLQ among ``x`` (or a transform of it) and some basis
numbers "uses up" about ``sum(log10(2|c_i| + 1))`` decimal digits: that many digits could be matched by
chance, because that is roughly how many integer vectors of that size exist. A random ``x`` given to
``D`` digits satisfies some such relation with probability about ``10**(cost - D)`` per basis tried. So
a relation counts only when the digits it leaves unexplained, ``D - guard - cost``, exceed
``log10(2 * hypotheses) + CONFIDENCE``: with ``CONFIDENCE = 5`` the chance that a random number is
"identified" by any of the searched forms is below about 1e-5. Every surviving candidate is then rebuilt as
a sympy expression and re-evaluated by sympy, independently of the PSLQ arithmetic, at higher precision;
only candidates that match all given digits (less ``GUARD``) are kept.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

GUARD = 1  # digits of slack for a rounded or truncated last digit
CONFIDENCE = 5.0  # -log10 of the allowed chance of a false identification per input


@dataclass
class Term:
    """One basis number: its sympy form (for the answer) and its value at working precision."""

    sym: Any
    val: Any


def default_constants(dps: int) -> list[Term]:
    """pi, e, Euler's gamma, Catalan, zeta(3), log 2, log 3, sqrt 2, sqrt 3, sqrt 5 (phi = (1+sqrt 5)/2)."""
    import sympy
    from mpmath import mp

    with mp.workdps(dps):
        return [
            Term(sympy.pi, +mp.pi), Term(sympy.E, +mp.e), Term(sympy.EulerGamma, +mp.euler),
            Term(sympy.Catalan, +mp.catalan), Term(sympy.zeta(3), mp.zeta(3)),
            Term(sympy.log(2), mp.log(2)), Term(sympy.log(3), mp.log(3)),
            Term(sympy.sqrt(2), mp.sqrt(2)), Term(sympy.sqrt(3), mp.sqrt(3)), Term(sympy.sqrt(5), mp.sqrt(5)),
        ]


def required_margin(hypotheses: int) -> float:
    """Digits a relation must leave unexplained to count, given how many forms were tried."""
    return math.log10(2 * max(hypotheses, 1)) + CONFIDENCE


def spread(values: list) -> float:
    """Digits between the largest and smallest magnitude in a PSLQ vector.

    The tolerance follows the largest entries (those carrying x's error), so small entries are matched
    only to fewer digits: a relation must clear this many extra digits to count.
    """
    from mpmath import mp

    mags = [abs(v) for v in values if v != 0]
    if not mags:
        return 0.0
    return float(mp.log10(max(mags) / min(mags)))


def relation_cost(v: list[int]) -> float:
    """Digits of information in an integer relation: log10 of how many vectors are that small."""
    return sum(math.log10(2 * abs(c) + 1) for c in v)


def pslq(values: list, digits: float, budget: float) -> list[int] | None:
    """PSLQ at the current mpmath precision on numbers known to about ``digits`` digits.

    ``budget`` is the largest relation cost that could still count; it bounds the coefficients, which
    bounds the work on inputs that have no relation.
    """
    from mpmath import mp

    if budget <= 0:
        return None
    scale = max(abs(v) for v in values)
    if any(v == 0 for v in values):
        return None
    tol = scale * mp.mpf(10) ** (-(digits - 2))
    maxcoeff = int(min(10 ** min(budget / 1.6 + 0.5, 9), 10 ** 9)) + 1
    try:
        rel = mp.pslq(values, tol=tol, maxcoeff=maxcoeff, maxsteps=25 * len(values))
    except (ValueError, ZeroDivisionError):
        return None
    return [int(c) for c in rel] if rel else None


def agreed_digits(value, x, digits: int) -> int:
    """How many leading digits of the decimal ``x`` the number ``value`` matches, as a person reads
    them (``value.common_digits``: 3.14159... matches 3.1416 in 5, 3.15 in 2), at most ``digits``."""
    from mpmath import mp

    from .value import common_digits

    with mp.workdps(digits + 20):
        # rounded well past the digits compared, so that a candidate equal to a short decimal (3/10) is
        # that decimal, not the binary number a hair below it, which truncates one digit lower
        known = Fraction(mp.nstr(mp.mpf(value), digits + 10))
    return common_digits(known, x.fraction(), digits)


def sympy_value(expr, dps: int):
    """Evaluate a sympy expression with sympy's own evalf; a real mpf, or None when it is not real."""
    import sympy
    from mpmath import mp

    try:
        v = sympy.N(expr, dps)
    except Exception:  # sympy raises a zoo of types on odd expressions; any means "cannot re-evaluate"
        return None
    if not v.is_real or not v.is_Number or v.is_infinite:
        re, im = v.as_real_imag() if hasattr(v, "as_real_imag") else (v, 1)
        if im != 0 or not re.is_Number:
            return None
        v = re
    with mp.workdps(dps):
        return mp.mpf(v._mpf_) if hasattr(v, "_mpf_") else mp.mpf(str(v))


def tidy(expr):
    """The shortest of a few equivalent sympy forms: (1 + sqrt(5))/2 rather than 1/2 + sqrt(5)/2."""
    import sympy

    forms = [expr]
    for f in (sympy.together, sympy.sqrtdenest):
        try:
            forms.append(f(expr))
        except Exception:  # a form that sympy cannot produce is simply not offered
            pass
    return min(forms, key=lambda e: (len(str(e)), str(e)))


def verify_candidate(expr, x, digits: int) -> int | None:
    """Digits of ``x`` that sympy's independent evaluation of ``expr`` matches, or None."""
    v = sympy_value(expr, digits + 15)
    if v is None:
        return None
    return agreed_digits(v, x, digits)


def solve_for_x(coeffs_by_power: dict[int, Any], xval) -> Any | None:
    """The root of ``sum c_k X^k = 0`` (degree <= 2, sympy coefficients) nearest to ``xval``."""
    import sympy

    a = coeffs_by_power.get(2, 0)
    b = coeffs_by_power.get(1, 0)
    c = coeffs_by_power.get(0, 0)
    if a == 0:
        if b == 0:
            return None
        return -c / b
    disc = b * b - 4 * a * c
    roots = [(-b + sympy.sqrt(disc)) / (2 * a), (-b - sympy.sqrt(disc)) / (2 * a)]
    best, best_err = None, None
    for r in roots:
        try:
            rv = complex(sympy.N(r, 30))
        except (TypeError, ValueError):
            continue
        err = abs(rv - complex(float(xval)))
        if abs(rv.imag) < 1e-20 and (best_err is None or err < best_err):
            best, best_err = r, err
    return best

