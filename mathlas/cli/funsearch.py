"""``mathlas funsearch evaluate|register|status``: the funsearch tool from the command line.

::

    mathlas funsearch evaluate prog.py --problem cap_set --param n=8
    mathlas funsearch register prog.py --problem bin_packing --claimed-score -4.1 --json
    mathlas funsearch status --problem cap_set --param n=8 --top 3 --prompt

stdout is data (the score, or with ``--json`` the whole result); stderr is talk (notes, the
program's own output). Importing this module is light.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from mathlas.progress import Call, current, running


# mathlas.tools.funsearch's limits: --timeout from 1 to 600 wall-clock seconds, CPU seconds the same
# up to 60 (named here, not imported: the tool's module is imported when the command runs)
MAX_TIMEOUT_S = 600
CPU_LIMIT_S = 60


def _say_limit_once(program: str, timeout: float):
    """A progress listener that says, once, as the sandboxed program starts to run, when it will be
    stopped: the only talk during a wait of up to ``--timeout`` seconds."""
    said = False

    def listen(done: float, total: float | None, message: str | None) -> None:
        nonlocal said
        if said:
            return
        said = True
        name = "the program from stdin" if program == "-" else program
        cpu = f" ({CPU_LIMIT_S} s of CPU time)" if timeout > CPU_LIMIT_S else ""
        print(f"mathlas: running {name} in the sandbox; time limit {timeout:g} s{cpu}, "
              f"--timeout S sets it (at most {MAX_TIMEOUT_S})", file=sys.stderr, flush=True)

    return listen


def _forwarding(say, outer: Call):
    """The listener of the sandbox's call: ``say`` (the time limit, once), then the listener of the
    call this command runs in (``mathlas.cli.main``'s progress line on a terminal), which the inner
    ``running`` would otherwise hide."""
    def listen(done: float, total: float | None, message: str | None) -> None:
        if say is not None:
            say(done, total, message)
        if outer.on_progress is not None:
            outer.on_progress(done, total, message)

    return listen


def _param(text: str) -> tuple[str, int]:
    key, sep, value = text.partition("=")
    try:
        if not sep or not key:
            raise ValueError
        return key.strip(), int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected KEY=INTEGER, got {text!r}") from None


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``funsearch`` subcommand to the ``mathlas`` command's subparsers."""
    p = subparsers.add_parser(
        "funsearch", help="score FunSearch programs in a sandbox; keep the best (MAP-Elites)",
        description="The harness half of FunSearch: you write programs defining priority(...); mathlas runs "
                    "them sandboxed and computes their score itself.")
    sub = p.add_subparsers(dest="funsearch_action", required=True, metavar="ACTION")
    for action, text in (("evaluate", "score a program"), ("register", "score a program and file it in the archive"),
                         ("status", "best programs and the few-shot prompt for the next version")):
        a = sub.add_parser(action, help=text, description=text)
        if action != "status":
            a.add_argument("program", help="Python source file (UTF-8) defining priority(...), or - for stdin")
        a.add_argument("--problem", default="cap_set", choices=("cap_set", "bin_packing"))
        a.add_argument("--param", action="append", type=_param, default=[], metavar="KEY=N",
                       help="problem parameter, e.g. n=8 (cap_set) or n_items=500 (bin_packing); repeatable")
        if action == "register":
            a.add_argument("--claimed-score", type=float, default=None,
                           help="the score you expect; never trusted, only compared with the measured one")
        if action == "status":
            a.add_argument("--top", type=int, default=5, help="elites to show, 1..50 (default 5)")
            a.add_argument("--prompt", action="store_true", help="print the few-shot prompt for the next version")
        else:
            a.add_argument("--timeout", type=float, default=60.0,
                           help=f"wall-clock seconds, 1..600 (default 60); CPU seconds: the same, at most {CPU_LIMIT_S}")
            a.add_argument("-q", "--quiet", action="store_true", help="do not say the time limit on stderr")
        a.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    """Run one funsearch action; MathlasErrors propagate to ``mathlas.cli.main`` (exit 2 / 1)."""
    from mathlas.cli.user_file import read_text
    from mathlas.tools.funsearch import MAX_SOURCE, funsearch

    source = None
    if getattr(args, "program", None):
        source = read_text(args.program, MAX_SOURCE, "the program")
    params = dict(args.param) or None
    timeout = getattr(args, "timeout", 60.0)
    say = None if getattr(args, "quiet", True) else _say_limit_once(args.program, timeout)
    with running(Call(on_progress=_forwarding(say, current()))):
        result = funsearch(args.funsearch_action, args.problem, source, params,
                           claimed_score=getattr(args, "claimed_score", None), top_k=getattr(args, "top", 5),
                           timeout_s=timeout)
    if args.json:
        print(json.dumps(dataclasses.asdict(result), ensure_ascii=False, indent=1))
    else:
        ev = result.evaluation
        if ev is not None:
            if ev.output.strip():
                print(f"[program output]\n{ev.output.rstrip()}", file=sys.stderr)
            if ev.score is None:
                more = f"; --timeout S gives it longer (at most {MAX_TIMEOUT_S} s)" \
                    if ev.status == "timeout" and timeout < MAX_TIMEOUT_S else ""
                print(f"{ev.status}: {ev.error}{more}")
            else:
                print(f"score {ev.score:g}  cell {ev.cell}  ({ev.wall_s:.2f} s; sandbox: {', '.join(ev.isolation)})")
        if result.registered and result.registered.get("stored"):
            print(_registered_line(result))
        if args.funsearch_action == "status":
            print(f"{result.programs} programs, {result.cells} cells  ({result.database})")
            for e in result.best:
                print(f"{e.score:>12g}  {e.cell:<12} {e.lines:>4} lines  {e.program_hash}")
            if args.prompt and result.prompt:
                print(result.prompt)
    if result.note:
        print(f"mathlas: {result.note}", file=sys.stderr)
    ev = result.evaluation
    return 1 if ev is not None and ev.score is None else 0


def _registered_line(result) -> str:
    """What ``register`` did to the archive, in words: new best, new elite of its cell, or only stored."""
    r = result.registered
    counts = f"{result.programs} program{'s' * (result.programs != 1)} in {result.cells} cell{'s' * (result.cells != 1)}"
    if r["new_best"]:
        what = f"the archive's new best, elite of cell {r['cell']}"
    elif r["new_elite"]:
        what = (f"the new elite of cell {r['cell']}" + (f", replacing {r['replaced']}" if r["replaced"] else "")
                + (f"; the best is still {result.best[0].score:g}" if result.best else ""))
    else:
        what = f"stored, not an elite: cell {r['cell']} keeps its elite (a higher score, or as high and shorter)"
    return f"registered: {what}; {counts}"

