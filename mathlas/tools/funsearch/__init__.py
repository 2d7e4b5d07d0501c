"""``funsearch``: the harness half of FunSearch. The agent writes programs; mathlas runs and scores them.

* ``evaluate`` runs a candidate program in a sandbox (``sandbox.py``) and scores it *here*, from
  the answers of its ``priority`` function on inputs the harness chooses (``problems.py``); nothing
  the program prints is read as a result.
* ``register`` evaluates again (a claimed score is ignored, only reported beside the real one) and
  files the program in a MAP-Elites archive on disk (``database.py``).
* ``status`` returns the best programs and the few-shot context for the next variant, built as
  FunSearch builds its prompts: the two best elites of different cells, worst first, renamed
  ``priority_v0`` and ``priority_v1``, followed by the header of ``priority_v2`` to complete.

Importing this package loads nothing heavy; the sandbox starts a separate interpreter per call.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from mathlas.checks import integer, number
from mathlas.errors import UsageError

Action = Literal["evaluate", "register", "status"]
MAX_SOURCE = 100_000


@dataclass
class Evaluation:
    """The harness's measurement of one program. ``score`` is null when the program failed
    (``status``: invalid, error, timeout, killed, protocol_error, with ``error`` saying why)."""

    program_hash: str
    score: float | None
    status: str
    error: str | None
    cell: str
    behaviour: dict[str, Any]
    details: dict[str, Any]
    output: str            # the tail of what the program printed: shown, never parsed
    isolation: list[str]   # the sandbox layers that were active
    wall_s: float


@dataclass
class Elite:
    """A program kept by the archive: the best one of its behaviour cell."""

    program_hash: str
    score: float
    cell: str
    lines: int
    registered_at: str
    source: str


@dataclass
class FunSearchResult:
    """The answer to every funsearch action; fields that do not apply to an action are null or empty."""

    action: str
    problem: str
    params: dict[str, Any]
    evaluation: Evaluation | None = None
    registered: dict[str, Any] | None = None
    best: list[Elite] = field(default_factory=list)
    programs: int = 0
    cells: int = 0
    prompt: str | None = None
    database: str = ""
    other_archives: list[dict[str, Any]] = field(default_factory=list)  # status of an empty archive: the
    # archives of this problem with programs, {params, programs} each (another n, another instance set)
    note: str = ""


def _version_source(source: str, i: int) -> str:
    return re.sub(r"\bpriority\b", f"priority_v{i}", source.strip())


def _prompt(spec, elites: list[dict[str, Any]]) -> str:
    """FunSearch's prompt: the problem, then earlier versions worst-to-best, then the next header."""
    chosen = sorted(elites, key=lambda e: -e["score"])[:2][::-1] or [{"source": spec.seed_program}]
    parts = [f'"""{spec.description}"""', ""]
    for i, e in enumerate(chosen):
        parts += [_version_source(e["source"], i), ""]
    v = len(chosen)
    header = spec.signature.replace("def priority(", f"def priority_v{v}(")
    parts += [header, f'    """Improved version of `priority_v{v - 1}`."""', ""]
    return "\n".join(parts)


def _check_program(program: Any) -> str:
    if not isinstance(program, str) or not program.strip():
        raise UsageError("program is required for evaluate and register: Python source defining priority(...)")
    if len(program) > MAX_SOURCE:
        raise UsageError(f"program is {len(program)} characters; the limit is {MAX_SOURCE}")
    return program


def funsearch(action: Action, problem: str = "cap_set", program: str | None = None,
              params: dict[str, Any] | None = None, claimed_score: float | None = None,
              top_k: int = 5, timeout_s: float = 60.0) -> FunSearchResult:
    """FunSearch's harness: you write `priority`, mathlas runs it sandboxed (no network; CPU, memory and
    time limits; stdlib and numpy) and scores it.

    Args:
        action: evaluate scores; register also files it in a MAP-Elites archive; status: the best
            programs and the next version's prompt.
        problem: cap_set: priority(el, n) -> float, el in F_3^n; score: size of the greedy cap set. bin_packing: priority(item, bins) -> a score per bin; score: minus the mean % of bins over the L2 bound.
        program: Python source (evaluate, register).
        params: integers: cap_set {n: 1..8, default 8}; bin_packing {n_items, n_instances, capacity, min_size, max_size, seed}.
        claimed_score: register: compared with the measured score, never trusted.
        top_k: status: how many elites.
        timeout_s: wall-clock seconds (CPU: the same, at most 60).
    """
    from mathlas.tools.funsearch.database import Database, cell_of, program_hash
    from mathlas.tools.funsearch.problems import resolve, run
    from mathlas.tools.funsearch.sandbox import Limits

    if action not in ("evaluate", "register", "status"):
        raise UsageError(f"action must be evaluate, register or status, got {action!r}")
    spec, full = resolve(problem, params)
    integer(top_k, "top_k", 1, 50)
    number(timeout_s, "timeout_s (seconds)", minimum=1, maximum=600)
    if claimed_score is not None:
        number(claimed_score, "claimed_score")
    db = Database.open(problem, full)
    result = FunSearchResult(action=action, problem=problem, params=full, database=str(db.root))

    if action in ("evaluate", "register"):
        source = _check_program(program)
        limits = Limits(cpu_s=int(min(60, max(1, timeout_s))), wall_s=float(timeout_s))
        out = run(problem, full, source, limits)
        key, behaviour = cell_of(source, out.statistic)
        result.evaluation = Evaluation(program_hash=program_hash(source), score=out.score, status=out.status,
                                       error=out.error, cell=key, behaviour=behaviour, details=out.details,
                                       output=out.output, isolation=out.isolation, wall_s=out.wall_s)
        if action == "register":
            if out.score is None:
                result.registered = {"stored": False, "claimed_score": claimed_score}
                result.note = f"not registered: the program {out.status}: {out.error}"
            else:
                change = db.add(source, out.score, out.statistic, {k: v for k, v in out.details.items() if k != "cap_set"})
                result.registered = {"stored": True, "claimed_score": claimed_score, **change}
                if claimed_score is not None and not math.isclose(claimed_score, out.score, abs_tol=1e-9):
                    result.note = f"claimed score {claimed_score:g} ignored: the harness measured {out.score:g}"
    if action == "evaluate":
        return result
    state = db.state()
    elites = list(state["cells"].values())
    result.programs = int(state.get("programs", 0))
    result.cells = len(elites)
    result.best = [Elite(program_hash=e["hash"], score=e["score"], cell=e["cell"], lines=e["lines"],
                         registered_at=e["registered_at"], source=e["source"])
                   for e in sorted(elites, key=lambda e: (-e["score"], len(e["source"])))[:top_k]]
    if action == "status":
        result.prompt = _prompt(spec, elites)
        if not elites:
            others = result.other_archives = Database.others(problem, full)
            # the parameters that tell the archives apart; with no other archive, those not at their default
            differ = {k for o in others for k in full if o["params"].get(k) != full[k]} if others else \
                {k for k in full if full[k] != spec.defaults.get(k)}
            # the one note for every surface: the CLI prints it as it is
            listed = "; ".join(f"{_shown(o['params'], differ)} ({o['programs']} program{'s' * (o['programs'] != 1)})"
                               for o in others)
            then = (f"archives with programs exist for {listed} (other_archives): status with their params shows "
                    "them") if others else "register files the first"
            result.note = (f"no programs for {problem} {_shown(full, differ)} yet: the prompt starts from the "
                           f"baseline program; {then}")
    return result


def _shown(params: dict[str, Any], keys: set[str]) -> str:
    """``n=4``: an archive's parameters, only ``keys`` (those that tell the archives apart) when any."""
    return ", ".join(f"{k}={v}" for k, v in params.items() if k in keys or not keys)
