"""Hostile input: no code runs, nothing is written, every call ends in bounded time."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mathlas.errors import UsageError
from mathlas.tools.numeric import conjecture_relation, identify_constant, verify_numeric

PWNED = Path("/tmp/mathlas-numeric-pwned")

INJECTIONS = [
    f"__import__('os').system('touch {PWNED}')",
    f"__import__(\"os\").system(\"touch {PWNED}\") = 1",
    "().__class__.__bases__[0].__subclasses__()",
    "(lambda: 1)()",
    f"exec(\"open('{PWNED}', 'w')\")",
    "eval('1')",
    "getattr(1, 'real')",
    "pi.__class__",
    "sympy.sympify('1')",
    "1; import os",
    "x" * 200_000,
    "(" * 10_000 + "1" + ")" * 10_000,
]


@pytest.fixture(autouse=True)
def _no_file():
    PWNED.unlink(missing_ok=True)
    yield
    assert not PWNED.exists(), "an input string was executed"


@pytest.mark.parametrize("text", INJECTIONS)
def test_injection_strings_are_refused(text):
    t = time.monotonic()
    with pytest.raises(UsageError):
        verify_numeric(claim=text if "=" in text else text + " = 1")
    with pytest.raises(UsageError):
        verify_numeric(expression=text, value="1")
    with pytest.raises(UsageError):
        identify_constant(text)
    with pytest.raises(UsageError):
        identify_constant("3.14159265358979323846", basis=[text])
    with pytest.raises(UsageError):
        conjecture_relation(text)
    assert time.monotonic() - t < 2


@pytest.mark.parametrize("claim", ["10^10^10 = 1", "factorial(10^9) = 1", "gamma(10^10^10) = 1",
                                   "2^2^2^2^2^2^2^2 = 1", "sum_{n>=1} n^(10^10) = 1"])
def test_huge_numbers_end_in_bounded_time(claim):
    t = time.monotonic()
    r = verify_numeric(claim, timeout=5)
    assert r.verdict in ("REFUTED", "UNDETERMINED")
    assert time.monotonic() - t < 8


def test_absurd_digits_and_long_values():
    with pytest.raises(UsageError):
        verify_numeric("1 = 1", digits=1_000_000)
    with pytest.raises(UsageError):
        identify_constant("1." + "1" * 200_000)


@pytest.mark.slow
def test_timeout_kills_the_worker():
    t = time.monotonic()
    r = identify_constant("0." + "7" * 20 + "123456789" * 40, timeout=1)
    assert time.monotonic() - t < 3
    assert not r.identified and "timed out" in r.reason


def test_workers_never_write_to_stdout():
    """An MCP stdio server's stdout must carry protocol only: the tools print nothing there."""
    code = ("from mathlas.tools.numeric import identify_constant, verify_numeric\n"
            "identify_constant('1.6449340668482264364724151666460251892')\n"
            "verify_numeric('sum_{n>=1} 1/n^2 = pi^2/6')\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize("claim, verdict", [
    ("1e99999999999 = 0", "REFUTED"), ("1e999999 = 0", "REFUTED"), ("1e-99999999999 = 0", "VERIFIED"),
    ("exp(10^12) = exp(10^12)", "VERIFIED"), ("exp(10^12) = 0", "REFUTED"),
    ("1e99999999999 = 2e99999999999", "REFUTED"), ("10^(10^11) = 10^(10^11) + 1", "VERIFIED"),
])
def test_sides_past_any_decimal_exponent_are_decided_at_once(claim, verdict):
    """Reading a side's digits built an exact Fraction of it: 10^(10^11) took longer than any time bound,
    so each of these ended UNDETERMINED after 20 s; and 1e999999 = 0 was UNDETERMINED though its left
    side is known far better than its distance from 0 (counted in decimal places, both were cut at 0)."""
    t = time.monotonic()
    r = verify_numeric(claim, timeout=10)
    assert r.verdict == verdict, (claim, r.reason)
    assert time.monotonic() - t < 5


def test_huge_value_against_an_expression():
    r = verify_numeric(expression="pi*10^(10^11)", value="3.14159e100000000000", timeout=10)
    assert r.verdict == "REFUTED" and "after 6 significant digits" in r.reason
    # a decimal value: the expression must round or truncate to it, read after the shift by 10^5000
    assert verify_numeric(expression="pi*10^5000", value="3.14159e5000", timeout=10).verdict == "VERIFIED"
    assert verify_numeric(expression="pi*10^5000", value="3.14158e5000", timeout=10).verdict == "REFUTED"
    # a claim reads its decimal as exact, and offers the step that compares its digits only
    r = verify_numeric("pi*10^5000 = 3.14159e5000", timeout=10)
    assert r.verdict == "REFUTED" and "does round or truncate to 3.14159e5000" in r.reason


def test_conjecture_on_a_decimal_past_any_exponent():
    t = time.monotonic()
    assert conjecture_relation("1e999999999", timeout=10).cf == []
    assert conjecture_relation("1.2345e-999999999", timeout=10).cf == [0]
    # a tiny negative: as the exact expansion of -0.5e-1001 begins (it was cut to [-1])
    from mathlas.tools.numeric.contfrac import reliable_cf
    from mathlas.tools.numeric.value import parse_value

    assert reliable_cf(parse_value("-0.5e-1001")) == [-1, 1] == reliable_cf(parse_value("-0.5e-900"))[:2]
    assert time.monotonic() - t < 5


def _spin(send=None):
    while True:
        pass


def test_an_orphaned_worker_dies_with_its_caller(tmp_path):
    """A caller killed before it could kill its worker (kill -9, a crash) left the worker spinning at
    full CPU for ever: the worker now dies with the worker server, which exits when the caller's end of
    its socket closes."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    code = ("import os, sys\n"
            "from tests.test_numeric_safety import _spin\n"
            "from mathlas.tools.numeric import timebound\n"
            "pid, r = timebound._launch(_spin, (), {}, 600)\n"
            "print(pid, flush=True)\n"
            "os._exit(0)\n")
    with open(tmp_path / "stderr", "w") as err:  # not a pipe: a live worker would hold it open
        out = _python(code, stdout=subprocess.PIPE, stderr=err, text=True)
    assert out.returncode == 0, (tmp_path / "stderr").read_text()
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    assert not _alive(pid), "the orphaned worker is still running"


def _python(code: str, **how) -> subprocess.CompletedProcess:
    """``python -c code`` with this checkout importable (60 s at most)."""
    root = Path(__file__).resolve().parents[1]
    return subprocess.run([sys.executable, "-c", code], timeout=60, env=dict(os.environ, PYTHONPATH=str(root)),
                          cwd=root, **how)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_a_worker_cannot_outlive_its_cpu_bound():
    """The second backstop: a job's CPU time is limited to its time bound and a few seconds."""
    from mathlas.tools.numeric import _zygote

    code = ("import sys\n"
            "from mathlas.tools.numeric import _zygote\n"
            "_zygote._limit(0)\n"
            "while True:\n"
            "    pass\n")
    t = time.monotonic()
    out = _python(code, capture_output=True)
    assert out.returncode != 0
    assert time.monotonic() - t < 1 + _zygote.CPU_GRACE_SECONDS + 20
