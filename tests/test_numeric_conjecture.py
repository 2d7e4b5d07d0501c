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


def test_gcf_search_counts_every_distinct_transform():
    import math

    from mathlas.tools.numeric.contfrac import _moebius_set, gcf_search_size, moebius_count

    n_frac, n_moeb = gcf_search_size()
    assert (n_frac, n_moeb) == (9494, 1008) and moebius_count() == 1008
    # at a generic x every transform takes its own value; at 0.5 (what was counted) only 111 do
    for x in (math.pi, math.e, 0.7281930482910293):
        assert len(_moebius_set(x)[1]) == n_moeb
    assert len(_moebius_set(0.5)[1]) == 111


def test_sixteen_digits_are_too_few_for_the_gcf_search():
    # with 111 transforms counted, 16 digits of e ran the search and "confirmed" three fractions
    r = conjecture_relation("2.718281828459045")
    assert "gcf: skipped, 16 digits are too few to confirm a match among 9,494 fractions x 1,008 transforms " \
           "(need at least 17)" in r.searched
    assert not any(rel.kind == "gcf" for rel in r.relations)


@pytest.mark.slow
def test_seventeen_digits_run_the_gcf_search():
    r = conjecture_relation("2.7182818284590452")
    gcf = [s for s in r.searched if s.startswith("gcf: ")]
    assert gcf and "against 1,008 Moebius transforms of x" in gcf[0]
