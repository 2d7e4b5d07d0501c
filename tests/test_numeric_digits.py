"""Digits agreed, counted as a person reads them, and the figures docs/numeric.md gives for the searches."""
from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from mathlas.tools.numeric.value import common_digits, digits_text, lead_of

DOC = Path(__file__).resolve().parents[1] / "docs" / "numeric.md"
PI = Fraction("3.14159265358979323846264338327950288")


@pytest.mark.parametrize("a, b, expected", [
    (PI, "3.15", 2),  # 3.1; "within one unit" said 3
    (2, 3, 0),  # "within one unit" said 1
    (PI, "3.14", 3),
    (PI, "3.1416", 5),  # pi to five digits is 3.1416
    (PI, "3.1417", 4),
    ("19.99909997918947576726644298466904449", 20, 4),  # e^pi - pi: both read 20.00
    ("0.9995", "1.0009", 3),  # both read 1.000 at four digits, but they are more than a unit apart there
    ("1.5", "1.6", 1),
    ("-3.14", "-3.15", 2),
    ("-3.14", "3.14", 0),
    ("1e400", "1.0000001e400", 7),
    (PI, PI, 50),
])
def test_common_digits(a, b, expected):
    a, b = Fraction(a), Fraction(b)
    assert common_digits(a, b, 50) == expected
    assert common_digits(b, a, 50) == expected


def test_common_digits_after_the_point():
    assert common_digits(Fraction("0.004"), Fraction(0), 50, top=0) == 2  # 0.00
    assert common_digits(Fraction("-0.004"), Fraction("0.003"), 50, top=0) == 2
    assert common_digits(Fraction("0.6"), Fraction(0), 50, top=0) == 0


def test_counts_read_in_the_right_number():
    assert digits_text(1) == "1 digit" and digits_text(3) == "3 digits" and digits_text(0) == "0 digits"
    assert digits_text(1, "significant digit") == "1 significant digit" and digits_text(1210, "form") == "1,210 forms"
    assert [lead_of(Fraction(x)) for x in ("0.5", "1", "9.99", "10", "1e-300")] == [0, 1, 1, 2, -299]


def test_the_docs_give_the_gcf_search_the_code_runs():
    from mathlas.tools.numeric.contfrac import _moebius_set, gcf_search_size
    from mathlas.tools.numeric.relations import GUARD, required_margin

    text = " ".join(DOC.read_text(encoding="utf-8").split())
    n_frac, n_moeb = gcf_search_size()
    need = math.ceil(required_margin(n_frac * n_moeb) + GUARD + 3)  # conjecture._gcf's threshold
    assert f"{n_frac:,} generalized continued fractions" in text
    assert f"the {n_moeb:,} distinct Möbius transforms" in text
    assert f"{n_frac:,} × {n_moeb:,} ≈ {n_frac * n_moeb / 1e6:.1f}·10⁶ (fraction, transform) pairs it needs " \
           f"{need} digits" in text
    special = f"{len(_moebius_set(0.5)[1])} at 0.5, {len(_moebius_set(math.sqrt(2))[1])} at sqrt 2"
    assert special in text
    assert not re.search(r"~2,000|2·10⁷", text)


def test_the_docs_give_the_counts_identify_constant_says():
    from mathlas.tools.numeric import identify_constant

    text = " ".join(DOC.read_text(encoding="utf-8").split())
    counts = [int(re.search(r"among the (\d+) forms", identify_constant(v).reason).group(1)) for v in ("3.14", "1e400")]
    assert counts == [210, 187]
    assert "the 210 forms of the default basis" in text and "which leaves 187 forms" in text


def test_the_docs_quote_what_verify_numeric_says_about_a_decimal_in_a_claim():
    from mathlas.cli.numeric import STEP
    from mathlas.tools.numeric.verify import verify_numeric, verify_with_step

    text = " ".join(DOC.read_text(encoding="utf-8").split())
    reason = verify_numeric("pi = 3.14").reason
    head, tail = reason.split("; ", 1)
    assert f'"{head}"' in text and f"…; {tail}\"" in text
    cli = verify_with_step(STEP, "pi = 3.14").reason
    assert f'"…, {cli.rsplit(", ", 1)[1]}"' in text
