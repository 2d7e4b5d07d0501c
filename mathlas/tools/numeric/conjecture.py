"""conjecture_relation: search harder for a relation, and say plainly that it is a conjecture.

Three searches, each reported with provenance ``conjectured_relation`` (numerically verified, not
proved):

* ``pslq``: integer relations among x, x^2 and products with a basis of constants (Moebius forms
  (a + b c)/(d + e c), quadratics in x over one constant, two constants and their product, x times two
  constants, three constants, cubics in one constant), each PSLQ vector at most ``max_terms`` long, rebuilt
  as a closed form by sympy and re-evaluated by sympy; the significance rule of ``relations.py`` counts
  every vector tried;
* ``gcf``: generalized continued fractions with small polynomial a(n), b(n) (see ``contfrac.py``);
* ``simple_cf``: the reliable simple continued fraction and any periodic or arithmetic pattern in it.
"""
from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Literal

from mathlas.checks import integer
from mathlas.errors import UsageError

from .identify import _check_digits
from .relations import GUARD
from .timebound import check_timeout, run_bounded
from .value import digits_text, parse_value

DEFAULT_TIMEOUT = 30.0
PROVENANCE = "conjectured_relation"
MAX_GCF_RELATIONS = 3


@dataclass
class Relation:
    """One conjectured relation: numerically verified to ``digits_agreed`` digits, not proved."""

    kind: Literal["pslq", "gcf", "simple_cf"]
    expression: str
    latex: str
    digits_agreed: int
    provenance: Literal["conjectured_relation"] = PROVENANCE
    note: str = "numerically verified, not proved"


@dataclass
class ConjectureResult:
    """The outcome of conjecture_relation.

    ``found`` is true when at least one relation survived significance and independent re-evaluation.
    ``cf`` holds the simple continued fraction terms that every number matching the input's digits
    shares, ``cf_pattern`` its pattern when one is significant. ``searched`` lists what ran;
    ``complete`` is false when the time bound cut the search short.
    """

    found: bool
    relations: list[Relation]
    cf: list[int]
    cf_pattern: str | None
    digits: int
    reason: str | None = None
    searched: list[str] = field(default_factory=list)
    complete: bool = True
    elapsed_s: float = 0.0


def conjecture_relation(value: str | float, digits: int | None = None, max_terms: int = 6, cf_depth: int = 200,
                        timeout: float = DEFAULT_TIMEOUT) -> ConjectureResult:
    """Search harder for relations a number satisfies: PSLQ over a rich basis, generalized continued
    fractions, continued-fraction patterns, each verified to many digits and labelled
    conjectured_relation: evidence, not proof.

    Args:
        value: a decimal (string) or a number.
        digits: digits to trust; default: all given.
        max_terms: longest integer relation tried.
        cf_depth: depth of the continued fraction search.
        timeout: seconds.
    """
    x = parse_value(value)
    D = _check_digits(digits, x.digits)
    integer(max_terms, "max_terms", 3, 8)
    integer(cf_depth, "cf_depth", 50, 2000)
    timeout = check_timeout(timeout)
    if x.is_zero:
        raise UsageError("value is zero: there is nothing to conjecture about")
    out = run_bounded(_conjecture_work, x.text, D, max_terms, cf_depth, timeout=timeout)
    if out.value is not None:
        out.value.elapsed_s = round(out.elapsed, 3)
        return out.value
    result = ConjectureResult(False, [], [], None, D, complete=False, elapsed_s=round(out.elapsed, 3))
    for kind, item in out.partial:
        if kind == "relation":
            result.relations.append(item)
        elif kind == "cf":
            result.cf, result.cf_pattern = item
        elif kind == "searched":
            result.searched.append(item)
    result.found = bool(result.relations)
    why = f"timed out after {timeout:g} s" if out.timed_out else out.crashed
    result.reason = f"{why}; the searches listed in 'searched' finished, the rest did not run"
    return result


# ---------------------------------------------------------------------------------------------
# worker side


def _conjecture_work(text: str, D: int, max_terms: int, cf_depth: int, send) -> ConjectureResult:
    from mpmath import mp

    start = time.monotonic()
    x = parse_value(text).truncated(D)
    mp.dps = D + 20
    result = ConjectureResult(False, [], [], None, D)

    def add(rel: Relation) -> None:
        result.relations.append(rel)
        send(("relation", rel))

    def searched(line: str) -> None:
        result.searched.append(line)
        send(("searched", line))

    _simple_cf(x, D, result, add, searched, send)
    _pslq_rich(x, D, max_terms, add, searched)
    _gcf(x, D, cf_depth, add, searched)
    result.found = bool(result.relations)
    if not result.found:
        result.reason = "no significant relation: " + "; ".join(result.searched)
    result.elapsed_s = round(time.monotonic() - start, 3)
    return result


def _simple_cf(x, D, result, add, searched, send) -> None:
    import sympy

    from . import contfrac as C
    from .relations import tidy, verify_candidate

    terms = C.reliable_cf(x)
    result.cf = terms
    pattern = C.find_pattern(terms)
    if pattern is not None:
        result.cf_pattern = C.describe_pattern(terms, pattern)
        periodic = all(d == 0 for _, d in pattern[2])
        if periodic:
            expr = C.periodic_closed_form(terms, pattern)
            k = verify_candidate(expr, x, D) if expr is not None else None
            expr = tidy(expr) if expr is not None else None
            if k is not None and k >= D - GUARD:
                add(Relation("simple_cf", f"{expr} = {result.cf_pattern}", sympy.latex(expr), k))
        else:
            add(Relation("simple_cf", result.cf_pattern, _cf_latex(terms, pattern), D,
                         note=f"pattern holds for all {reliable_terms(len(terms))}; numerically verified, not proved"))
    send(("cf", (result.cf, result.cf_pattern)))
    searched(f"simple_cf: {reliable_terms(len(terms))}, "
             + (f"pattern {result.cf_pattern}" if result.cf_pattern else "no significant pattern"))


def reliable_terms(n: int) -> str:
    """"1 reliable term", "5 reliable terms"."""
    return f"{n} reliable term{'' if n == 1 else 's'}"


def cf_text(terms: list[int]) -> str:
    """A continued fraction as [a0; a1, a2, ...] (at most 20 terms after a0); a lone a0 as [a0]."""
    if len(terms) == 1:
        return f"[{terms[0]}]"
    return f"[{terms[0]}; " + ", ".join(map(str, terms[1:21])) + (", ...]" if len(terms) > 21 else "]")


def _cf_latex(terms, pattern) -> str:
    p, s, progs, _ = pattern
    shown = terms[: s + 2 * p]
    return "[" + str(shown[0]) + "; " + ", ".join(map(str, shown[1:])) + ", \\ldots]"


def _pslq_rich(x, D, max_terms, add, searched) -> None:
    import sympy
    from mpmath import mp

    from . import relations as R

    dps = D + 20
    base = R.default_constants(dps)
    xv = x.mpf()
    one = R.Term(sympy.Integer(1), mp.mpf(1))
    # each entry: (power of x, Term); the vector is x^k * term
    bases = []
    for c in base:
        bases.append([(1, one), (0, one), (0, c), (1, c)])
        bases.append([(1, one), (2, one), (0, one), (0, c), (0, _sq(c)), (1, c)])
        bases.append([(1, one), (0, one), (0, c), (0, _sq(c)), (0, _mul(_sq(c), c))])
    for c1, c2 in itertools.combinations(base, 2):
        bases.append([(1, one), (0, one), (0, c1), (0, c2), (0, _mul(c1, c2))])
        bases.append([(1, one), (0, one), (0, c1), (0, c2), (1, c1), (1, c2)])
        bases.append([(1, one), (0, one), (0, c1), (0, c2), (0, _mul(c1, c2)), (0, _sq(c1)), (0, _sq(c2))])
    for trio in itertools.combinations(base, 3):
        bases.append([(1, one), (0, one)] + [(0, c) for c in trio])
    bases = [b for b in bases if len(b) <= max_terms]
    margin = R.required_margin(len(bases))
    D_eff = D - GUARD
    budget = D_eff - margin
    if budget < 1:
        searched(f"pslq: skipped, {digits_text(D)} are too few for {len(bases)} relation forms "
                 f"(need at least {math.ceil(margin + GUARD + 1)})")
        return
    seen = set()
    for b in bases:
        vec = [xv ** k * t.val for k, t in b]
        allowed = budget - R.spread(vec)
        rel = R.pslq(vec, D_eff, allowed)
        if not rel or all(c == 0 for c, (k, _) in zip(rel, b) if k > 0):
            continue
        cost = R.relation_cost(rel)
        if cost > allowed:
            continue
        coeffs: dict[int, object] = {}
        for c, (k, t) in zip(rel, b):
            coeffs[k] = coeffs.get(k, 0) + sympy.Integer(c) * t.sym
        expr = R.solve_for_x(coeffs, xv)
        if expr is None:
            continue
        k = R.verify_candidate(expr, x, D)  # before tidying: cheap, and rejects almost everything
        if k is None or k < D - GUARD:
            continue
        expr = R.tidy(sympy.radsimp(expr))
        key = str(expr)
        if key in seen:
            continue
        seen.add(key)
        add(Relation("pslq", key, sympy.latex(expr), k,
                     note=f"integer relation {rel} over [{', '.join(_label(k, t) for k, t in b)}]; "
                          "numerically verified, not proved"))
    searched(f"pslq: {len(bases)} relation forms of at most {max_terms} terms over "
             f"[{', '.join(str(t.sym) for t in base)}]")


def _sq(t):
    from .relations import Term

    return Term(t.sym ** 2, t.val ** 2)


def _mul(a, b):
    from .relations import Term

    return Term(a.sym * b.sym, a.val * b.val)


def _label(k: int, t) -> str:
    xs = {0: "", 1: "x", 2: "x^2"}[k]
    s = str(t.sym)
    if s == "1":
        return xs or "1"
    return f"{xs}*{s}" if xs else s


def _gcf(x, D, depth, add, searched) -> None:
    from mpmath import mp

    from . import contfrac as C
    from . import relations as R

    n_frac, n_moeb = C.gcf_search_size()
    margin = R.required_margin(n_frac * n_moeb)
    if D - GUARD - margin < 3:
        searched(f"gcf: skipped, {digits_text(D)} are too few to confirm a match among {n_frac:,} fractions x "
                 f"{n_moeb:,} transforms (need at least {math.ceil(margin + GUARD + 3)})")
        return
    xv = x.mpf()
    hits = []
    for a, b, (p, q, r, s), _g in C.gcf_candidates(float(xv), depth):
        hits.append((sum(map(abs, a)) + sum(map(abs, b)) + abs(p) + abs(q) + abs(r) + abs(s), a, b, (p, q, r, s)))
    hits.sort()
    confirmed = 0
    seen_values = []
    for _, a, b, (p, q, r, s) in hits[:60]:
        if confirmed >= 3:
            break
        with mp.workdps(D + 20):
            g1 = C.gcf_value(a, b, 4 * depth)
            g2 = C.gcf_value(a, b, 8 * depth)
            if g2 == 0 or abs(g1 - g2) > abs(g2) * mp.mpf(10) ** (-(D + 5)):
                continue  # converges too slowly to confirm
            den = s * g2 - q
            if den == 0:
                continue
            xp = (p - r * g2) / den  # G = (p + q x)/(r + s x)  <=>  x = (p - r G)/(s G - q)
        k = R.agreed_digits(xp, x, D)
        if k < D - GUARD:
            continue
        if any(abs(g2 - v) < abs(v) * mp.mpf(10) ** (-D) for v in seen_values):
            continue
        seen_values.append(g2)
        confirmed += 1
        add(_gcf_relation(a, b, (p, q, r, s), k, 4 * depth, 8 * depth))
    searched(f"gcf: {n_frac:,} continued fractions (a, b of degree <= 2) to depth {depth} against {n_moeb:,} "
             f"Moebius transforms of x; {len(hits)} float matches, {confirmed} confirmed at depths "
             f"{4 * depth} and {8 * depth}")


def _gcf_relation(a, b, pqrs, k, d1, d2) -> Relation:
    import sympy

    from .contfrac import poly_text

    p, q, r, s = pqrs
    G = sympy.Symbol("G")
    xexpr = sympy.cancel((p - r * G) / (s * G - q))  # G = (p + q x)/(r + s x)
    A, B = poly_text(a), poly_text(b)

    def an(n):
        return a[0] * n * n + a[1] * n + a[2]

    def bn(n):
        return b[0] * n * n + b[1] * n + b[2]

    latex = (rf"x = {sympy.latex(xexpr)},\quad G = {an(0)} + \cfrac{{{bn(1)}}}{{{an(1)} + "
             rf"\cfrac{{{bn(2)}}}{{{an(2)} + \cfrac{{{bn(3)}}}{{{an(3)} + \ddots}}}}}}")
    text = f"x = {xexpr}, G = a(0) + b(1)/(a(1) + b(2)/(a(2) + ...)) with a(n) = {A}, b(n) = {B}"
    return Relation("gcf", text, latex, k, note=f"matches at depths {d1} and {d2}; numerically verified, not proved")
