"""What ``mathlas verify-numeric``, ``constant`` and ``conjecture`` print, line for line, for the inputs a
first-time user reported: the counts read right, and each line says what it means and what to do next.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # each runs the command in a subprocess, with a numeric worker


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mathlas", *args], capture_output=True, text=True, timeout=120,
                          check=False)


def test_a_decimal_in_a_claim_is_read_as_exact_and_the_line_says_what_to_run_instead():
    out = run("verify-numeric", "pi = 3.14")
    assert out.returncode == 1
    assert out.stdout == ("REFUTED: the sides differ after 3 significant digits: 3.14 is read as an exact number, "
                          "and pi is known to at least 60 digits; pi does round or truncate to 3.14, so if 3.14 is "
                          "known only to its digits, run: mathlas verify-numeric --expression pi --value 3.14\n")
    command = shlex.split(out.stdout.rsplit("run: ", 1)[1])
    assert command[:2] == ["mathlas", "verify-numeric"]
    again = run(*command[1:])
    assert again.returncode == 0 and again.stdout.startswith("VERIFIED: ")
    quoted = run("verify-numeric", "e^pi - pi = 19.9991")  # an expression with spaces comes back quoted
    assert quoted.stdout.endswith("run: mathlas verify-numeric --expression 'e^pi - pi' --value 19.9991\n")


def test_digit_counts_are_the_digits_that_agree():
    out = run("verify-numeric", "1+1=3")
    assert out.stdout == ("REFUTED: the sides differ in the first significant digit: 3 is read as an exact number, "
                          "and 1 + 1 is known to at least 60 digits\n")
    out = run("verify-numeric", "--expression", "pi", "--value", "3.15")
    assert out.stdout == ("REFUTED: the expression is 3.1416, which does not round or truncate to the value given "
                          "(they agree to 2 significant digits)\n")
    out = run("verify-numeric", "1.5 = 1.6")
    assert out.stdout.startswith("REFUTED: the sides differ after 1 significant digit: ")


def test_the_digits_reported_are_the_digits_compared():
    # pi against "3" said VERIFIED with "digits": 50 and "digits_agreed": 1
    out = run("verify-numeric", "--expression", "pi", "--value", "3")
    assert out.returncode == 0
    assert out.stdout == ("VERIFIED: the expression rounds or truncates to the 1 digit given (independent "
                          "evaluation at 11 and 26 digits)\n")
    r = json.loads(run("verify-numeric", "--expression", "pi", "--value", "3", "--json").stdout)
    assert (r["verdict"], r["verified"], r["digits"], r["digits_agreed"], r["right"]) == ("VERIFIED", True, 1, 1, "3")
    # more digits than asked for: the first --digits of them are compared, and the line says so
    third = "0." + "3" * 64
    out = run("verify-numeric", "--expression", "1/3", "--value", third)
    assert out.returncode == 0  # 1/3 does truncate to 64 threes; only 60 digits were evaluated, it said REFUTED
    assert out.stdout == ("VERIFIED: the expression rounds or truncates to the first 50 of the 64 digits given, "
                          "as many as were asked for (independent evaluation at 60 and 75 digits)\n")
    r = json.loads(run("verify-numeric", "--expression", "1/3", "--value", third, "--digits", "64", "--json").stdout)
    assert (r["verdict"], r["digits"], r["digits_agreed"]) == ("VERIFIED", 64, 64)


def test_a_divergent_sum_says_so():
    out = run("verify-numeric", "sum_{n>=1} 1/n = 2")
    assert out.returncode == 1
    assert out.stdout == ("UNDETERMINED: the left side could not be evaluated: the infinite sum did not converge "
                          "numerically: it may diverge, or converge too slowly to extrapolate\n")


def test_constant_says_which_count_of_forms_applied():
    out = run("constant", "1e400")
    assert out.returncode == 1
    assert out.stdout == ("not identified: too few digits: 1 significant digit cannot tell a closed form from a "
                          "coincidence among the 187 forms of the basis for |x| > 200, where exp(x) is not tried "
                          "(need at least 10), so none was searched\n")
    assert out.stderr.startswith("1 digit used, 0 forms searched in ")


def test_conjecture_counts_the_transforms_and_skips_the_gcf_search_below_17_digits():
    out = run("conjecture", "2.718281828459045")
    assert "gcf: skipped, 16 digits are too few to confirm a match among 9,494 fractions x 1,008 transforms " \
           "(need at least 17)" in out.stderr
    assert "gcf:" not in out.stdout
    out = run("conjecture", "2.718281828459045235360287471352")
    assert out.returncode == 0 and "against 1,008 Moebius transforms of x" in out.stderr


@pytest.mark.parametrize("basis, line", [
    ("zeta3", "mathlas: unknown name 'zeta3'; did you mean zeta(3)? The constants are pi, e, gamma (Euler's), "
              "Catalan and phi, and a function takes its argument in parentheses, as in zeta(3), log(2), sqrt(2) "
              "(docs/numeric.md lists them)\n"),
    ("", "mathlas: the expression is empty; write a number or closed form, e.g. pi, zeta(3) or sqrt(2)/2\n"),
])
def test_a_bad_basis_is_one_line_with_what_to_write(basis, line):
    """walk14: ``--basis zeta3`` listed only five constants and said the name twice; ``--basis ''`` said
    only 'empty expression'."""
    out = run("constant", "1.2020569031595942854", "--basis", basis)
    assert (out.returncode, out.stdout, out.stderr) == (2, "", line)
