"""identify_constant: propose closed forms for a decimal number, and keep only the airtight ones.

Search (mpmath PSLQ at the digits given), in tiers, simplest first; the search stops after the first
tier that yields a confirmed candidate:

1. x rational; x = r0 + r1*c for one constant c (the basis, plus for the default basis a few powers and
   products such as pi^2, pi*log 2, sqrt(pi), e^pi); x = +-prod of powers of the constants and the
   primes 2, 3, 5, 7 (PSLQ on log|x|);
2. the same one-constant forms for 1/x and x^2; algebraic numbers of degree 2 to 4;
3. x = r0 + r1*c1 + r2*c2 for two basis constants;
4. one-constant forms for exp(x) and log|x|;
5. two-constant forms for 1/x. Each PSLQ hit must pass the significance rule of
``relations.py`` and sympy's independent re-evaluation before it is reported.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from mathlas.errors import UsageError

from .parser import has_binders, parse_expression
from .relations import GUARD, Term
from .timebound import check_timeout, run_bounded
from .value import digits_text, parse_value

MAX_DIGITS = 1000
MAX_BASIS = 12
DEFAULT_TIMEOUT = 20.0


@dataclass
class Candidate:
    """A closed form that sympy re-evaluated and found equal to the input in ``digits_agreed`` digits."""

    expression: str
    latex: str
    digits_agreed: int


@dataclass
class IdentifyResult:
    """The outcome of identify_constant.

    ``identified`` is true only when a candidate passed both the significance rule (the formula uses
    far fewer digits than were given, so a coincidence is implausible) and an independent sympy
    re-evaluation matching every given digit but the last. ``reason`` says why nothing was found.
    """

    identified: bool
    best: Candidate | None
    candidates: list[Candidate]
    reason: str | None
    digits: int
    basis: list[str] = field(default_factory=list)
    forms_searched: int = 0
    elapsed_s: float = 0.0


def _check_digits(digits, given: int, name: str = "digits") -> int:
    if digits is None:
        return min(given, MAX_DIGITS)
    if isinstance(digits, bool) or not isinstance(digits, int):
        raise UsageError(f"{name} must be a whole number, got {digits!r}")
    if digits < 1 or digits > MAX_DIGITS:
        raise UsageError(f"{name} must be between 1 and {MAX_DIGITS}, got {digits:,}")
    if digits > given:
        raise UsageError(f"{name}={digits} but the value carries only {given} significant digits; "
                         "pass more digits of the value or a smaller digits")
    return digits


def identify_constant(value: str | float | int, digits: int | None = None, basis: list[str] | None = None,
                      timeout: float = DEFAULT_TIMEOUT) -> IdentifyResult:
    """Closed forms for a decimal from pi, e, gamma, Catalan, zeta(3), logs and roots (PSLQ), each
    re-evaluated by sympy to all given digits; if none qualifies, `identified` is false, with a reason.

    Args:
        value: a decimal of any length (string), or a number.
        digits: digits to trust; default: all given.
        basis: constants instead of the default ones, e.g. ["pi", "zeta(5)"].
        timeout: seconds.
    """
    x = parse_value(value)
    D = _check_digits(digits, x.digits)
    timeout = check_timeout(timeout)
    basis_texts = None
    if basis is not None:
        if not isinstance(basis, (list, tuple)) or not all(isinstance(b, str) for b in basis):
            raise UsageError("basis must be a list of expression strings such as ['pi', 'zeta(5)']")
        if not 1 <= len(basis) <= MAX_BASIS:
            raise UsageError(f"basis must hold 1 to {MAX_BASIS} constants, got {len(basis)}")
        for b in basis:
            if has_binders(parse_expression(b)):
                raise UsageError(f"basis entries must be closed forms without sums, products or integrals: {b!r}")
        basis_texts = list(basis)
    if x.is_zero:
        return IdentifyResult(True, Candidate("0", "0", D), [Candidate("0", "0", D)], None, D)
    out = run_bounded(_identify_work, x.text, D, basis_texts, timeout=timeout)
    if out.value is not None:
        result = out.value
        result.elapsed_s = round(out.elapsed, 3)
        return result
    found = [c for c in out.partial if isinstance(c, Candidate)]
    why = f"timed out after {timeout:g} s" if out.timed_out else out.crashed
    return IdentifyResult(bool(found), found[0] if found else None, found,
                          None if found else f"{why} before any closed form was confirmed", D,
                          elapsed_s=round(out.elapsed, 3))


# ---------------------------------------------------------------------------------------------
# worker side


def _extras(dps: int) -> list[Term]:
    """Single constants tried with 1 (not in pairs): powers and products that agents meet often."""
    import sympy
    from mpmath import mp

    pi, E, l2, s2, s3 = sympy.pi, sympy.E, sympy.log(2), sympy.sqrt(2), sympy.sqrt(3)
    with mp.workdps(dps):
        return [Term(pi ** 2, mp.pi ** 2), Term(pi ** 3, mp.pi ** 3), Term(pi ** 4, mp.pi ** 4),
                Term(1 / pi, 1 / mp.pi), Term(pi * l2, mp.pi * mp.log(2)), Term(l2 ** 2, mp.log(2) ** 2),
                Term(pi * s2, mp.pi * mp.sqrt(2)), Term(pi * s3, mp.pi * mp.sqrt(3)),
                Term(sympy.sqrt(pi), mp.sqrt(mp.pi)), Term(E ** 2, mp.e ** 2), Term(sympy.exp(pi), mp.exp(mp.pi)),
                Term(pi ** 2 * l2, mp.pi ** 2 * mp.log(2)), Term(pi * sympy.EulerGamma, mp.pi * mp.euler)]


def _user_basis(texts: list[str], dps: int) -> list[Term]:
    from .evaluate import EvaluationError, evaluate, to_sympy

    terms = []
    for t in texts:
        node = parse_expression(t)
        try:
            val = evaluate(node, dps)
            sym = to_sympy(node)
        except EvaluationError as exc:
            raise UsageError(f"basis entry {t!r} cannot be used: {exc}") from None
        if not hasattr(val, "imag") or getattr(val, "imag", 0) != 0 or val == 0:
            raise UsageError(f"basis entry {t!r} must be a nonzero real number")
        terms.append(Term(sym, val))
    return terms


def _identify_work(text: str, D: int, basis_texts, send) -> IdentifyResult:
    import time

    import sympy
    from mpmath import mp

    from . import relations as R

    start = time.monotonic()
    x = parse_value(text).truncated(D)
    dps = D + 15
    mp.dps = dps
    xv = x.mpf()
    sign = -1 if xv < 0 else 1
    if basis_texts is None:
        base = R.default_constants(dps)
        singles = base + _extras(dps)
        logs = [Term(sympy.Integer(p), mp.log(p)) for p in (2, 3, 5, 7)] + [
            Term(t.sym, mp.log(t.val)) for t in base if t.sym not in (sympy.E,) and not t.sym.is_algebraic]
        basis_names = [str(t.sym) for t in base]
    else:
        base = _user_basis(basis_texts, dps)
        singles = list(base)
        logs = [Term(sympy.Integer(p), mp.log(p)) for p in (2, 3, 5, 7)] + [
            Term(t.sym, mp.log(abs(t.val))) for t in base if t.val > 0]
        basis_names = list(basis_texts)

    # transforms: (name, t value, inverse as a function of the sympy expression for t, digits lost)
    transforms = [("x", xv, lambda T: T, 0.0)]
    transforms.append(("1/x", 1 / xv, lambda T: 1 / T, 0.0))
    transforms.append(("x^2", xv * xv, lambda T: sign * sympy.sqrt(T), 0.0))
    exp_tried = abs(xv) <= 200  # exp(x) costs log10|x| digits; beyond 200 it is not tried
    if exp_tried:
        transforms.append(("exp(x)", mp.exp(xv), lambda T: sympy.log(T), float(mp.log10(max(abs(xv), 1)))))
    transforms.append(("log|x|", mp.log(abs(xv)), lambda T: sign * sympy.exp(T), 0.0))

    one = Term(sympy.Integer(1), mp.mpf(1))
    hyps = []  # (tier, vector terms, t transform or special kind)
    ident = transforms[0]
    hyps.append((1, ident, []))
    hyps += [(1, ident, [c]) for c in singles]
    hyps.append((1, "mult", None))
    for tr in transforms[1:3]:
        hyps += [(2, tr, [c]) for c in singles]
    hyps += [(2, "poly", d) for d in (2, 3, 4)]
    hyps += [(3, ident, list(p)) for p in itertools.combinations(base, 2)]
    for tr in transforms[3:]:
        hyps += [(4, tr, [c]) for c in singles]
    hyps += [(5, transforms[1], list(p)) for p in itertools.combinations(base, 2)]

    margin = R.required_margin(len(hyps))
    D_eff = D - GUARD
    budget = D_eff - margin
    result = IdentifyResult(False, None, [], None, D, basis=basis_names, forms_searched=0)
    if budget < 1.0:
        # the count depends on the input (exp(x) is left out for |x| > 200; a basis of your own has its
        # own count), so say which count this is
        forms = f"the {len(hyps)} forms of the basis" + ("" if exp_tried else " for |x| > 200, where exp(x) is not tried")
        result.reason = (f"too few digits: {digits_text(D, 'significant digit')} cannot tell a closed form from "
                         f"a coincidence among {forms} (need at least {math.ceil(margin + GUARD + 1)}), "
                         "so none was searched")
        return result

    found: dict[str, tuple[float, Candidate]] = {}
    done_tier = None
    for tier, tr, extra in hyps:
        if done_tier is not None and tier > done_tier:
            break
        result.forms_searched += 1
        for cost, expr in _try(tr, extra, xv, D_eff, budget, one, logs, sign, R):
            k = R.verify_candidate(expr, x, D)  # before tidying: cheap, and rejects almost everything
            if k is None or k < D - GUARD:
                continue
            expr = R.tidy(expr)
            key = str(expr)
            if key in found:
                continue
            cand = Candidate(expression=key, latex=sympy.latex(expr), digits_agreed=k)
            found[key] = (cost, cand)
            send(cand)
            done_tier = tier
    ranked = [c for _, c in sorted(found.values(), key=lambda pc: (pc[0], len(pc[1].expression)))]
    result.candidates = ranked
    result.best = ranked[0] if ranked else None
    result.identified = bool(ranked)
    if not ranked:
        result.reason = (f"no relation in the basis: no closed form with small coefficients over "
                         f"[{', '.join(basis_names)}] (x, 1/x, x^2, exp(x), log|x|; up to two constants; "
                         f"products of powers; algebraic of degree <= 4) matches all {D} digits")
    result.elapsed_s = round(time.monotonic() - start, 3)
    return result


def _try(tr, extra, xv, D_eff, budget, one, logs, sign, R):
    """Run one hypothesis; yield (cost, sympy expression for x) for relations that pass the budget."""
    import sympy
    from mpmath import mp

    if tr == "mult":
        vec = [mp.log(abs(xv)), one.val] + [t.val for t in logs]
        budget -= R.spread(vec)
        rel = R.pslq(vec, D_eff, budget)
        if rel and rel[0] != 0:
            cost = R.relation_cost(rel)
            if cost <= budget:
                v0 = rel[0]
                expr = sympy.exp(sympy.Rational(-rel[1], v0))
                for c, t in zip(rel[2:], logs):
                    expr *= t.sym ** sympy.Rational(-c, v0)
                yield cost, sign * expr
        return
    if tr == "poly":
        d = extra
        vec = [xv ** k for k in range(d + 1)]
        budget -= R.spread(vec)
        rel = R.pslq(vec, D_eff, budget)
        if rel and rel[-1] != 0:
            cost = R.relation_cost(rel)
            if cost <= budget:
                X = sympy.Symbol("X")
                poly = sympy.Poly(sum(c * X ** k for k, c in enumerate(rel)), X)
                if poly.degree() >= 2 and poly.is_irreducible:
                    expr = _algebraic_root(poly, xv)
                    if expr is not None:
                        yield cost, expr
        return
    name, tv, inverse, lost = tr
    terms = [one] + extra
    vec = [tv] + [t.val for t in terms]
    budget -= lost + R.spread(vec)
    rel = R.pslq(vec, D_eff - lost, budget)
    if not rel or rel[0] == 0:
        return
    cost = R.relation_cost(rel)
    if cost > budget:
        return
    T = -sum(sympy.Integer(c) * t.sym for c, t in zip(rel[1:], terms)) / rel[0]
    try:
        expr = inverse(T)
    except (ValueError, TypeError, ZeroDivisionError):
        return
    if expr is None or expr.has(sympy.zoo, sympy.nan, sympy.oo):
        return
    yield cost, expr


def _algebraic_root(poly, xv):
    """The real root of an irreducible integer polynomial closest to ``xv``: radicals when short."""
    import sympy

    best, err = None, None
    for r in poly.all_roots():
        if not r.is_real:
            continue
        e = abs(float(sympy.N(r, 20)) - float(xv))
        if err is None or e < err:
            best, err = r, e
    if best is None:
        return None
    if poly.degree() <= 2:
        return sympy.nsimplify(best) if not best.is_Atom else best
    try:
        radicals = sympy.roots(poly, multiple=False)
        for r in radicals:
            if r.is_real and abs(float(sympy.N(r, 20)) - float(xv)) <= (err or 0) + 1e-12 and len(str(r)) < 80:
                return r
    except Exception:  # radical solving can fail on some quartics; the CRootOf form is still exact
        pass
    return best
