"""What `mathlas search`, `mathlas show` and `mathlas --version` tell a reader besides the hits, run as a person
runs them, on the default bundle (a mathematician's walk through the CLI found each of these missing or wrong):

- a link that searches the source's site (ProofWiki's) says so on every surface (``link_kind``);
- a heading that only repeats the id's label (HoTT's ``cor:pi1s1``, "pi1s1") gives its place to the
  statement's first words, where the CLI showed nothing after the id;
- ``-q`` keeps the answer's own lines on stderr (what was searched for, where a long query was cut, the
  match line) and drops the tips, as ``--help`` and README say;
- the match describes the search, the same on every ``--offset`` page, and ``--help`` says why
  ``weak 0.88`` can sit beside ``strong 0.89``;
- ``show`` prints a Metamath comment once (its slogan is the comment with the math in words);
- ``--version`` names the default bundle;
- a query longer than a channel reads says where it was cut.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

import mathlas

pytestmark = pytest.mark.slow  # each test runs the command in a subprocess

COMPACT_T4 = "proofwiki:f663329a-6d31-4580-b894-47c0f308e26a"  # compact Hausdorff => T4: its link is a search
PI1S1 = "$\\pi_1(S^1) \\cong \\mathbb{Z}$"
LONG = "Let R be a ring. " * 300


def run(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "MATHLAS_BUNDLE"}
    return subprocess.run([sys.executable, "-m", "mathlas", *argv], capture_output=True, text=True, timeout=300,
                          env={**environ, **(env or {})}, check=False)


def hit_lines(listing: str) -> list[str]:
    """The first line of each hit of a listing (`` 1. id  heading``)."""
    return [x for x in listing.splitlines() if x[:4].strip().rstrip(".").isdigit()]


# ------------------------------------------------------------------------------ a link that searches

def test_a_proofwiki_link_says_it_is_a_search(default_bundle_dir):
    query = "Let T be a compact Hausdorff space. Then T is a T4 space"
    human = run("search", query, "-k", "3", "--source", "proofwiki")
    assert human.returncode == 0, human.stderr
    links = [x.strip() for x in human.stdout.splitlines() if "proofwiki.org" in x]
    assert links and all(x.startswith("search ProofWiki: https://proofwiki.org/w/index.php?search=") for x in links)
    found = json.loads(run("search", query, "-k", "3", "--source", "proofwiki", "--json").stdout)
    assert {h["link_kind"] for h in found["hits"]} == {"search"}
    shown = run("show", COMPACT_T4).stdout.splitlines()
    assert shown[2] == "search ProofWiki: https://proofwiki.org/w/index.php?search=Compact+Hausdorff+space", shown[:4]
    assert json.loads(run("show", COMPACT_T4, "--json").stdout)["link_kind"] == "search"
    # a link to the statement's own page stays a bare address, and says it is one
    stacks = run("show", "stacks:00DV")
    assert stacks.stdout.splitlines()[2] == "https://stacks.math.columbia.edu/tag/00DV"
    assert json.loads(run("show", "stacks:00DV", "--json").stdout)["link_kind"] == "page"
    # ProofNet has no links: nothing to say
    assert json.loads(run("show", "proofnet:Rudin|exercise_1_1b", "--json").stdout)["link_kind"] == ""


def test_the_other_surfaces_say_it_too(default_bundle_dir):
    from mathlas.mcp.text import search_listing
    from mathlas.tools.informal import get_by_id, search_existing_math
    from mathlas.web import api
    from mathlas.web.theoremsearch import COLUMNS, theorem

    query = "Let T be a compact Hausdorff space. Then T is a T4 space"
    answer = dataclasses.asdict(search_existing_math(query, k=1, source_filter={"include": ["proofwiki"]}))
    line = search_listing(answer).splitlines()[1]  # the MCP text content of a full answer
    assert " search ProofWiki: https://proofwiki.org/w/index.php?search=" in line, line
    assert get_by_id(COMPACT_T4).link_kind == "search"
    # TheoremSearch's shape (POST /search) keeps its keys and adds link_kind
    b = api.open_bundle(None)
    scored = api.search_hits(b, query, k=1, columns=COLUMNS, sources=["proofwiki"]).hits[0]
    t = theorem(scored, api.bundle_facts(b))
    assert t["link"] == scored.hit.link and t["link_kind"] == "search"


# ------------------------------------------------------------------------------ a heading that is only the label

def test_a_label_heading_gives_its_place_to_the_statements_first_words(default_bundle_dir):
    found = json.loads(run("search", PI1S1, "-k", "3", "--json").stdout)
    first = found["hits"][0]
    assert first["id"] == "hott:cor:pi1s1" and first["heading"] == "pi1s1"  # the JSON keeps the fields as they are
    listing = run("search", PI1S1, "-k", "3").stdout
    assert hit_lines(listing)[0] == " 1. hott:cor:pi1s1  pi_1(S^1) = Z, while pi_n(S^1) = 0 for n>1", listing
    assert run("show", "hott:cor:pi1s1").stdout.splitlines()[0] == \
        "hott:cor:pi1s1  pi_1(S^1) = Z, while pi_n(S^1) = 0 for n>1"
    # an Open Logic label's words ("defn:since-until" headed "since until") too
    doc = "openlogic:applied-modal-logic/temporal-logic/extra-temporal-operators#defn:since-until"
    assert json.loads(run("show", doc, "--json").stdout)["heading"] == "since until"
    # the statement's words, not the list of terms the retrieval text puts before them ("Defines …")
    assert run("show", doc).stdout.splitlines()[0].startswith(f"{doc}  Truth of a formula A at t in a M: ")
    assert run("show", "planetmath:UFD").stdout.splitlines()[0] == \
        "planetmath:UFD  An integral domain D satisfying Every nonzero element of D that is not a unit …"
    # a real name stays the heading
    assert run("show", "stacks:00DV").stdout.splitlines()[0] != "stacks:00DV"


def test_an_mcp_line_leaves_a_label_heading_out(default_bundle_dir):
    """A line has the statement's first words right after the kind: no heading repeats them."""
    from mathlas.render import line

    hit = next(h for h in mathlas.open_bundle().search(PI1S1, k=3) if h.id == "hott:cor:pi1s1")
    assert line(1, dataclasses.asdict(hit)).startswith("1. hott:cor:pi1s1 corollary: pi1s1. pi_1(S^1) = Z")


# ------------------------------------------------------------------------------ -q

def test_q_keeps_the_answers_own_lines_and_drops_the_tips(default_bundle_dir):
    quiet = run("search", "Cauchy Schwartz inequality", "-q", "-k", "1")
    assert quiet.returncode == 0 and quiet.stdout.startswith(" 1. ")
    assert quiet.stderr.splitlines() == [
        "mathlas: searched for: Cauchy Schwarz inequality (schwartz -> schwarz)",
        "mathlas: a clear match: most likely the first hit (match: strong, confidence 0.95)"], quiet.stderr
    number = "1.6449340668"  # a number: without -q a tip points to `mathlas constant`, with -q it is left out
    assert f"mathlas constant {number}" in run("search", number, "-k", "1").stderr
    quiet = run("search", number, "-k", "1", "-q")
    assert "mathlas constant" not in quiet.stderr and "(match: " in quiet.stderr
    helped = " ".join(run("search", "--help").stdout.split())
    assert ("-q, --quiet no progress, tips or log messages on stderr; the answer's own lines stay (what the query "
            "was searched for, where a long query was cut, the match line)") in helped


# ------------------------------------------------------------------------------ the match of a search, every page

def test_every_page_says_the_searchs_match(default_bundle_dir):
    first = json.loads(run("search", "Yoneda lemma", "-k", "5", "--json").stdout)
    assert first["match"] == "strong"
    for offset in ("5", "10"):
        later = json.loads(run("search", "Yoneda lemma", "-k", "5", "--offset", offset, "--json").stdout)
        assert later["hits"] and later["hits"][0]["id"] not in {h["id"] for h in first["hits"]}
        assert (later["match"], later["confidence"], later["note"]) == \
            (first["match"], first["confidence"], first["note"])
    human = run("search", "Yoneda lemma", "-k", "5", "--offset", "5")
    assert human.stderr.splitlines()[-1] == ("mathlas: a clear match: most likely the first hit "
                                             "(match: strong, confidence 0.95, for the search from hit #1)")
    # a weak answer's later page points to the first hits, not to "these"
    weak = run("search", "does every vector space have a basis?", "-k", "5", "--offset", "5").stderr
    assert "likely among the first hits, but not sure (match: weak" in weak and "for the search from hit #1" in weak


def test_help_says_why_weak_can_sit_beside_strong():
    helped = " ".join(run("search", "--help").stdout.split())
    assert "weak 0.88 beside strong 0.89 is expected" in helped
    assert "the same on every page" in helped
    assert "weak 0.88 beside strong 0.89 is expected" in " ".join(run("lean", "search", "--help").stdout.split())


# ------------------------------------------------------------------------------ show: each text once

def test_show_prints_a_metamath_comment_once(default_bundle_dir):
    for doc_id, words in (("metamath:zorn", "If the union of every chain"),
                          ("metamath:cmphaushmeo", "A continuous bijection from a compact space")):
        shown = run("show", doc_id)
        assert shown.returncode == 0, shown.stderr
        below = shown.stdout.split("\n", 1)[1]  # the first line is its heading, the comment's first sentence
        assert below.count(words) == 1 and "slogan:" not in below, shown.stdout
    # a Stacks slogan says what the statement does not: shown above it
    assert "\nslogan: Finite modules have filtrations" in run("show", "stacks:00KZ").stdout


# ------------------------------------------------------------------------------ --version

def test_version_names_the_default_bundle(default_bundle_dir, tmp_path):
    shown = run("--version")
    assert shown.returncode == 0 and shown.stdout == f"mathlas {mathlas.__version__}, bundle {default_bundle_dir.name}\n"
    empty = tmp_path / "nothing-installed"
    shown = run("--version", env={"MATHLAS_DATA_DIR": str(empty)})
    assert shown.returncode == 0 and shown.stdout == \
        f"mathlas {mathlas.__version__}, no bundle installed yet (the first search installs one)\n"
    assert not empty.exists()  # nothing installed, nothing made
    shown = run("--version", env={"MATHLAS_BUNDLE": str(tmp_path / "missing")})
    assert shown.returncode == 0 and shown.stdout.startswith(f"mathlas {mathlas.__version__}, default bundle not found: ")


# ------------------------------------------------------------------------------ a long query

def test_a_long_query_says_where_it_was_cut(default_bundle_dir):
    human = run("search", LONG, "-k", "1")
    assert human.returncode == 0, human.stderr
    assert ("mathlas: the query was cut: the encoder read its first 212 of 1,500 words (256 tokens) and BM25 its "
            "first 256; a key sentence or its words search better") in human.stderr.splitlines()
    found = json.loads(run("search", LONG, "-k", "1", "--json").stdout)
    assert found["cut"] == {"dense": {"tokens": 256, "words": 212, "of": 1500}, "lexical": {"words": 256, "of": 1500}}
    from mathlas.mcp.text import search_listing
    from mathlas.tools.informal import search_existing_math

    header = search_listing(dataclasses.asdict(search_existing_math(LONG, k=1))).splitlines()[0]
    assert "; the query was cut: the encoder read its first 212 of 1,500 words (256 tokens)" in header, header
    lexical = json.loads(run("search", LONG, "-k", "1", "--json", "--mode", "lexical").stdout)
    assert lexical["cut"] == {"lexical": {"words": 256, "of": 1500}}
    short = run("search", "Let R be a ring.", "-k", "1", "--json")
    assert json.loads(short.stdout)["cut"] == {}
    assert "cut" not in run("search", "Let R be a ring.", "-k", "1").stderr


def test_a_conjecture_first_is_said_to_be_one():
    """"Does known math solve this?": a first hit that states a conjecture (PlanetMath's twin prime
    conjecture for "there are infinitely many twin primes") is a clear match, and the line says to check
    whether it has been proved (PlanetMath's Poincaré conjecture has been); a statement whose heading names a
    conjecture (ProofWiki's "The Goldbach Conjecture" page: Goldbach implies the weak conjecture) says to read
    what it proves; not on a later page, not when nothing close was found, not for a theorem."""
    from mathlas.render import search_notes

    def line(kind, match="strong", offset=0, heading="twin prime conjecture"):
        answer = {"hits": [{"kind": kind, "heading": heading}], "match": match, "confidence": 0.82, "note": ""}
        return search_notes(answer, offset)[-1]

    goldbach = line("theorem", heading="The Goldbach Conjecture: Every even integer greater than 2 is the sum of …")
    assert goldbach == ("a clear match: most likely the first hit; the first hit is about a conjecture: read what "
                        "it proves (match: strong, confidence 0.82)")
    assert "conjecture" not in line("theorem", heading="Goldbach's weak theorem")

    assert line("conjecture") == ("a clear match: most likely the first hit; the first hit states a conjecture: check "
                                  "whether it has been proved (match: strong, confidence 0.82)")
    assert "conjecture" in line("conjecture", "weak")
    assert "conjecture" not in line("conjecture", "none")
    assert "conjecture" not in line("conjecture", offset=10)


@pytest.mark.slow
def test_the_twin_prime_conjecture_is_said_to_be_open():
    p = run("search", "there are infinitely many twin primes", "-k", "3")
    said = [x for x in p.stderr.splitlines() if "(match: " in x]
    assert len(said) == 1 and "the first hit states a conjecture: check whether it has been proved" in said[0], p.stderr
    assert "planetmath:TwinPrimeConjecture" in p.stdout
