"""Query-time expansion of abbreviations (mathlas.ranking.abbreviations): exact case, whole words, outside code
and formulas, each expansion appended once."""
from __future__ import annotations

from mathlas.ranking.abbreviations import ABBREVIATIONS, describe, expand

FTA = ("fundamental theorem of algebra", "fundamental theorem of arithmetic")


def test_expand_appends_each_expansion_once():
    assert expand("FTA over C") == (
        "FTA over C fundamental theorem of algebra fundamental theorem of arithmetic", {"FTA": FTA})
    assert expand("IVT and IVT again, then MVT.") == (
        "IVT and IVT again, then MVT. intermediate value theorem mean value theorem",
        {"IVT": ("intermediate value theorem",), "MVT": ("mean value theorem",)})
    assert expand("UFD's that are not PID") == (
        "UFD's that are not PID unique factorization domain principal ideal domain",
        {"UFD": ("unique factorization domain",), "PID": ("principal ideal domain",)})


def test_hyphenated_tokens():
    assert expand("AM-GM")[0] == "AM-GM arithmetic mean geometric mean inequality"
    assert list(expand("IVT-MVT style proof")[1]) == ["IVT", "MVT"]
    assert expand("CRT-based") == ("CRT-based Chinese remainder theorem", {"CRT": ("Chinese remainder theorem",)})


def test_case_and_word_boundaries():
    assert expand("ac") == ("ac", {})
    assert expand("Ac of sets") == ("Ac of sets", {})
    assert expand("ACE and FTAs") == ("ACE and FTAs", {})
    assert expand("gcd of two numbers") == ("gcd of two numbers", {})


def test_code_and_formulas_never_expand():
    for q in ["`Nat.GCD`", "Nat.GCD a b", "lemma `FTA`", "$CH$ holds", "$$ AC $$", r"\(ZF\)", "GCD_comm", "FTA.proof"]:
        assert expand(q) == (q, {}), q


def test_next_to_an_operator_is_a_product_not_an_abbreviation():
    assert expand("AC = CA for matrices") == ("AC = CA for matrices", {})
    assert expand("if AB = AC then") == ("if AB = AC then", {})


def test_phrase_already_in_the_query_is_not_repeated():
    assert expand("FTC fundamental theorem of calculus") == (
        "FTC fundamental theorem of calculus", {"FTC": ("fundamental theorem of calculus",)})


def test_only_the_first_1000_characters_are_scanned():
    assert expand("x " * 500 + "FTA")[1] == {}
    assert expand("FTA " + "x " * 600)[1] == {"FTA": FTA}


def test_describe():
    assert describe({}) == ""
    assert describe({"FTA": FTA}) == (
        "expanded FTA: fundamental theorem of algebra / fundamental theorem of arithmetic")
    assert describe(expand("CRT then PNT")[1]) == (
        "expanded CRT: Chinese remainder theorem; PNT: prime number theorem")


def test_table_is_upper_case_and_conservative():
    for key, phrases in ABBREVIATIONS.items():
        assert key == key.upper() and phrases and all(phrases), key
    for left_out in ("WLOG", "CW", "UMP", "LU", "QR", "GL", "HBT"):
        assert left_out not in ABBREVIATIONS
    assert ABBREVIATIONS["IFT"] == ("implicit function theorem", "inverse function theorem")
    assert ABBREVIATIONS["FLT"] == ("Fermat's last theorem", "Fermat's little theorem")


def test_a_phrase_the_sources_abbreviate_also_searches_its_abbreviation():
    """"unique factorization domains" also searches "UFD" (Stacks writes "A regular local ring is a UFD"):
    any case, plural, hyphens; not when the query has the abbreviation; only the CONTRACTED terms."""
    assert expand("regular local rings are unique factorization domains") == (
        "regular local rings are unique factorization domains UFD", {"unique factorization domain": ("UFD",)})
    assert expand("every Principal-Ideal Domain is Noetherian")[0] == "every Principal-Ideal Domain is Noetherian PID"
    assert expand("the greatest common divisor of a and b")[1] == {"greatest common divisor": ("GCD",)}
    assert expand("a UFD is a unique factorization domain") == (   # said both ways: nothing to add
        "a UFD is a unique factorization domain", {"UFD": ("unique factorization domain",)})
    assert expand("the fundamental theorem of algebra") == ("the fundamental theorem of algebra", {})  # not contracted
    assert expand("the axiom of choice") == ("the axiom of choice", {})     # AC: a product of matrices too
    assert expand("`unique factorization domain`") == ("`unique factorization domain`", {})  # code
    assert expand("unique factorization domainsx")[1] == {}
    assert describe(expand("unique factorization domains")[1]) == "expanded unique factorization domain: UFD"
    assert expand("unique factorization domains", contract=False) == ("unique factorization domains", {})  # formal
