"""funsearch: harness-side scoring, the sandbox against hostile programs, the MAP-Elites archive.

Hostile programs get small limits (2 CPU seconds, a few wall seconds) so the file stays fast on a
shared 2-core machine.
"""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from mathlas.errors import UsageError
from mathlas.tools.funsearch import funsearch
from mathlas.tools.funsearch.database import Database
from mathlas.tools.funsearch.problems import (bin_instances, check_cap_set, greedy_cap_set, l2_lower_bound,
                                              _points)

CAP_SMALL = {"n": 4}
BIN_SMALL = {"n_items": 60, "n_instances": 2}
BEST_FIT = "def priority(item, bins):\n    return [-(b - item) for b in bins]\n"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def evaluate(program: str, problem: str = "cap_set", params=None, timeout_s: float = 4):
    return funsearch("evaluate", problem, textwrap.dedent(program), params or (CAP_SMALL if problem == "cap_set" else BIN_SMALL),
                     timeout_s=timeout_s).evaluation


def honest_cap(program: str, n: int = 4) -> int:
    """The cap set size the harness should measure, computed here in the test process."""
    ns: dict = {}
    exec(textwrap.dedent(program), ns)
    pts = _points(n)
    return len(greedy_cap_set(pts, [ns["priority"](p, n) for p in pts]))


# ------------------------------------------------------------------------------ validators

def _brute_force_cap(points, n) -> bool:
    pts = [tuple(p) for p in points]
    if len(set(pts)) != len(pts):
        return False
    return not any(all((a[i] + b[i] + c[i]) % 3 == 0 for i in range(n)) for a, b, c in itertools.combinations(pts, 3))


def test_cap_set_checker_agrees_with_every_triple():
    import random

    rng = random.Random(7)
    for n in (2, 3, 4):
        pts = _points(n)
        for _ in range(60):
            sample = rng.sample(pts, rng.randint(1, min(12, len(pts))))
            assert (check_cap_set([list(p) for p in sample], n) is None) == _brute_force_cap(sample, n)
    assert check_cap_set([[0, 0], [1, 1], [2, 2]], 2) is not None      # a line
    assert check_cap_set([[0, 0], [0, 0]], 2) is not None              # a repeated point
    assert check_cap_set([[0, 3]], 2) is not None                      # not in F_3^2
    assert check_cap_set([[True, 0]], 2) is not None


def test_greedy_cap_sets_are_caps_of_known_sizes():
    for n in (1, 2, 3, 4):
        pts = _points(n)
        cap = greedy_cap_set(pts, [-sum(p) for p in pts])  # {0,1}^n first: a cap of size 2^n
        assert len(cap) == 2 ** n and _brute_force_cap(cap, n)


def test_l2_bound_and_instances():
    assert l2_lower_bound([60, 60, 60], 100) == 3                    # L1 would say 2
    assert l2_lower_bound([50, 50, 50, 50], 100) == 2
    assert l2_lower_bound([99, 2, 2], 100) == 2
    a, b = bin_instances({**BIN_SMALL, "seed": 0, "capacity": 150, "min_size": 20, "max_size": 100}), \
        bin_instances({**BIN_SMALL, "seed": 0, "capacity": 150, "min_size": 20, "max_size": 100})
    assert a == b and len(a) == 2 and all(len(x) == 60 and min(x) >= 20 and max(x) <= 100 for x in a)


# ------------------------------------------------------------------------------ honest scores

def test_known_good_cap_set_program():
    prog = "def priority(el, n):\n    return -sum(el)\n"
    ev = evaluate(prog)
    assert ev.status == "ok" and ev.score == 16.0 == honest_cap(prog)
    assert check_cap_set(ev.details["cap_set"], 4) is None
    assert {"rlimits", "audit hook"} <= set(ev.isolation)


def test_returned_cap_set_is_validated():
    good = evaluate("def cap_set(n):\n    return [[0,0,0,0],[1,0,0,0],[0,1,0,0],[1,1,0,0]]\n")
    assert good.status == "ok" and good.score == 4
    bad = evaluate("def cap_set(n):\n    return [[0,0,0,0],[1,1,1,1],[2,2,2,2]]\n")
    assert bad.status == "invalid" and bad.score is None and "line" in bad.error


def test_bin_packing_best_fit_scored_by_the_harness():
    ev = evaluate(BEST_FIT, "bin_packing")
    assert ev.status == "ok"
    used, bounds = ev.details["bins_used"], ev.details["l2_lower_bounds"]
    assert all(u >= b for u, b in zip(used, bounds))
    assert ev.score == pytest.approx(-100 * sum((u - b) / b for u, b in zip(used, bounds)) / len(used), abs=1e-5)
    assert ev.behaviour["statistic_bucket"] == 3           # best fit agrees with best fit
    worst = evaluate("def priority(item, bins):\n    return [0] * (len(bins) - 1) + [1]\n", "bin_packing")
    assert worst.details["bins_used"] == [60, 60] and worst.score < ev.score


def test_numpy_program():
    ev = evaluate("import numpy as np\ndef priority(item, bins):\n    return -(bins - item)\n", "bin_packing")
    assert ev.status == "ok" and ev.score == evaluate(BEST_FIT, "bin_packing").score


# ------------------------------------------------------------------------------ hostile programs

@pytest.mark.slow
def test_infinite_loop_at_import_and_in_priority():
    for prog in ("while True:\n    pass\n", "def priority(el, n):\n    while True:\n        pass\n"):
        ev = evaluate(prog, timeout_s=3)
        assert ev.score is None and ev.status in ("timeout", "killed"), ev


@pytest.mark.slow
def test_sleeping_program_hits_the_wall_clock():
    ev = evaluate("import time\ndef priority(el, n):\n    time.sleep(100)\n", timeout_s=2)
    assert ev.score is None and ev.status == "timeout" and ev.wall_s < 10


@pytest.mark.slow
def test_memory_bomb():
    ev = evaluate("def priority(el, n):\n    x = [0] * (10 ** 10)\n    return 0\n")
    assert ev.score is None and ev.status in ("error", "killed") and "MemoryError" in (ev.error or "MemoryError")
    ev = evaluate("blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 2 ** 20))\n")
    assert ev.score is None


def test_fork_bomb_and_subprocesses():
    for prog in ("import os\nwhile True:\n    os.fork()\n",
                 "import os\nos.system('touch /tmp/x')\n",
                 "import subprocess\nsubprocess.run(['true'])\n",
                 "import threading\nthreading.Thread(target=lambda: None).start()\n",
                 "import _posixsubprocess\n"):
        ev = evaluate(prog)
        assert ev.score is None and ev.status == "error", (prog, ev)


def test_writing_outside_the_working_directory(tmp_path):
    target = tmp_path / "pwned.txt"
    for prog in (f"open({str(target)!r}, 'w').write('x')\n",
                 f"import os\nfd = os.open({str(target)!r}, os.O_CREAT | os.O_WRONLY)\n",
                 f"open('../../../../../../..{target}', 'w')\n",
                 f"import os\nos.symlink({str(target)!r}, 'link')\nopen('link', 'w').write('x')\n",
                 f"import pathlib\npathlib.Path({str(target)!r}).write_text('x')\n"):
        ev = evaluate(prog + "def priority(el, n):\n    return 0\n")
        assert not target.exists(), prog
        assert ev.score is None and ev.status == "error"
    # inside its own scratch directory it may write, and the directory is gone afterwards
    before = set(Path(tempfile.gettempdir()).glob("mathlas-funsearch-*"))
    ev = evaluate("open('scratch.txt', 'w').write('x')\ndef priority(el, n):\n    return -sum(el)\n")
    assert ev.status == "ok" and ev.score == 16
    assert set(Path(tempfile.gettempdir()).glob("mathlas-funsearch-*")) <= before


def test_reading_parent_files_and_the_database(tmp_path, data_dir):
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2")
    funsearch("register", "cap_set", "def priority(el, n):\n    return -sum(el)\n", CAP_SMALL)
    db_file = next(data_dir.rglob("elites.json"))
    for path in (secret, db_file, Path("/etc/passwd")):
        ev = evaluate(f"DATA = open({str(path)!r}).read()\ndef priority(el, n):\n    return len(DATA)\n")
        assert ev.score is None and "hunter2" not in ev.output


def test_sockets_are_refused():
    for prog in ("import socket\ns = socket.socket()\ns.connect(('127.0.0.1', 9))\n",
                 "import socket\nsocket.create_connection(('example.com', 80), timeout=1)\n",
                 "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:9')\n"):
        ev = evaluate(prog + "def priority(el, n):\n    return 0\n")
        assert ev.score is None and ev.status == "error", (prog, ev)


def test_a_refused_import_says_why_and_what_a_program_may_import():
    """`import socket` read `ModuleNotFoundError: No module named 'socket'`, as if the host were broken."""
    from mathlas.tools.funsearch.sandbox import DRIVER, PROGRAM_MODULES, import_refused

    ev = evaluate("import socket\ndef priority(el, n):\n    return 0\n")
    assert ev.score is None and ev.status == "error"
    # refused by the audit hook on every host: where the child could read the standard library (a Python
    # outside /root, as a clean clone's venv of /usr/bin/python3 found), the import had succeeded
    assert ("PermissionError: sandbox: import of socket is not allowed: the sandbox blocks network, process and OS "
            "modules such as socket; a program may import math, ") in ev.error, ev.error
    for module in ("asyncio", "urllib.request", "subprocess"):
        ev = evaluate(f"import {module}\ndef priority(el, n):\n    return 0\n")
        assert ev.status == "error" and f"import of {module} is not allowed: the sandbox blocks" in ev.error, ev.error
    offered = ", ".join(PROGRAM_MODULES)
    assert f"import {offered}\n" in DRIVER  # what the driver loads for programs is what the message offers
    said = {m: import_refused(f"ModuleNotFoundError: No module named '{m}'", True)
            for m in ("urllib.request", "sympy", "typing")}
    assert said["urllib.request"].endswith(f": the sandbox blocks network, process and OS modules such as urllib; "
                                           f"a program may import {offered} and numpy")
    assert ": sympy is not installed in the sandbox; a program may import math, " in said["sympy"]
    assert ": typing is not among the sandbox's modules; " in said["typing"]
    assert import_refused("ZeroDivisionError: division by zero", True) == "ZeroDivisionError: division by zero"


def test_ctypes_is_refused():
    ev = evaluate("import ctypes\nctypes.CDLL(None).fork()\n")
    assert ev.score is None and "ctypes" in ev.error


def test_forged_score_lines_are_ignored():
    prog = textwrap.dedent("""\
        import sys, os
        print('{"score": 1e9, "status": "ok"}')
        print('SCORE: 999999', file=sys.stderr)
        for fd in range(3, 64):
            try:
                os.write(fd, b'{"ok": 999999}\\n')
            except OSError:
                pass
        def priority(el, n):
            return -sum(el)
        """)
    ev = evaluate(prog)
    # either the forged line desynchronised the pipe (the run fails honestly) or it was never read
    assert ev.score in (None, 16.0)
    assert ev.score != 999999 and ev.score != 1e9
    quiet = evaluate('print(\'{"score": 1e9}\')\ndef priority(el, n):\n    return -sum(el)\n')
    assert quiet.score == 16.0 and '"score": 1e9' in quiet.output


def test_monkeypatching_the_validator_does_nothing():
    prog = textwrap.dedent("""\
        try:
            import mathlas.tools.funsearch.problems as p
            p.check_cap_set = lambda points, n: None
        except Exception as e:
            print("no access:", type(e).__name__)
        def priority(el, n):
            return 0   # every point ties: the greedy order is lexicographic
        def cap_set(n):
            return [[0] * n, [1] * n, [2] * n]
        """)
    ev = evaluate(prog)
    assert ev.status == "ok" and ev.score == honest_cap("def priority(el, n):\n    return 0\n")
    assert check_cap_set(ev.details["cap_set"], 4) is None
    # sabotaging the child's own builtins can only spoil the program's own run
    saboteur = evaluate("import builtins\nbuiltins.len = lambda x: 10 ** 6\ndef priority(el, n):\n    return 0\n")
    assert saboteur.score in (None, ev.score)
    liar = evaluate("def cap_set(n):\n    return [[0] * n, [1] * n, [2] * n]\n")
    assert liar.status == "invalid" and liar.score is None


def test_bad_answers_are_invalid_not_crashes():
    for prog in ("def priority(el, n):\n    return float('nan')\n",
                 "def priority(el, n):\n    return 'high'\n",
                 "def priority(el, n):\n    return object()\n",
                 "def priority(el, n):\n    raise ValueError('boom')\n",
                 "def helper():\n    pass\n",
                 "def priority(el, n):\n    return [\n"):
        ev = evaluate(prog)
        assert ev.score is None and ev.status in ("invalid", "error"), (prog, ev)
    ev = evaluate("def priority(item, bins):\n    return [1]\n", "bin_packing")
    assert ev.status == "invalid" and "one per bin" in ev.error


def test_huge_output_is_contained():
    ev = evaluate("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n", timeout_s=5)
    assert ev.score is None and len(ev.output) <= 4000


# ------------------------------------------------------------------------------ register / status

@pytest.mark.slow
def test_register_ignores_the_claimed_score_and_keeps_elites(data_dir):
    r = funsearch("register", "bin_packing", BEST_FIT, BIN_SMALL, claimed_score=0.0)
    real = r.evaluation.score
    assert r.registered["stored"] and r.registered["new_best"] and r.best[0].score == real != 0.0
    assert "ignored" in r.note
    new_bins = "def priority(item, bins):\n    return [0] * (len(bins) - 1) + [1]\n"
    r2 = funsearch("register", "bin_packing", new_bins, BIN_SMALL, claimed_score=1e9)
    assert r2.evaluation.score < 1e9 and r2.registered["cell"] != r.registered["cell"]
    failed = funsearch("register", "bin_packing", "while True:\n    pass\n", BIN_SMALL, claimed_score=1e9, timeout_s=2)
    assert failed.registered == {"stored": False, "claimed_score": 1e9} and failed.programs == 2
    s = funsearch("status", "bin_packing", params=BIN_SMALL)
    assert s.programs == 2 and s.cells == 2 and s.best[0].score == max(real, r2.evaluation.score)
    assert "priority_v0" in s.prompt and "priority_v1" in s.prompt and "def priority_v2(" in s.prompt
    # the better program comes last, as in FunSearch's prompts
    assert s.prompt.index("[0] * (len(bins) - 1)") < s.prompt.index("-(b - item)")
    empty = funsearch("status", "cap_set", params={"n": 3})
    assert empty.programs == 0 and "priority_v0" in empty.prompt and empty.note == (
        "no programs for cap_set n=3 yet: the prompt starts from the baseline program; register files the first")


@pytest.mark.slow
def test_concurrent_register_from_two_processes(data_dir):
    script = textwrap.dedent("""\
        import sys
        from mathlas.tools.funsearch.database import Database
        db = Database.open("cap_set", {"n": 4})
        for i in range(40):
            src = f"# writer {sys.argv[1]} program {i}\\n" + "def priority(el, n):\\n    return 0\\n" * (1 + i % 7)
            db.add(src, float(i + (0.5 if sys.argv[1] == 'b' else 0)), (i % 4) / 4, {})
        """)
    env = {**os.environ, "MATHLAS_DATA_DIR": str(data_dir)}
    procs = [subprocess.Popen([sys.executable, "-c", script, w], env=env) for w in "ab"]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    db = Database.open("cap_set", {"n": 4})
    state, history = db.state(), db.history()
    assert state["programs"] == 80 and len(history) == 80
    assert state["best"]["score"] == 39.5
    for cell, elite in state["cells"].items():
        assert elite["score"] == max(h["score"] for h in history if h["cell"] == cell)


def test_torn_log_line_is_skipped(data_dir):
    funsearch("register", "cap_set", "def priority(el, n):\n    return -sum(el)\n", CAP_SMALL)
    db = Database.open("cap_set", {"n": 4})
    with open(db.log, "a") as f:
        f.write('{"hash": "torn')
    assert len(db.history()) == 1 and funsearch("status", params=CAP_SMALL).programs == 1


@pytest.mark.parametrize("kwargs, message", [
    ({"action": "delete"}, "action must be"),
    ({"action": "evaluate"}, "program is required"),
    ({"action": "evaluate", "program": "   "}, "program is required"),
    ({"action": "status", "problem": "tsp"}, "unknown problem 'tsp'"),
    ({"action": "status", "params": {"n": 9}}, "from 1 to 8"),
    ({"action": "status", "params": {"m": 3}}, "unknown parameter 'm'"),
    ({"action": "status", "params": [1]}, "params must be an object"),
    ({"action": "status", "top_k": 0}, "top_k"),
    ({"action": "evaluate", "program": "x=1", "timeout_s": 0}, "timeout_s"),
    ({"action": "status", "problem": "bin_packing", "params": {"min_size": 90, "max_size": 50}}, "min_size"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(UsageError, match=message):
        funsearch(**kwargs)


def test_result_is_json_and_module_is_light():
    import dataclasses

    r = funsearch("evaluate", "cap_set", "def priority(el, n):\n    return 0\n", {"n": 2})
    json.dumps(dataclasses.asdict(r), allow_nan=False)
    code = "import sys, mathlas.tools.funsearch; print([m for m in ('numpy', 'mathlas.tools.funsearch.sandbox') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


@pytest.mark.slow
def test_cli_evaluate_register_status(tmp_path, data_dir):
    prog = tmp_path / "p.py"
    prog.write_text("def priority(el, n):\n    return -sum(el)\n")
    env = {**os.environ, "MATHLAS_DATA_DIR": str(data_dir)}
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "mathlas", "funsearch", *args], capture_output=True,
                              text=True, env=env, timeout=60)

    out = cli("evaluate", str(prog), "--param", "n=3", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["evaluation"]["score"] == 8.0
    out = cli("register", str(prog), "--param", "n=3", "--claimed-score", "100")
    assert out.returncode == 0 and "8" in out.stdout and "ignored" in out.stderr
    out = cli("status", "--param", "n=3", "--json")
    assert json.loads(out.stdout)["best"][0]["score"] == 8.0
    assert cli("status", "--param", "n=99").returncode == 2
    assert cli("evaluate", str(tmp_path / "missing.py")).returncode == 2


def test_cli_refuses_what_is_not_utf8_text_or_never_ends(tmp_path, capsys):
    """A program that is not UTF-8 gave a traceback; /dev/zero (as a file or on stdin) hung: it was
    read whole before the size check. Now one line each, exit 2, after reading at most the limit + 1."""
    from mathlas.cli.main import main
    from mathlas.tools.funsearch import MAX_SOURCE

    bad = tmp_path / "b.py"
    bad.write_bytes(b"\xff\xfe")
    assert main(["funsearch", "evaluate", str(bad), "--param", "n=3"]) == 2
    assert capsys.readouterr().err == (f"mathlas: cannot read the program {bad}: not UTF-8 text; save it as UTF-8 "
                                       "and try again\n")
    if os.path.exists("/dev/zero"):
        for name in ("/dev/zero", "-"):
            with open("/dev/zero", "rb") as zeros:
                done = subprocess.run([sys.executable, "-m", "mathlas", "funsearch", "evaluate", name, "--param", "n=3"],
                                      stdin=zeros, capture_output=True, text=True, timeout=60)
            assert done.returncode == 2 and done.stderr.endswith(
                f"is longer than the limit of {MAX_SOURCE:,} characters; shorten it\n"), done.stderr


def test_cli_register_says_what_it_filed_and_status_names_the_archives_that_exist(tmp_path, data_dir, capsys):
    """register printed only evaluate's score line (what it filed was in --json alone); status of an
    empty archive said "empty" without naming the archive that had the programs, and made its directory."""
    from mathlas.cli.main import main

    prog = tmp_path / "p.py"
    prog.write_text("def priority(el, n):\n    return -sum(el)\n")

    def cli(*args):
        rc = main(["funsearch", *args])
        out = capsys.readouterr()
        return rc, out.out, out.err

    def register(body):  # every one of these scores 8 for n=3
        prog.write_text(f"def priority(el, n):\n    return {body}\n")
        rc, out, _ = cli("register", str(prog), "--param", "n=3", "-q")
        assert rc == 0 and out.startswith("score 8  cell ")
        return out.splitlines()[1]

    assert register("-sum(el)") == "registered: the archive's new best, elite of cell len0-stat2; 1 program in 1 cell"
    assert register("-sum(el)") == ("registered: stored, not an elite: cell len0-stat2 keeps its elite (a higher "
                                    "score, or as high and shorter); 2 programs in 1 cell")
    # as high a score in shorter source: the new best; longer, in a cell of its own: an elite only
    assert register("0") == "registered: the archive's new best, elite of cell len0-stat0; 3 programs in 2 cells"
    assert register("el[0]") == ("registered: the new elite of cell len0-stat1; the best is still 8; "
                                 "4 programs in 3 cells")
    rc, out, err = cli("status")
    assert rc == 0 and out.startswith("0 programs, 0 cells")
    # the tool's note, the one MCP gives too, printed as it is (the CLI built a second one over it)
    note = ("no programs for cap_set n=8 yet: the prompt starts from the baseline program; archives with "
            "programs exist for n=3 (4 programs) (other_archives): status with their params shows them")
    assert funsearch("status").note == note and err == f"mathlas: {note}\n"
    assert sorted(p.name for p in (data_dir / "funsearch" / "cap_set").iterdir()) == ["n=3"]  # no n=8 made
    rc, out, err = cli("status", "--param", "n=3")  # what the note says
    assert rc == 0 and out.startswith("4 programs, 3 cells") and err == ""
    rc, out, err = cli("status", "--problem", "bin_packing", "--param", "n_items=60")
    assert err == ("mathlas: no programs for bin_packing n_items=60 yet: the prompt starts from the baseline "
                   "program; register files the first\n")
    assert not (data_dir / "funsearch" / "bin_packing").exists()


LOOP = "def priority(el, n):\n    while True:\n        pass\n"
WAIT = "import time\n\ndef priority(el, n):\n    while True:\n        time.sleep(1)\n"  # no CPU: the wall clock ends it


@pytest.mark.slow
def test_cli_says_the_time_limit_at_the_start_and_the_timeout_in_one_line(tmp_path, data_dir):
    """A program that loops waited out the limit (60 s by default) without a word: the limit is said
    on stderr as the program starts, while it still runs; the end is one line saying how to give it longer."""
    import time

    prog = tmp_path / "wait.py"
    prog.write_text(WAIT)
    env = {**os.environ, "MATHLAS_DATA_DIR": str(data_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "mathlas", "funsearch", "evaluate", str(prog), "--param", "n=3",
                             "--timeout", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    started = time.monotonic()
    first = proc.stderr.readline()
    said_at, running = time.monotonic() - started, proc.poll() is None
    out, rest = proc.communicate(timeout=60)
    assert first == f"mathlas: running {prog} in the sandbox; time limit 3 s, --timeout S sets it (at most 600)\n"
    assert running and said_at < 3, said_at  # said while the program ran, before the limit
    assert proc.returncode == 1 and rest == ""
    assert out == "timeout: the program ran past the wall-clock limit of 3 s; --timeout S gives it longer (at most 600 s)\n"
    # a busy loop: the wall clock or the CPU limit (the same second) ends it, in one line either way;
    # -q leaves the start line out, --json keeps stdout JSON
    prog.write_text(LOOP)
    busy = subprocess.run([sys.executable, "-m", "mathlas", "funsearch", "evaluate", str(prog), "--param", "n=3",
                           "--timeout", "1", "-q"], capture_output=True, text=True, env=env, timeout=60)
    assert busy.returncode == 1 and busy.stderr == ""
    assert busy.stdout in ("timeout: the program ran past the wall-clock limit of 1 s; --timeout S gives it longer "
                           "(at most 600 s)\n",
                           "killed: the program was stopped by its CPU limit (1 s) or its memory limit (1024 MB)\n"), busy.stdout
    quiet = subprocess.run([sys.executable, "-m", "mathlas", "funsearch", "evaluate", str(prog), "--param", "n=3",
                            "--timeout", "1", "-q", "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert quiet.returncode == 1 and quiet.stderr == ""
    assert json.loads(quiet.stdout)["evaluation"]["status"] in ("timeout", "killed")


def test_the_start_line_names_the_cpu_cap(capsys):
    from mathlas.cli.funsearch import _say_limit_once

    say = _say_limit_once("-", 600)
    say(0.3, 600, "running the program")
    say(1.3, 600, "running the program")
    assert capsys.readouterr().err == ("mathlas: running the program from stdin in the sandbox; time limit 600 s "
                                       "(60 s of CPU time), --timeout S sets it (at most 600)\n")


def test_the_cli_limits_are_the_tools(monkeypatch):
    """The CLI names the tool's limits without importing it: the same numbers."""
    from mathlas.cli.funsearch import CPU_LIMIT_S, MAX_TIMEOUT_S
    from mathlas.tools.funsearch import problems

    with pytest.raises(UsageError, match=str(MAX_TIMEOUT_S)):
        funsearch("evaluate", "cap_set", LOOP, {"n": 2}, timeout_s=MAX_TIMEOUT_S + 1)
    seen = []

    class Stop(Exception):
        pass

    def limits_only(problem, params, source, limits):
        seen.append(limits)
        raise Stop  # no sandbox: only the limits it would get

    monkeypatch.setattr(problems, "run", limits_only)
    with pytest.raises(Stop):
        funsearch("evaluate", "cap_set", LOOP, {"n": 2}, timeout_s=MAX_TIMEOUT_S)
    assert (seen[0].wall_s, seen[0].cpu_s) == (MAX_TIMEOUT_S, CPU_LIMIT_S)


def test_mcp_adapter_serves_funsearch():
    pytest.importorskip("mcp")
    from mathlas.mcp.server import _caller, make_tool

    tool = make_tool(funsearch)
    assert tool.description and set(tool.parameters["properties"]) >= {"action", "problem", "program", "params"}
    assert all(p.get("description") for p in tool.parameters["properties"].values())
    assert tool.annotations.read_only_hint is False  # register writes to the archive
    out = _caller(funsearch)(action="evaluate", problem="cap_set", program="def priority(el, n):\n    return 0\n",
                             params={"n": 2})
    assert out.structured_content["evaluation"]["score"] == 4.0
