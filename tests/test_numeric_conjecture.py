"""conjecture_relation: finds the classic patterns, reports nothing for a random number."""
from __future__ import annotations

import pytest
from mpmath import mp

from mathlas.errors import UsageError
from mathlas.tools.numeric import ConjectureResult, conjecture_relation


def digits(v, n: int = 30) -> str:
    with mp.workdps(n + 20):
        return mp.nstr(v, n, strip_zeros=False)


@pytest.mark.slow
def test_e_continued_fraction_pattern():
    with mp.workdps(60):
        r = conjecture_relation(digits(+mp.e))
    assert r.found
    assert r.cf[:7] == [2, 1, 2, 1, 1, 4, 1]
    assert r.cf_pattern == "[2; (1, 2k, 1) for k = 1, 2, 3, ...]"
    assert {x.kind for x in r.relations} >= {"simple_cf", "gcf"}
    assert all(x.provenance == "conjectured_relation" for x in r.relations)


@pytest.mark.slow
def test_four_over_pi_as_a_generalized_continued_fraction():
    with mp.workdps(60):
        r = conjecture_relation(digits(4 / mp.pi))
    gcf = [x for x in r.relations if x.kind == "gcf"]
    assert any("x = G," in x.expression and "a(n) = 2n + 1, b(n) = n^2" in x.expression for x in gcf)
    assert all(x.digits_agreed >= 29 for x in gcf)


@pytest.mark.slow
def test_sqrt2_periodic():
    with mp.workdps(60):
        r = conjecture_relation(digits(mp.sqrt(2)))
    assert r.cf_pattern == "[1; (2) repeating]"
    cf = [x for x in r.relations if x.kind == "simple_cf"]
    assert cf and cf[0].expression.startswith("sqrt(2) = ")


@pytest.mark.slow
def test_random_number_gives_nothing():
    r = conjecture_relation("0.7281930482910293847561029384756")
    assert isinstance(r, ConjectureResult)
    assert not r.found and r.relations == [] and r.cf_pattern is None
    assert r.reason.startswith("no significant relation") and r.complete
    assert len(r.searched) == 3


def test_few_digits_skip_searches_honestly():
    r = conjecture_relation("0.72819304829102")
    assert not r.found
    assert any("gcf: skipped" in s for s in r.searched)


def test_bad_input():
    with pytest.raises(UsageError):
        conjecture_relation("pi")
    with pytest.raises(UsageError, match="max_terms"):
        conjecture_relation("1.2345678901234567890", max_terms=50)
    with pytest.raises(UsageError, match="cf_depth"):
        conjecture_relation("1.2345678901234567890", cf_depth=10 ** 7)
    with pytest.raises(UsageError, match="zero"):
        conjecture_relation("0.000000")
