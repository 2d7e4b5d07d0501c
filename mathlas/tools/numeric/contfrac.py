"""Continued fractions: the reliable simple CF of a decimal, its patterns, and a GCF search.

Simple CF: the terms shared by the expansions of ``x - ulp`` and ``x + ulp`` (exact rationals), so every
reported term holds for any number that rounds or truncates to the input. A pattern (eventually
periodic, or each position of a period an arithmetic progression, as in e = [2; 1, 2, 1, 1, 4, 1, ...])
counts only when the terms it predicts beyond those that fix it are improbable by chance: the sum of
-log10 of their Gauss-Kuzmin probabilities must exceed ``log10(2 * patterns tried) + CONFIDENCE``.

GCF search (Ramanujan Machine style): every x = a(0) + b(1)/(a(1) + b(2)/(a(2) + ...)) with small
polynomials a(n), b(n), evaluated in float64 with numpy, is matched against the Moebius transforms
(p + q x)/(r + s x) of the input with small integers; each match is recomputed with mpmath at 4 and 8
times the search depth and more digits than given, and kept only when both depths agree beyond the
input's digits and the transform reproduces every given digit.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

from .relations import CONFIDENCE

MAX_CF_TERMS = 2000
# past 10^±MAX_CF_EXPONENT, the exact rational of a decimal takes unbounded time (1e-999999999)
MAX_CF_EXPONENT = 1000


def _cf(q: Fraction, limit: int) -> list[int]:
    out = []
    for _ in range(limit):
        a = math.floor(q)
        out.append(a)
        q -= a
        if q == 0:
            break
        q = 1 / q
    return out


def reliable_cf(x, limit: int = MAX_CF_TERMS) -> list[int]:
    """Simple CF terms valid for every number within one unit of the last digit of ``x``.

    Read from the digits alone where ``x`` is past 10^±``MAX_CF_EXPONENT``: above, a unit of its last
    digit is 1 or more, so not even the integer part is known (no term); below, the terms before the
    first past 10^MAX_CF_EXPONENT: [0] for a positive number, [-1, 1] for a negative one (-t =
    -1 + 1/(1 + t/(1 - t)))."""
    if not x.is_zero and x.lead - x.digits >= 0:
        return []
    if not x.is_zero and x.lead < -MAX_CF_EXPONENT:
        return [-1, 1] if x.negative else [0]
    v, ulp = x.fraction(), x.ulp()
    lo, hi = _cf(v - ulp, limit), _cf(v + ulp, limit)
    out = []
    for a, b in zip(lo, hi):
        if a != b:
            break
        out.append(a)
    # the last shared term can still differ for numbers strictly inside the interval only if an
    # expansion ended there; drop it when either expansion stopped at it
    if out and (len(out) == len(lo) or len(out) == len(hi)):
        out.pop()
    return out


def _gk(a: int) -> float:
    """-log10 of the Gauss-Kuzmin probability of the partial quotient a."""
    return -math.log10(-math.log2(1 - 1 / (a + 1) ** 2))


def find_pattern(terms: list[int], max_period: int = 12, max_offset: int = 12):
    """The simplest (period, offset, [(first, step) per position]) pattern the terms support, or None.

    Term 0 (the integer part) may sit in the offset. Returns (period, offset, progressions, evidence).
    """
    m = len(terms)
    tried = 0
    best = None
    hypotheses = 2 * max_period * (max_offset + 1)
    need = math.log10(2 * hypotheses) + CONFIDENCE
    for p in range(1, max_period + 1):
        for s in range(0, max_offset + 1):
            if m - s < 2 * p + 2:
                continue
            tried += 1
            progs = []
            ok = True
            for r in range(p):
                seq = terms[s + r::p]
                if len(seq) < 2:
                    ok = False
                    break
                d = seq[1] - seq[0]
                if d < 0 or any(seq[k] != seq[0] + k * d for k in range(len(seq))):
                    ok = False
                    break
                progs.append((seq[0], d))
            if not ok:
                continue
            periodic = all(d == 0 for _, d in progs)
            fixed = s + (p if periodic else 2 * p)
            evidence = sum(_gk(t) for t in terms[fixed:] if t > 0)
            if evidence >= need:
                best = (p, s, progs, evidence)
                return best
    return None


def describe_pattern(terms: list[int], pattern) -> str:
    """Human-readable pattern: [1; (2) repeating] or [2; (1, 2k, 1) for k = 1, 2, 3, ...]."""
    p, s, progs, _ = pattern
    head = [str(t) for t in terms[:s]]
    periodic = all(d == 0 for _, d in progs)

    def item(first, d):
        if d == 0:
            return str(first)
        c = first - d
        return f"{d}k" + (f" + {c}" if c > 0 else f" - {-c}" if c < 0 else "") if d != 1 else \
            "k" + (f" + {c}" if c > 0 else f" - {-c}" if c < 0 else "")

    body = ", ".join(item(f, d) for f, d in progs)
    tail = f"({body}) repeating" if periodic else f"({body}) for k = 1, 2, 3, ..."
    if s == 0:
        return f"[{tail}]"
    return f"[{head[0]}; " + ", ".join(head[1:] + [tail]) + "]"


def periodic_closed_form(terms: list[int], pattern):
    """The quadratic irrational with this eventually periodic CF, as a sympy expression."""
    import sympy

    p, s, progs, _ = pattern
    period = [f for f, _ in progs]
    y = sympy.Symbol("y", positive=True)
    expr = y
    for a in reversed(period):
        expr = a + 1 / expr
    # y = [period; y]  ->  y = expr(y)
    sols = [r for r in sympy.solve(sympy.Eq(y, expr), y) if r.is_positive]
    if not sols:
        return None
    val = sols[0]
    for a in reversed(terms[:s]):
        val = a + 1 / val
    return sympy.radsimp(sympy.simplify(val))


# ---------------------------------------------------------------------------------------------
# generalized continued fractions


def _polys():
    a_list = [(a2, a1, a0) for a2 in (0, 1) for a1 in range(0, 4) for a0 in range(-2, 5)
              if (a2, a1) != (0, 0) or a0 > 0]
    a_list = [a for a in a_list if all(a[0] * n * n + a[1] * n + a[2] > 0 for n in range(1, 4))]
    b_list = []
    for b2, b1, b0 in itertools.product(range(-2, 3), range(-3, 4), range(-3, 4)):
        if (b2, b1, b0) == (0, 0, 0):
            continue
        if any(b2 * n * n + b1 * n + b0 == 0 for n in range(1, 50)):
            continue
        b_list.append((b2, b1, b0))
    return a_list, b_list


def _moebius_set(xf: float, R: int = 3):
    """Values (p + q x)/(r + s x) for small integers, one (the simplest) per distinct value."""
    import numpy as np

    best: dict[float, tuple] = {}
    rng = range(-R, R + 1)
    for p, q, r, s in sorted(itertools.product(rng, rng, rng, rng), key=lambda c: sum(map(abs, c))):
        if q * r - p * s == 0:  # degenerate: constant in x
            continue
        den = r + s * xf
        if den == 0:
            continue
        v = (p + q * xf) / den
        best.setdefault(round(v, 11), (v, (p, q, r, s)))
    vals = [v for v, _ in best.values()]
    coefs = [c for _, c in best.values()]
    return np.array(vals), coefs


def gcf_candidates(xf: float, depth: int):
    """Float64 search: yield (a, b, (p, q, r, s), G) with G = (p + q x)/(r + s x) to ~1e-10."""
    import numpy as np

    a_list, b_list = _polys()
    A = np.array([a for a in a_list for _ in b_list], dtype=np.float64)
    B = np.array([b for _ in a_list for b in b_list], dtype=np.float64)
    n_total = len(A)
    with np.errstate(all="ignore"):
        # convergents p_n/q_n of a(0) + b(1)/(a(1) + ...): p_{-1}=1, q_{-1}=0, p_0=a(0), q_0=1
        a0 = A[:, 2]
        p_prev, q_prev = np.ones(n_total), np.zeros(n_total)
        p_cur, q_cur = a0.copy(), np.ones(n_total)
        half = None
        for n in range(1, depth + 1):
            an = A[:, 0] * n * n + A[:, 1] * n + A[:, 2]
            bn = B[:, 0] * n * n + B[:, 1] * n + B[:, 2]
            p_new = an * p_cur + bn * p_prev
            q_new = an * q_cur + bn * q_prev
            scale = np.maximum(np.abs(p_new), np.abs(q_new))
            scale[scale == 0] = 1
            p_prev, q_prev = p_cur / scale, q_cur / scale
            p_cur, q_cur = p_new / scale, q_new / scale
            if n == depth // 2:
                half = p_cur / q_cur
        G = p_cur / q_cur
        conv = np.isfinite(G) & np.isfinite(half) & (np.abs(G - half) <= 1e-11 * np.maximum(1, np.abs(G)))
    vals, coefs = _moebius_set(xf)
    order = np.argsort(vals)
    sv = vals[order]
    idx = np.nonzero(conv)[0]
    g = G[idx]
    pos = np.clip(np.searchsorted(sv, g), 1, len(sv) - 1)
    for j, gi, pj in zip(idx, g, pos):
        for k in (pj - 1, pj):
            if abs(sv[k] - gi) <= 1e-9 * max(1.0, abs(gi)):
                yield (tuple(int(c) for c in A[j]), tuple(int(c) for c in B[j]), coefs[order[k]], float(gi))


def moebius_count(R: int = 3) -> int:
    """How many distinct transforms (p + q x)/(r + s x) with |p|, |q|, |r|, |s| <= R there are: 1,008 for R = 3.

    Two coefficient vectors give the same function of x exactly when they are proportional, so each
    function is one primitive vector (gcd 1) and its negative. At a generic irrational x the functions
    take that many distinct values; at a special x some coincide (at 0.5 only 111 are distinct, at
    sqrt 2 628), because x is then a fixed point of a small integer Moebius map.
    """
    rng = range(-R, R + 1)
    primitive = sum(1 for p, q, r, s in itertools.product(rng, rng, rng, rng)
                    if q * r - p * s != 0 and math.gcd(p, q, r, s) == 1)
    return primitive // 2


def gcf_search_size() -> tuple[int, int]:
    """(fractions, transforms) the float search compares; their product is the hypothesis count."""
    # The count bounds the chance that a number with no relation matches some pair. Such a number is
    # generic: all ``moebius_count()`` transforms take distinct values there, each a separate chance.
    # Counting the values at the given x would let a special input (a rational, a quadratic irrational)
    # lower its own bar, and counting them at one fixed x (this once used 0.5: 111) undercounts the
    # search everywhere else; the function count is the most the search tries at any x.
    a_list, b_list = _polys()
    return len(a_list) * len(b_list), moebius_count()


def gcf_value(a, b, depth: int):
    """mpmath value of a(0) + K_{n=1}^{depth} b(n)/a(n) at the current precision (backward recurrence)."""
    from mpmath import mp

    def poly(c, n):
        return c[0] * n * n + c[1] * n + c[2]

    v = mp.mpf(0)
    for n in range(depth, 0, -1):
        v = poly(b, n) / (poly(a, n) + v)
    return poly(a, 0) + v


def poly_text(c, var: str = "n") -> str:
    """2n^2 + 3n - 1 style text for (c2, c1, c0)."""
    parts = []
    for coef, powr in ((c[0], 2), (c[1], 1), (c[2], 0)):
        if coef == 0:
            continue
        mon = "" if powr == 0 else (var if powr == 1 else f"{var}^2")
        mag = abs(coef)
        body = f"{mag}{mon}" if (mag != 1 or not mon) else mon
        parts.append(("-" if coef < 0 else "+", body))
    if not parts:
        return "0"
    out = ("-" if parts[0][0] == "-" else "") + parts[0][1]
    for sign, body in parts[1:]:
        out += f" {sign} {body}"
    return out
