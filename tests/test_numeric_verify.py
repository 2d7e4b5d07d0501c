"""verify_numeric: verdicts are earned by independent evaluation, never guessed."""
from __future__ import annotations

import math

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
    ("e^pi - pi = 20", 4),  # 19.9991 and 20 both read 20.00; not 19.999 and 20.000
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


@pytest.mark.parametrize("kwargs, agreed, words", [
    ({"claim": "1+1=3"}, 0, "the sides differ in the first significant digit:"),  # said "after 1 significant digits"
    ({"claim": "1.5 = 1.6"}, 1, "the sides differ after 1 significant digit:"),
    ({"claim": "pi = 3.14"}, 3, "the sides differ after 3 significant digits:"),
    ({"claim": "pi = 3.1416"}, 5, "the sides differ after 5 significant digits:"),  # pi to 5 digits is 3.1416
    ({"expression": "pi", "value": "3.15"}, 2, "(they agree to 2 significant digits)"),  # 3.1, not 3 as it said
    ({"expression": "pi", "value": "3.1417"}, 4, "(they agree to 4 significant digits)"),
    ({"expression": "0.7", "value": "0.6"}, 0, "(they agree in no significant digit)"),
    ({"claim": "sin(pi) + 0.01 = 0"}, 1, "the sides differ after 1 decimal place:"),
])
def test_digits_agreed_are_the_digits_a_person_reads(kwargs, agreed, words):
    r = verify_numeric(**kwargs)
    assert r.verdict == "REFUTED" and r.digits_agreed == agreed
    assert words in r.reason


def test_a_decimal_in_a_claim_is_exact_and_the_reason_says_how_to_read_it_otherwise():
    r = verify_numeric("pi = 3.14")
    assert r.verdict == "REFUTED"
    # it said "each side is known to at least 60 digits", 3.14 included, and nothing about --value
    assert r.reason == ("the sides differ after 3 significant digits: 3.14 is read as an exact number, and pi is "
                        "known to at least 60 digits; pi does round or truncate to 3.14, so if 3.14 is known only "
                        "to its digits, pass expression='pi', value='3.14' instead")
    assert verify_numeric(expression="pi", value="3.14").verdict == "VERIFIED"
    assert verify_numeric("-3.14 = -pi").reason.endswith("pass expression='-pi', value='-3.14' instead")
    assert verify_numeric(expression="-pi", value="-3.14").verdict == "VERIFIED"
    wrong = verify_numeric("pi = 3.15")  # pi does not round to 3.15: wrong either way, no hint
    assert wrong.reason.endswith(": 3.15 is read as an exact number, and pi is known to at least 60 digits")
    one = verify_numeric("1 + 1 = 3")  # an integer is meant exactly: no hint
    assert one.reason.endswith(": 3 is read as an exact number, and 1 + 1 is known to at least 60 digits")
    both = verify_numeric("1.5 = 1.6")
    assert both.reason.endswith(": 1.5 and 1.6 are read as exact numbers")


def test_the_caller_says_how_the_next_step_reads():
    from mathlas.tools.numeric.verify import verify_with_step

    r = verify_with_step(("try {expression} against {value}", str.upper), "sqrt(2) = 1.4142")
    assert r.verdict == "REFUTED" and r.reason.endswith("so if 1.4142 is known only to its digits, try SQRT(2) "
                                                        "against 1.4142")


def test_a_binary_approximation_does_not_pass_for_the_digit_below():
    # 3.1416 and 0.3 evaluate to binary numbers a hair below them, which truncated to 3.1415 and 0.2
    assert verify_numeric(expression="3.1416", value="3.1415").verdict == "REFUTED"
    assert verify_numeric(expression="0.3", value="0.2").verdict == "REFUTED"
    assert verify_numeric(expression="0.3", value="0.3").verdict == "VERIFIED"
    assert verify_numeric(expression="1/3", value="0.33333").verdict == "VERIFIED"
    assert verify_numeric(expression="2/3", value="0.66667").verdict == "VERIFIED"


def test_verified_means_every_requested_digit_is_shared():
    # within one unit of the 50th digit, but 1.000...0 and 1.000...1 differ there (it said VERIFIED)
    r = verify_numeric("1 = 1 + 10^-49")
    assert r.verdict == "REFUTED" and r.digits_agreed == 49
    assert r.reason.startswith("the sides differ after 49 significant digits")
    r = verify_numeric("1 = 1 + 10^-49", digits=49)
    assert r.verdict == "VERIFIED" and r.reason.startswith("both sides agree to 49 significant digits")
    assert verify_numeric("pi = 3.1416", digits=1).reason.startswith("both sides agree to 1 significant digit ")


@pytest.mark.slow
def test_a_divergent_sum_says_what_did_not_converge():
    r = verify_numeric("sum_{n>=1} 1/n = 2")
    assert r.verdict == "UNDETERMINED" and r.verified is None
    # it said "did not converge numerically ()": the exception object, not its (empty) text, was tested
    assert r.reason == ("the left side could not be evaluated: the infinite sum did not converge numerically: "
                        "it may diverge, or converge too slowly to extrapolate")


# ------------------------------------------------------------------------------ a number as value (a JSON number)

@pytest.mark.parametrize("expression, text, verdict, digits", [
    ("pi", "3.14", "VERIFIED", 3),  # it read 3.14 as 3.14000000000000 and said REFUTED
    ("zeta(2)", "1.6449340668", "VERIFIED", 11),
    ("sqrt(2)", "1.41421356", "VERIFIED", 9),
    ("pi", "3.1415", "VERIFIED", 5),  # truncated
    ("-pi", "-3.1415", "VERIFIED", 5),
    ("pi", "3.15", "REFUTED", 3),
    ("e", "2.7183", "VERIFIED", 5),
    ("e", "2.7184", "REFUTED", 5),
    ("1/3", "0.333333333333333", "VERIFIED", 15),
    ("1/3", "0.333333333333334", "REFUTED", 15),
    ("10^-5", "1e-05", "VERIFIED", 1),
])
def test_a_number_is_read_as_the_decimal_written(expression, text, verdict, digits):
    number, string = verify_numeric(expression=expression, value=float(text)), \
        verify_numeric(expression=expression, value=text)
    assert (number.verdict, number.digits, number.right) == (verdict, digits, text)
    assert (number.verdict, number.digits, number.digits_agreed, number.reason) == \
        (string.verdict, string.digits, string.digits_agreed, string.reason)


def test_no_decimal_written_right_is_refuted_when_sent_as_a_json_number():
    """Seeded: a 30-digit number, rounded or truncated to 1 to 25 digits, written as JSON and parsed as
    the server gets it (an int, or a float), is never REFUTED against the number it came from. Read as
    repr writes it, a quarter of those past 15 digits were; read as 15 digits, some of those near a
    15-digit boundary were."""
    import json
    import random
    from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal

    rng = random.Random(7)
    sent = set()
    for i in range(80):
        x = Decimal(rng.randrange(10 ** 29, 10 ** 30)).scaleb(rng.randint(-40, 10))
        n = rng.randint(1, 25)
        if i % 4 == 0 and 1 <= x.adjusted() + 1 <= 25:
            n = x.adjusted() + 1  # cut to a whole number: an int in JSON
        cut = x.quantize(Decimal(1).scaleb(x.adjusted() - n + 1), rng.choice([ROUND_HALF_EVEN, ROUND_DOWN]))
        written = format(cut, "f") if cut.as_tuple().exponent <= 0 else str(cut)  # 0.00123, 123.4, 123, 1.2E+5
        value = json.loads(written)
        r = verify_numeric(expression=str(x), value=value)
        assert r.verdict == "VERIFIED", (str(x), written, r)
        sent.add((type(value).__name__, "a double's" in r.reason))
    assert sent == {("int", False), ("float", False), ("float", True)}  # each way a number is read was met


def test_a_whole_number_counts_no_trailing_zero():
    # repr writes 3.0 and 60007000.0, zeros a JSON number does not keep (a JavaScript client sends 3.0 as 3)
    r = verify_numeric(expression="pi", value=3.0)
    assert (r.verdict, r.digits, r.right) == ("VERIFIED", 1, "3")
    r = verify_numeric(expression="60007328.9", value=6.0007e7)  # 5 digits written, not 9
    assert (r.verdict, r.digits, r.right) == ("VERIFIED", 5, "6.0007e+7")
    assert verify_numeric(expression="60017328.9", value=6.0007e7).verdict == "REFUTED"


def test_an_integer_is_read_with_its_digits():
    r = verify_numeric(expression="pi", value=3)
    assert (r.verdict, r.digits, r.right) == ("VERIFIED", 1, "3")
    assert verify_numeric(expression="2^70", value=2 ** 70).digits == 22  # every digit, no float on the way


def test_a_number_past_15_digits_is_compared_as_the_double_it_is():
    from fractions import Fraction

    from mpmath import mp

    # the nearest doubles to these constants have 17-digit reprs that the constants neither round nor
    # truncate to (log(3) = 1.09861228866810969..., repr 1.0986122886681098): read as exact decimals
    # they would be REFUTED (about a quarter of all doubles are like this); compared as the doubles they
    # are, they agree to 15 digits
    mp.dps = 40
    for expression, x in (("log(3)", mp.log(3)), ("log(7)", mp.log(7)), ("pi/3", mp.pi / 3),
                          ("sqrt(10)", mp.sqrt(10))):
        double = float(x)  # the nearest double
        written = repr(double)
        assert abs(Fraction(double) - Fraction(mp.nstr(x, 40))) <= Fraction(math.ulp(double)) / 2
        assert len(written.replace(".", "")) == 17
        assert verify_numeric(expression=expression, value=written).verdict == "REFUTED"  # the string is exact
        r = verify_numeric(expression=expression, value=double)
        assert (r.verdict, r.digits, r.digits_agreed, r.right) == ("VERIFIED", 15, 15, written), (expression, r)
        assert r.reason.startswith(f"the expression is {mp.nstr(x, 19)}: it does not round or truncate to "
                                   f"{written}, but a number's digits past the 15th are a double's") and \
            r.reason.endswith("pass the value as a string to compare every digit")
    # a double that rounds or truncates as written is checked at every digit of its repr
    r = verify_numeric(expression="pi", value=3.141592653589793)
    assert (r.verdict, r.digits) == ("VERIFIED", 16)
    # one that is wrong within its first 15 digits is refuted
    r = verify_numeric(expression="log(2)", value=0.6931471805599553)
    assert (r.verdict, r.digits, r.digits_agreed) == ("REFUTED", 16, 14)  # both read 0.69314718055995
    r = verify_numeric(expression="log(2)", value=0.6931471805599453, digits=10)  # and at fewer digits asked
    assert (r.verdict, r.digits) == ("VERIFIED", 10)


# ------------------------------------------------------------------------------ digits: what was compared

def test_digits_is_what_was_compared_against_a_decimal():
    r = verify_numeric(expression="pi", value="3")  # it answered digits 50 with 1 digit agreed
    assert (r.verdict, r.verified, r.digits, r.digits_agreed) == ("VERIFIED", True, 1, 1)
    assert r.reason.startswith("the expression rounds or truncates to the 1 digit given ")
    r = verify_numeric(expression="pi", value="3.15")
    assert (r.verdict, r.digits, r.digits_agreed) == ("REFUTED", 3, 2)
    claim = verify_numeric("pi = 3")  # a claim compares the digits asked for
    assert (claim.verdict, claim.digits) == ("REFUTED", 50)


def test_a_value_with_more_digits_than_asked_is_compared_to_the_digits_asked():
    third = "0." + "3" * 64
    # 1/3 truncates to 64 threes; only 60 digits were evaluated, so it said REFUTED
    r = verify_numeric(expression="1/3", value=third)
    assert (r.verdict, r.digits, r.digits_agreed) == ("VERIFIED", 50, 50)
    assert r.reason.startswith("the expression rounds or truncates to the first 50 of the 64 digits given, "
                               "as many as were asked for ")
    r = verify_numeric(expression="1/3", value=third, digits=64)
    assert (r.verdict, r.digits) == ("VERIFIED", 64)
    wrong = "0." + "3" * 59 + "4" + "3" * 4  # wrong at its 60th digit
    assert verify_numeric(expression="1/3", value=wrong, digits=64).verdict == "REFUTED"
    r = verify_numeric(expression="1/3", value=wrong, digits=59)
    assert (r.verdict, r.digits) == ("VERIFIED", 59)
    r = verify_numeric(expression="1/3", value=wrong, digits=60)
    assert (r.verdict, r.digits) == ("REFUTED", 60)
    assert r.reason.startswith("the expression is 0.3333") and \
        r.reason.endswith("which does not round or truncate to the first 60 of the 64 digits given, as many "
                          "as were asked for (they agree to 59 significant digits)")
