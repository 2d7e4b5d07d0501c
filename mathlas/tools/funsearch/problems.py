"""The problems FunSearch programs are scored on. The parent does all the scoring.

A program only answers calls to its ``priority`` function on inputs this module chooses; the
object being scored (the cap set, the packing) is built here, outside the sandbox, and checked
here again by a validator that shares no code with the construction.

* ``cap_set`` (param ``n``, 1..8): the program defines ``priority(el, n) -> float`` for a point
  ``el`` of F_3^n (a tuple of 0/1/2); the harness adds points greedily by decreasing priority
  whenever no line is completed, exactly as FunSearch's cap set skeleton. Alternatively it defines
  ``cap_set(n)`` returning a list of points, which is validated. Score: the size of the cap set.
* ``bin_packing`` (params ``n_items``, ``n_instances``, ``capacity``, ``min_size``, ``max_size``,
  ``seed``): online bin packing on deterministic seeded instances shaped like OR-Library's
  ``binpack1`` "u" class (capacity 150, integer sizes uniform in [20, 100]). The program defines
  ``priority(item, bins) -> scores`` (``bins``: remaining capacities of the bins that can take the
  item, a numpy array when numpy is there, the last entry a fresh empty bin); the harness feeds the
  items one at a time (the program never sees a future item) and puts each in the bin with the
  highest score. Score: ``-100 * mean((bins_used - L2) / L2)``, minus the mean excess percentage
  over the Martello–Toth L2 lower bound (0 is optimal, higher is better).
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from mathlas.checks import integer
from mathlas.errors import UsageError
from mathlas.tools.funsearch.sandbox import Limits, Sandbox, SandboxFailure


@dataclass
class Outcome:
    """What the harness measured: the score (None when the program failed), details, behaviour."""

    score: float | None
    status: str                      # ok | invalid | error | timeout | killed | protocol_error
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    statistic: float = 0.0           # the problem's behaviour statistic in [0, 1]
    isolation: list[str] = field(default_factory=list)
    output: str = ""
    wall_s: float = 0.0


# ------------------------------------------------------------------------------ cap set

def _points(n: int) -> list[tuple[int, ...]]:
    pts: list[tuple[int, ...]] = [()]
    for _ in range(n):
        pts = [p + (d,) for p in pts for d in (0, 1, 2)]
    return pts


def _third(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The point completing a line with a and b: a + b + c = 0 (mod 3) in every coordinate."""
    return tuple((-x - y) % 3 for x, y in zip(a, b))


def greedy_cap_set(points: list[tuple[int, ...]], priorities: list[float]) -> list[tuple[int, ...]]:
    """FunSearch's construction: points in decreasing priority, each kept unless it completes a line."""
    order = sorted(range(len(points)), key=lambda i: -priorities[i])  # stable: ties keep index order
    cap: list[tuple[int, ...]] = []
    blocked: set[tuple[int, ...]] = set()
    for i in order:
        p = points[i]
        if p in blocked:
            continue
        for q in cap:
            blocked.add(_third(p, q))
        blocked.add(p)
        cap.append(p)
    return cap


def check_cap_set(points: list[Any], n: int) -> str | None:
    """None when ``points`` is a cap set in F_3^n, else why not.

    Independent of the construction: every point must be a length-n vector over {0,1,2}, all
    distinct, and for every pair {a, b} the unique c with a + b + c = 0 (mod 3) must not be in the
    set. Every three-term line {a, b, c} contains such a pair, so this checks every triple.
    """
    seen: set[tuple[int, ...]] = set()
    for p in points:
        if (not isinstance(p, (list, tuple)) or len(p) != n
                or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 2 for x in p)):
            return f"{p!r} is not a point of F_3^{n}"
        t = tuple(p)
        if t in seen:
            return f"{t} occurs twice"
        seen.add(t)
    pts = sorted(seen)
    for i, a in enumerate(pts):
        for b in pts[i + 1:]:
            c = tuple((-x - y) % 3 for x, y in zip(a, b))
            if c in seen:
                return f"{a}, {b}, {c} lie on a line (sum to 0 mod 3)"
    return None


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)  # inf allowed: a score


def evaluate_cap_set(box: Sandbox, params: dict[str, Any]) -> Outcome:
    n = params["n"]
    if "priority" in box.names:
        points = _points(n)
        prios = box.map("priority", [[list(p), n] for p in points])
        bad = next((v for v in prios if not _number(v)), None)
        if bad is not None or len(prios) != len(points):
            return Outcome(None, "invalid", f"priority returned {bad!r}, not a number")
        cap = greedy_cap_set(points, prios)
        levels = len(set(prios))
        statistic = min(1.0, math.log(levels, 3 ** n) if levels > 1 else 0.0)
        mode = "greedy from priority(el, n)"
    elif "cap_set" in box.names:
        cap = box.call("cap_set", n)
        if not isinstance(cap, list):
            return Outcome(None, "invalid", "cap_set(n) must return a list of points")
        statistic, mode = 0.0, "returned by cap_set(n)"
    else:
        return Outcome(None, "invalid", "the program defines neither priority(el, n) nor cap_set(n)")
    why = check_cap_set(cap, n)
    if why:
        return Outcome(None, "invalid", f"not a cap set: {why}")
    return Outcome(float(len(cap)), "ok", details={"n": n, "size": len(cap), "construction": mode,
                                                    "cap_set": [list(p) for p in cap]}, statistic=statistic)


# ------------------------------------------------------------------------------ bin packing

def bin_instances(params: dict[str, Any]) -> list[list[int]]:
    """Deterministic instances: the same params give the same items on every machine."""
    out = []
    for i in range(params["n_instances"]):
        rng = random.Random(f"mathlas-binpack:{params['seed']}:{i}")
        out.append([rng.randint(params["min_size"], params["max_size"]) for _ in range(params["n_items"])])
    return out


def l2_lower_bound(items: list[int], capacity: int) -> int:
    """Martello and Toth's L2 lower bound on the number of bins (at least L1 = ceil(sum / C))."""
    best = math.ceil(sum(items) / capacity)
    candidates = sorted({w for w in items if w <= capacity / 2} | {0})
    for alpha in candidates:
        j1 = [w for w in items if w > capacity - alpha]
        j2 = [w for w in items if capacity / 2 < w <= capacity - alpha]
        j3 = [w for w in items if alpha <= w <= capacity / 2]
        spare = len(j2) * capacity - sum(j2)
        bound = len(j1) + len(j2) + max(0, math.ceil((sum(j3) - spare) / capacity))
        best = max(best, bound)
    return best


def check_packing(items: list[int], assignment: list[int], capacity: int) -> int:
    """The number of bins of a packing, after checking that no bin overflows."""
    loads: dict[int, int] = {}
    for w, b in zip(items, assignment, strict=True):
        loads[b] = loads.get(b, 0) + w
        if loads[b] > capacity:
            raise ValueError(f"bin {b} overflows")
    return len(loads)


def evaluate_bin_packing(box: Sandbox, params: dict[str, Any]) -> Outcome:
    if "priority" not in box.names:
        return Outcome(None, "invalid", "the program defines no priority(item, bins)")
    cap = params["capacity"]
    used, bounds, best_fit_like, placed = [], [], 0, 0
    for items in bin_instances(params):
        remaining: list[int] = []
        assignment = []
        for item in items:
            fits = [i for i, r in enumerate(remaining) if r >= item]
            offered = [remaining[i] for i in fits] + [cap]
            scores = box.call("priority", item, offered, arrays=(1,))
            if not isinstance(scores, list) or len(scores) != len(offered) or not all(_number(s) for s in scores):
                return Outcome(None, "invalid", f"priority must return {len(offered)} numbers (one per bin), "
                                                f"got {str(scores)[:200]}")
            k = max(range(len(scores)), key=lambda j: (scores[j], -j))
            if offered[k] == min(offered):
                best_fit_like += 1
            placed += 1
            if k == len(fits):
                remaining.append(cap - item)
                assignment.append(len(remaining) - 1)
            else:
                remaining[fits[k]] -= item
                assignment.append(fits[k])
        used.append(check_packing(items, assignment, cap))
        bounds.append(l2_lower_bound(items, cap))
    excess = [100.0 * (u - b) / b for u, b in zip(used, bounds)]
    score = -sum(excess) / len(excess)
    return Outcome(round(score, 6), "ok", details={"bins_used": used, "l2_lower_bounds": bounds,
                                                   "excess_percent": [round(e, 4) for e in excess]},
                   statistic=best_fit_like / max(placed, 1))


# ------------------------------------------------------------------------------ the registry

@dataclass(frozen=True)
class Problem:
    name: str
    defaults: dict[str, Any]
    bounds: dict[str, tuple[int, int]]
    statistic: str                   # what the behaviour statistic measures
    seed_program: str                # a simple baseline, the few-shot context of an empty database
    signature: str                   # the function the agent writes
    evaluate: Callable[[Sandbox, dict[str, Any]], Outcome]
    description: str


PROBLEMS: dict[str, Problem] = {
    "cap_set": Problem(
        name="cap_set", defaults={"n": 8}, bounds={"n": (1, 8)},
        statistic="distinct priority levels (log base 3^n)",
        seed_program='def priority(el, n):\n    """Returns the priority with which we want to add `el` to the cap set."""\n    return 0.0\n',
        signature="def priority(el: tuple[int, ...], n: int) -> float:",
        evaluate=evaluate_cap_set,
        description="Find large cap sets in F_3^n (no three distinct points sum to 0 mod 3). The harness "
                    "adds the points of F_3^n greedily by decreasing priority(el, n)."),
    "bin_packing": Problem(
        name="bin_packing",
        defaults={"n_items": 250, "n_instances": 5, "capacity": 150, "min_size": 20, "max_size": 100, "seed": 0},
        bounds={"n_items": (10, 5000), "n_instances": (1, 20), "capacity": (2, 10**6), "min_size": (1, 10**6),
                "max_size": (1, 10**6), "seed": (0, 2**31)},
        statistic="share of items put in the fullest feasible bin (best-fit agreement)",
        seed_program=('import numpy as np\n\n'
                      'def priority(item, bins):\n    """Returns a priority score for each bin; the item goes in the highest."""\n'
                      '    return -(bins - item)\n'),
        signature="def priority(item: float, bins: np.ndarray) -> np.ndarray:",
        evaluate=evaluate_bin_packing,
        description="Online bin packing: items arrive one at a time and go in the open bin (or a new "
                    "bin, the last entry of `bins`) with the highest priority; fewer bins is better."),
}


def resolve(problem: str, params: dict[str, Any] | None) -> tuple[Problem, dict[str, Any]]:
    """The problem and its full parameters (defaults filled in), or a UsageError saying what is wrong."""
    if problem not in PROBLEMS:
        raise UsageError(f"unknown problem {problem!r}; known: {', '.join(PROBLEMS)}")
    spec = PROBLEMS[problem]
    if params is not None and not isinstance(params, dict):
        raise UsageError(f"params must be an object, got {params!r}")
    full = dict(spec.defaults)
    for key, value in (params or {}).items():
        if key not in spec.bounds:
            raise UsageError(f"unknown parameter {key!r} for {problem}; known: {', '.join(spec.bounds)}")
        lo, hi = spec.bounds[key]
        integer(value, f"{problem} parameter {key}", lo, hi)
        full[key] = value
    if problem == "bin_packing" and not full["min_size"] <= full["max_size"] <= full["capacity"]:
        raise UsageError("bin_packing needs min_size <= max_size <= capacity")
    return spec, full


def run(problem: str, params: dict[str, Any], source: str, limits: Limits) -> Outcome:
    """Evaluate ``source`` on a resolved problem: sandbox it, drive it, score it here."""
    spec = PROBLEMS[problem]
    box = Sandbox(source, limits)
    try:
        with box:
            out = spec.evaluate(box, params)
            out.isolation = box.isolation
    except SandboxFailure as e:
        out = Outcome(None, e.status, str(e), isolation=box.isolation)
    out.output = box.diagnostics()
    out.wall_s = round(box.wall_s, 3)
    return out
