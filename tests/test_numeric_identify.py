"""identify_constant: known constants are found, random numbers are not, bad input is refused."""
from __future__ import annotations

import random

import pytest
from mpmath import mp

from mathlas.errors import UsageError
from mathlas.tools.numeric import IdentifyResult, identify_constant, verify_numeric
from mathlas.tools.numeric.evaluate import evaluate
from mathlas.tools.numeric.parser import parse_expression


def digits_of(text: str, digits: int) -> str:
    v = evaluate(parse_expression(text), digits + 20)
    with mp.workdps(digits + 20):
        return mp.nstr(v, digits, strip_zeros=False, min_fixed=-mp.inf, max_fixed=mp.inf)


@pytest.mark.parametrize("text, expected", [
    ("pi^2/6", "pi**2/6"), ("e + sqrt(2)", "sqrt(2) + E"), ("log(2)/pi", "log(2)/pi"),
    ("3*zeta(3)/4", "3*zeta(3)/4"), ("(1 + sqrt(5))/2", "(1 + sqrt(5))/2"), ("sqrt(2) + sqrt(3)", "sqrt(2) + sqrt(3)"),
])
def test_known_constants_at_30_digits(text, expected):
    r = identify_constant(digits_of(text, 30))
    assert r.identified and r.best is not None
    assert r.best.expression == expected
    assert r.best.digits_agreed >= 29 and r.digits == 30
    assert r.best.latex and r.reason is None


def test_answer_round_trips_through_verify_numeric():
    value = digits_of("Catalan/pi", 30)
    r = identify_constant(value)
    v = verify_numeric(expression=r.best.expression, value=value)
    assert v.verdict == "VERIFIED"


@pytest.mark.slow
def test_random_numbers_are_not_identified():
    rng = random.Random(7)
    for _ in range(3):
        value = "0." + "".join(rng.choice("0123456789") for _ in range(30))
        r = identify_constant(value)
        assert not r.identified and r.best is None and r.candidates == []
        assert "no relation in the basis" in r.reason


def test_too_few_digits_says_so():
    r = identify_constant("3.14159")
    assert not r.identified and "too few digits" in r.reason
    # nothing is searched, and the reason does not claim otherwise (it said "across the 210 forms searched")
    assert r.forms_searched == 0 and "none was searched" in r.reason and "forms searched" not in r.reason


def test_fifteen_digits_still_identifies_simple_forms():
    r = identify_constant(digits_of("pi^2/6", 15))
    assert r.identified and r.best.expression == "pi**2/6"


def test_float_input_and_digits_parameter():
    r = identify_constant(2 ** 0.5)
    assert r.identified and r.best.expression == "sqrt(2)" and r.digits == 15  # a double: 15 digits
    r = identify_constant(digits_of("pi^2/6", 40), digits=25)
    assert r.digits == 25 and r.identified


def test_user_basis():
    value = digits_of("zeta(5)/3 + 1", 30)
    assert not identify_constant(value).identified
    r = identify_constant(value, basis=["zeta(5)"])
    assert r.identified and r.best.expression == "zeta(5)/3 + 1"
    assert r.basis == ["zeta(5)"]


def test_result_is_a_plain_dataclass():
    import dataclasses
    import json

    r = identify_constant(digits_of("pi/4", 20))
    assert isinstance(r, IdentifyResult)
    json.dumps(dataclasses.asdict(r))


@pytest.mark.parametrize("bad, match", [
    (float("nan"), "finite"), (float("inf"), "finite"), ("", "empty"), ("abc", "decimal number"),
    ("nan", "finite"), (None, "decimal"), (True, "decimal"), ([1], "decimal"), ("1.2.3", "decimal"),
])
def test_bad_values(bad, match):
    with pytest.raises(UsageError, match=match):
        identify_constant(bad)


def test_bad_digits_and_basis():
    with pytest.raises(UsageError, match="between 1 and 1000"):
        identify_constant("3.14159265358979323846", digits=1_000_000)
    with pytest.raises(UsageError, match="only 21 significant digits"):
        identify_constant("3.14159265358979323846", digits=40)
    with pytest.raises(UsageError):
        identify_constant("3.14159265358979323846", basis=["__import__('os')"])
    with pytest.raises(UsageError, match="closed forms"):
        identify_constant("3.14159265358979323846", basis=["sum_{n>=1} 1/n^2"])
    with pytest.raises(UsageError, match="timeout"):
        identify_constant("3.14159265358979323846", timeout=0)


def test_too_few_digits_names_the_count_of_forms_that_applied():
    # the count depends on the input: exp(x) is not tried for |x| > 200 (it said "1 significant digits ...
    # among the 187 forms of the basis" next to "210 forms" for 3.14, without saying why)
    big = identify_constant("1e400")
    assert big.reason.startswith("too few digits: 1 significant digit cannot tell a closed form from a coincidence "
                                 "among the 187 forms of the basis for |x| > 200, where exp(x) is not tried "
                                 "(need at least 10)")
    small = identify_constant("3.14")
    assert "3 significant digits cannot" in small.reason and "among the 210 forms of the basis (need" in small.reason
