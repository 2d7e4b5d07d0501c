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
