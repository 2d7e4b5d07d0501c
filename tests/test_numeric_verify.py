"""verify_numeric: verdicts are earned by independent evaluation, never guessed."""
from __future__ import annotations

import pytest

from mathlas.errors import UsageError
from mathlas.tools.numeric import VerifyResult, verify_numeric


@pytest.mark.parametrize("claim", [
    "sum_{n>=1} 1/n^2 = pi^2/6",
    r"\sum_{n=1}^{\infty} \frac{1}{n^2} = \frac{\pi^2}{6}",
    "sum_{n>=0} (-1)^n/(2n+1) = pi/4",
    "prod_{n>=1} (1 - 1/(4n^2)) = 2/pi",
    "int_0^1 4/(1+x^2) dx = pi",
    r"\int_0^\infty e^{-x^2} dx = \sqrt{\pi}/2",
    "gamma(1/2)^2 = pi",
    "sum_{k=0}^{10} binomial(10, k) = 2^10",
    "zeta(2) = pi^2/6",
    "sin(pi) = 0",
    "sum_{n>=0} 1/n! = e",
])
def test_true_claims_are_verified(claim):
    r = verify_numeric(claim)
    assert r.verdict == "VERIFIED" and r.verified is True
    assert r.digits_agreed == 50 and r.reevaluated


@pytest.mark.parametrize("claim, agreed", [
    ("sum_{n>=1} 1/n^2 = 1.6449", 5),
    ("e^pi - pi = 20", 5),
    ("sum_{n>=1} 1/n^3 = pi^3/25.79436", 7),
    ("sqrt(2) = 1.4142", 5),
])
def test_false_claims_are_refuted(claim, agreed):
    r = verify_numeric(claim)
    assert r.verdict == "REFUTED" and r.verified is False
    assert r.digits_agreed == agreed


def test_expression_against_decimal_value():
    r = verify_numeric(expression="zeta(3)", value="1.2020569031595942853997")
    assert r.verdict == "VERIFIED" and r.digits_agreed == 23
    assert verify_numeric(expression="pi", value="3.14").verdict == "VERIFIED"  # rounded
    assert verify_numeric(expression="pi", value="3.1415").verdict == "VERIFIED"  # truncated
    assert verify_numeric(expression="pi", value="3.15").verdict == "REFUTED"
    assert verify_numeric(expression="pi", value=3.141592653589793).verdict == "VERIFIED"
    assert verify_numeric(expression="-pi", value="-3.1415").verdict == "VERIFIED"  # truncated toward zero
    assert verify_numeric(expression="-pi", value="-3.1417").verdict == "REFUTED"
    assert verify_numeric(expression="sum_{n>=1} 1/n^2", value="pi^2/6").verdict == "VERIFIED"


@pytest.mark.slow
def test_undetermined_when_it_cannot_evaluate():
    r = verify_numeric("sum_{n>=1} 1/n = 5")  # diverges
    assert r.verdict == "UNDETERMINED" and r.verified is None
    assert "could not be evaluated" in r.reason
    r = verify_numeric("int_0^inf sin(x)/x dx = pi/2")  # oscillatory: quadrature gives up honestly
    assert r.verdict == "UNDETERMINED"
    assert verify_numeric("1/0 = 1").verdict == "UNDETERMINED"


@pytest.mark.slow
def test_timeout_gives_undetermined():
    r = verify_numeric("sum_{n=1}^{90000} sum_{m=1}^{90000} 1/(n*m) = 1", timeout=1.5)
    assert r.verdict == "UNDETERMINED" and "timed out" in r.reason
    assert r.elapsed_s < 4


def test_result_is_a_plain_dataclass():
    import dataclasses
    import json

    r = verify_numeric("1 + 1 = 2", digits=10)
    assert isinstance(r, VerifyResult) and r.verdict == "VERIFIED"
    json.dumps(dataclasses.asdict(r))


@pytest.mark.parametrize("kwargs, match", [
    ({}, "claim"), ({"claim": ""}, "empty"), ({"claim": "1 + 1"}, "one '='"),
    ({"claim": "1 = 1", "expression": "1"}, "not both"), ({"expression": "pi"}, "value"),
    ({"claim": "1 = 1", "digits": 1_000_000}, "digits"), ({"claim": "1 = 1", "digits": 0}, "digits"),
    ({"expression": "pi", "value": "nonsense("}, "neither a decimal"),
    ({"expression": "pi", "value": float("nan")}, "finite"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(UsageError, match=match):
        verify_numeric(**kwargs)
