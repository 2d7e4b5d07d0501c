"""Evaluating parsed trees: with mpmath at a chosen precision, or as a sympy expression.

Both evaluators walk the whitelisted tree from ``parser.py``; neither ever sees the user's string.
Failures (a pole, a divergent series, a name sympy lacks) raise ``EvaluationError``, which the tools
turn into an honest UNDETERMINED rather than a verdict.
"""
from __future__ import annotations

import re
from typing import Any

import mpmath
from mpmath import mp

from .parser import Node

MAX_FINITE_TERMS = 100_000


class EvaluationError(Exception):
    """The tree parsed but could not be evaluated (pole, divergence, non-convergence, overflow)."""


def _atan(y, x=None):
    return mp.atan(y) if x is None else mp.atan2(y, x)


def _root(x, n):
    if n == int(n) and n > 0:
        return mp.root(x, int(n))
    return x ** (1 / n)


def _check_int(x, what: str) -> int:
    if mp.isinf(x) or x != mp.floor(x):
        raise EvaluationError(f"{what} must be an integer, got {mp.nstr(x, 10)}")
    return int(x)


MP_FUNCTIONS: dict[str, Any] = {
    "sin": lambda x: mp.sin(x), "cos": lambda x: mp.cos(x), "tan": lambda x: mp.tan(x),
    "cot": lambda x: mp.cot(x), "sec": lambda x: mp.sec(x), "csc": lambda x: mp.csc(x),
    "asin": lambda x: mp.asin(x), "acos": lambda x: mp.acos(x), "atan": _atan,
    "sinh": lambda x: mp.sinh(x), "cosh": lambda x: mp.cosh(x), "tanh": lambda x: mp.tanh(x),
    "coth": lambda x: mp.coth(x), "asinh": lambda x: mp.asinh(x), "acosh": lambda x: mp.acosh(x),
    "atanh": lambda x: mp.atanh(x), "exp": lambda x: mp.exp(x),
    "log": lambda x, b=None: mp.log(x) if b is None else mp.log(x, b),
    "log10": lambda x: mp.log10(x), "log2": lambda x: mp.log(x, 2),
    "sqrt": lambda x: mp.sqrt(x), "cbrt": lambda x: mp.cbrt(x), "root": _root,
    "abs": lambda x: abs(x), "floor": lambda x: mp.floor(x), "ceil": lambda x: mp.ceil(x),
    "gamma": lambda x: mp.gamma(x), "loggamma": lambda x: mp.loggamma(x), "digamma": lambda x: mp.digamma(x),
    "polygamma": lambda m, x: mp.polygamma(m, x),
    "zeta": lambda s, a=None: mp.zeta(s) if a is None else mp.zeta(s, a),
    "beta": lambda a, b: mp.beta(a, b), "erf": lambda x: mp.erf(x), "erfc": lambda x: mp.erfc(x),
    "binomial": lambda n, k: mp.binomial(n, k), "factorial": lambda n: mp.factorial(n),
    "polylog": lambda s, z: mp.polylog(s, z), "li": lambda x: mp.li(x), "Ei": lambda x: mp.ei(x),
    "besselj": lambda n, x: mp.besselj(n, x), "bessely": lambda n, x: mp.bessely(n, x),
    "agm": lambda a, b: mp.agm(a, b), "lambertw": lambda x: mp.lambertw(x),
    "harmonic": lambda n: mp.harmonic(n), "fibonacci": lambda n: mp.fib(n),
    "catalan_number": lambda n: mp.binomial(2 * n, n) / (n + 1),
}

MP_CONSTANTS = {"pi": lambda: +mp.pi, "e": lambda: +mp.e, "euler_gamma": lambda: +mp.euler,
                "catalan": lambda: +mp.catalan, "golden_ratio": lambda: +mp.phi, "inf": lambda: mp.inf}


def evaluate(node: Node, dps: int) -> Any:
    """The value of a closed tree (no free variables) at ``dps`` decimal digits: mpf or mpc."""
    with mp.workdps(dps):
        try:
            value = _ev(node, {})
        except EvaluationError:
            raise
        except mpmath.libmp.NoConvergence as exc:
            # mpmath often raises it without a message (nsum, nprod): then there is nothing to add
            detail = str(exc).strip()
            raise EvaluationError("did not converge numerically" + (f" ({detail})" if detail else "")) from None
        except (ZeroDivisionError, ValueError, OverflowError, ArithmeticError, TypeError) as exc:
            raise EvaluationError(f"cannot evaluate: {type(exc).__name__}: {str(exc)[:120]}") from None
        except RecursionError:
            raise EvaluationError("expression too deeply nested to evaluate") from None
        if isinstance(value, mpmath.mpc) and value.imag == 0:
            value = value.real
        if not mp.isfinite(value):
            raise EvaluationError("the value is infinite or undefined")
        return +value


EXACT_LITERAL_BITS = 1 << 16
_DECIMAL = re.compile(r"(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")


def _may_be_exact(text: str) -> bool:
    """Whether the decimal ``text`` can be a number of at most ``EXACT_LITERAL_BITS`` bits that binary
    holds exactly, read from its digits and exponent alone: ``Fraction("1e10000000")`` builds 10^10^7
    first (6 s). Its digits D times 10^e: for e >= 0 it needs more than e * log2(10) bits; for e < 0
    it is dyadic only if 5^-e divides D, impossible when 5^-e has more digits than D."""
    m = _DECIMAL.fullmatch(text)
    if not m:
        return True   # not a plain decimal: Fraction says what it is
    whole, frac, exp = m.group(1), m.group(2) or "", m.group(3)
    if exp is not None and len(exp.lstrip("+-")) > 9:
        return False
    e = (int(exp) if exp else 0) - len(frac)
    digits = len((whole + frac).lstrip("0")) or 1
    return e * 3.3219 <= EXACT_LITERAL_BITS if e >= 0 else -e * 0.699 <= digits


def _literal(text: str) -> Any:
    """A number as written. One a binary float can hold exactly (an integer such as ``1e100``, a dyadic
    such as ``0.5``) is held exactly, up to ``EXACT_LITERAL_BITS``: rounded to the working precision,
    ``sin(1e100)`` would be the sine of another number (10^100 needs 233 bits; an error of one unit in
    the last place moves it by many periods), and the two evaluations would disagree for no reason."""
    from fractions import Fraction

    if not _may_be_exact(text):
        return mp.mpf(text)
    try:
        q = Fraction(text)
    except (ValueError, ZeroDivisionError):
        return mp.mpf(text)
    den = q.denominator
    if den & (den - 1) == 0:  # a power of two: exact in binary
        num = abs(q.numerator)
        bits = max(num.bit_length() - ((num & -num).bit_length() - 1), 1)  # without the trailing zero bits
        if bits <= EXACT_LITERAL_BITS:
            with mp.workprec(bits + 8):
                return mp.mpf(q.numerator) / den
    return mp.mpf(text)


def _ev(node: Node, env: dict[str, Any]) -> Any:
    k = node.kind
    if k == "num":
        return _literal(node.text)
    if k == "const":
        return MP_CONSTANTS[node.name]()
    if k == "var":
        return env[node.name]
    if k == "add":
        return mp.fsum((s * _ev(n, env) for s, n in node.items))
    if k == "mul":
        out = mp.mpf(1)
        for div, n in node.items:
            v = _ev(n, env)
            if div:
                if v == 0:
                    raise EvaluationError("division by zero")
                out = out / v
            else:
                out = out * v
        return out
    if k == "neg":
        return -_ev(node.args[0], env)
    if k == "pow":
        base, exponent = _ev(node.args[0], env), _ev(node.args[1], env)
        if base == 0 and mp.re(exponent) < 0:
            raise EvaluationError("zero to a negative power")
        return mp.power(base, exponent)
    if k == "fact":
        return mp.factorial(_ev(node.args[0], env))
    if k == "call":
        return MP_FUNCTIONS[node.name](*[_ev(a, env) for a in node.args])
    if k in ("sum", "prod"):
        return _big_sum(node, env)
    if k == "integral":
        return _integral(node, env)
    raise EvaluationError(f"unknown node {k}")


def _bound(node: Node, env) -> Any:
    if node.kind == "const" and node.name == "inf":
        return mp.inf
    if node.kind == "neg" and node.args[0].kind == "const" and node.args[0].name == "inf":
        return -mp.inf
    return _ev(node, env)


def _big_sum(node: Node, env) -> Any:
    low_node, high_node, body = node.args
    low, high = _bound(low_node, env), _bound(high_node, env)
    var = node.name

    def f(n):
        return _ev(body, {**env, var: n})

    is_sum = node.kind == "sum"
    if mp.isinf(low) or mp.isinf(high):
        if not mp.isinf(low):
            _check_int(low, "a lower bound")
        if not mp.isinf(high):
            _check_int(high, "an upper bound")
        try:
            if is_sum:
                return mp.nsum(f, [low, high], strict=True)
            return mp.nprod(f, [low, high], strict=True)
        except mpmath.libmp.NoConvergence:
            what = "sum" if is_sum else "product"
            raise EvaluationError(f"the infinite {what} did not converge numerically: it may diverge, or converge "
                                  "too slowly to extrapolate") from None
    lo, hi = _check_int(low, "a lower bound"), _check_int(high, "an upper bound")
    if hi - lo + 1 > MAX_FINITE_TERMS:
        raise EvaluationError(f"a finite sum or product of {hi - lo + 1:,} terms (the limit is {MAX_FINITE_TERMS:,})")
    if is_sum:
        return mp.fsum(f(mp.mpf(n)) for n in range(lo, hi + 1))
    return mp.fprod(f(mp.mpf(n)) for n in range(lo, hi + 1))


def _integral(node: Node, env) -> Any:
    low_node, high_node, body = node.args
    low, high = _bound(low_node, env), _bound(high_node, env)
    var = node.name
    value, err = mp.quad(lambda t: _ev(body, {**env, var: t}), [low, high], error=True)
    scale = max(abs(value), mp.mpf(1))
    if err > scale * mp.mpf(10) ** (-(mp.dps // 2)):
        raise EvaluationError(f"the integral did not converge (quadrature error estimate {mp.nstr(err, 3)})")
    return value


# ---------------------------------------------------------------------------------------------
# sympy

_BIG = 2000  # beyond this, integer powers and factorials stay unevaluated in sympy


def to_sympy(node: Node):
    """A sympy expression for a closed tree without sums, products or integrals.

    Large exact integers (10^10^10, factorial(10^9)) are kept unevaluated so that building the
    expression cannot hang; ``N()`` then evaluates them numerically.
    """
    import sympy

    consts = {"pi": sympy.pi, "e": sympy.E, "euler_gamma": sympy.EulerGamma, "catalan": sympy.Catalan,
              "golden_ratio": sympy.GoldenRatio}
    k = node.kind
    if k == "num":
        return sympy.Rational(node.text)
    if k == "const":
        if node.name not in consts:
            raise EvaluationError(f"{node.name} cannot appear here")
        return consts[node.name]
    if k == "add":
        return sympy.Add(*[s * to_sympy(n) for s, n in node.items])
    if k == "mul":
        out = sympy.Integer(1)
        for div, n in node.items:
            v = to_sympy(n)
            out = out / v if div else out * v
        return out
    if k == "neg":
        return -to_sympy(node.args[0])
    if k == "pow":
        b, x = to_sympy(node.args[0]), to_sympy(node.args[1])
        big = x.is_Number and abs(x) > _BIG
        return sympy.Pow(b, x, evaluate=not big)
    if k in ("fact", "call"):
        args = [to_sympy(a) for a in node.args]
        name = "factorial" if k == "fact" else node.name
        big = any(a.is_Number and abs(a) > _BIG for a in args)
        fn = _sympy_function(name)
        return fn(*args, evaluate=not big) if big else fn(*args)
    raise EvaluationError("sums, products and integrals are not allowed here")


def _sympy_function(name: str):
    import sympy

    table = {
        "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot, "sec": sympy.sec,
        "csc": sympy.csc, "asin": sympy.asin, "acos": sympy.acos,
        "atan": lambda y, x=None, **kw: sympy.atan(y, **kw) if x is None else sympy.atan2(y, x, **kw),
        "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh, "coth": sympy.coth,
        "asinh": sympy.asinh, "acosh": sympy.acosh, "atanh": sympy.atanh, "exp": sympy.exp,
        "log": lambda x, b=None, **kw: sympy.log(x, **kw) if b is None else sympy.log(x, b, **kw),
        "log10": lambda x, **kw: sympy.log(x, 10, **kw), "log2": lambda x, **kw: sympy.log(x, 2, **kw),
        "sqrt": lambda x, **kw: sympy.Pow(x, sympy.Rational(1, 2), **kw),
        "cbrt": lambda x, **kw: sympy.Pow(x, sympy.Rational(1, 3), **kw),
        "root": lambda x, n, **kw: sympy.Pow(x, 1 / n, **kw),
        "abs": sympy.Abs, "floor": sympy.floor, "ceil": sympy.ceiling, "gamma": sympy.gamma,
        "loggamma": sympy.loggamma, "digamma": sympy.digamma, "polygamma": sympy.polygamma,
        "zeta": sympy.zeta, "beta": sympy.beta, "erf": sympy.erf, "erfc": sympy.erfc,
        "binomial": sympy.binomial, "factorial": sympy.factorial, "polylog": sympy.polylog, "li": sympy.li,
        "Ei": sympy.Ei, "besselj": sympy.besselj, "bessely": sympy.bessely, "lambertw": sympy.LambertW,
        "harmonic": sympy.harmonic, "fibonacci": sympy.fibonacci, "catalan_number": sympy.catalan,
    }
    if name not in table:
        raise EvaluationError(f"{name} has no sympy counterpart; it cannot be used here")
    return table[name]
