"""The search page on the default bundle (installed from artifacts/, as a person's first use does),
in a real headless Chromium against a real ``mathlas serve``: what only a full bundle shows.

- A statement the statement-first rule lifted above its proof says so ("statement of #N", N the
  proof's place in the list) instead of showing empty channel ranks; no card shows empty brackets.
- A hit is headed by its ``heading`` with its ``context`` beside it (``mathlas.headings.describe``):
  a Metamath hit by its human title (the comment's first sentence), a ProofWiki hit by the heading
  made from its statement. A link is labelled as what it is: ``fields.link_label``,
  or "ProofWiki search" for a link that searches the source (``fields.link_kind`` "search", or a
  ``search=`` link), or "source".
"""
from __future__ import annotations

from urllib.parse import quote

import pytest

from test_web_browser import WAIT, goto_ready, wait_js
from test_web_serve import WebServer, assert_clean

# queries whose answers hold a proof ranked above the statement it proves (PlanetMath's "proof of X")
# queries whose answer lifts a statement above its proof (on 1.4.0 the first: planetmath:WilsonsTheorem, sixth,
# above its proof; the others lifted one on 1.3.0)
LIFTING_QUERIES = ("proof of Wilson's theorem", "proof of the arithmetic geometric means inequality",
                   "proof of Cauchy-Schwarz inequality", "proof of Euler Fermat theorem")
TITLED = {"metamath": "the square root of 2 is irrational", "proofwiki": "sum of the angles of a triangle"}


@pytest.fixture(scope="module")
def default_web(default_bundle_dir):
    server = WebServer("--bundle", str(default_bundle_dir))
    yield server
    server.stop()
    assert_clean(server)


def cards_of(web, pg, params: dict) -> list[dict]:
    """The hits ``/api/search`` gives for ``params`` (the page asks for 20), once the page shows them."""
    hits = web.get("/api/search", params={**params, "k": 20}).json()["hits"]
    url = "/?" + "&".join(f"{k}={quote(str(v))}" for k, v in params.items())
    goto_ready(pg, web.base + url)
    wait_js(pg, f"document.querySelectorAll('#results li.hit').length === {len(hits)}")
    assert pg.locator("#results li.hit .meta > code").all_inner_texts() == [h["id"] for h in hits]
    return hits


def test_a_lifted_statement_says_whose_statement_it_is(default_web, page):
    for query in LIFTING_QUERIES:
        hits = default_web.get("/api/search", params={"q": query, "k": 20}).json()["hits"]
        if any(h["fields"].get("statement_of") for h in hits):
            break
    else:
        pytest.fail(f"none of {LIFTING_QUERIES} lifts a statement above its proof in the default bundle")
    hits = cards_of(default_web, page, {"q": query})
    place = {h["id"]: i + 1 for i, h in enumerate(hits)}
    cards = page.locator("#results li.hit")
    lifted = 0
    for i, h in enumerate(hits):
        card, proof = cards.nth(i), h["fields"].get("statement_of")
        if proof:
            lifted += 1
            why = f"statement of #{place[proof]}" if proof in place else f"statement of {proof}"
            assert card.locator(".why").inner_text() == why
            assert place.get(proof, 99) > i + 1  # the proof ranks below its statement
        else:
            assert card.locator(".why").count() == 0
        assert "[]" not in card.inner_text() and "{}" not in card.inner_text()
    assert lifted


@pytest.mark.parametrize("source", sorted(TITLED))
def test_human_titles_and_link_labels(default_web, page, source):
    hits = cards_of(default_web, page, {"q": TITLED[source], "source": source})
    wait_js(page, "document.querySelectorAll('#results .statement:not([data-loaded])').length === 0")  # documents arrived
    cards = page.locator("#results li.hit")
    for i, h in enumerate(hits):
        card = cards.nth(i)
        if source == "metamath":  # the comment's first sentence, not the label (which the id says)
            assert h["heading"] == h["title"].strip() and h["label"] == h["name"]
        shown = card.locator("a.open")  # a ProofWiki heading with a formula is drawn from its TeX: titled with the text
        assert h["heading"] in (shown.inner_text(), shown.get_attribute("title"))
        beside = card.locator(".meta .second")
        assert (beside.inner_text() if beside.count() else "") == h["context"]
        if h["link"]:  # what the link is, the document's fields say (a hit carries few fields)
            fields = {**default_web.get("/api/doc/" + h["id"]).json()["fields"], **h["fields"]}
            search = fields.get("link_kind") == "search" or "search=" in h["link"]
            label = fields.get("link_label") or ("ProofWiki search" if search else "source")
            assert card.locator("a.out").inner_text() == label + " ↗"
        else:
            assert card.locator("a.out").count() == 0


def test_a_slogan_shows_only_when_the_statement_does_not_say_it(default_web, page):
    """Metamath's slogan is its comment in words, which its statement shows typeset: shown once.
    A Stacks slogan says something the statement does not: shown above it."""
    for doc_id, shown in (("metamath:sqrt2irr", False), ("stacks:00KZ", True)):
        doc = default_web.get("/api/doc/" + doc_id).json()
        assert doc["slogan"], doc_id
        page.goto(default_web.base + "/doc/" + doc_id)
        page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
        assert page.is_visible("#doc-slogan") == shown, doc_id


# Documents whose display text once broke the page's typesetting: \textit{Alg} inside math (the
# display build expands Stacks' \Alg to it; the page's emphasis markers went into KaTeX: 1,032 Stacks
# documents), Metamath's bare # (set size), \^ of ..^ and \text{\iota}.
TYPESET = ("stacks:06Z4", "stacks:06UT", "metamath:df-hash", "metamath:hashginv", "metamath:df-fzo",
           "metamath:df-iota")


def test_display_text_typesets_cleanly(default_web, page):
    from test_web_browser import katex_trouble

    trouble = {}
    for doc_id in TYPESET:
        page.goto(default_web.base + "/doc/" + doc_id)
        page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
        assert page.locator("#doc-body .katex").count() > 0, doc_id
        if found := katex_trouble(page, "#doc"):
            trouble[doc_id] = found[:2]
    assert not trouble


def test_the_page_says_which_abbreviations_it_expanded(default_web, page):
    """An abbreviation searched with its expansions (issue 22 part 3) is named above the hits, as
    /api/search's ``expanded`` says; a query without one shows no such line."""
    answer = default_web.get("/api/search", params={"q": "CRT", "k": 20}).json()
    assert answer["expanded"] == "expanded CRT: Chinese remainder theorem"
    goto_ready(page, default_web.base + "/?q=CRT")
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    assert page.is_visible("#match")
    assert "Expanded CRT: Chinese remainder theorem." in page.inner_text("#match")
    plain = default_web.get("/api/search", params={"q": "Nakayama lemma", "k": 20}).json()
    assert plain["expanded"] == "" and plain["match"] == "strong"
    goto_ready(page, default_web.base + "/?q=Nakayama+lemma")
    wait_js(page, "document.querySelector('#status').textContent.includes('results from')")
    line = page.inner_text("#match")   # how sure, and nothing about an expansion
    assert line.startswith("A clear match: most likely the first hit (match: strong") and "Searched" not in line


def test_the_also_in_line_names_two_copies_a_source_and_counts_the_rest(default_web, page):
    """The page listed every copy (with a formal bundle, seven Mathlib names on eight lines above
    Nakayama's lemma): two a source now, linked, and "+N" for the rest, as the CLI's line."""
    hits = cards_of(default_web, page, {"q": "product of positive numbers is positive"})
    i = next(i for i, h in enumerate(hits) if h["id"] == "metamath:mulgt0ii")
    assert len(hits[i]["also_in"]) == 3
    line = page.locator("#results li.hit").nth(i).locator(".also-in")
    assert " ".join(line.inner_text().split()) == "also in Metamath mulgt0 / mulgt0d +1"
    links = line.locator("a")
    assert links.count() == 2 and [links.nth(j).get_attribute("title") for j in range(2)] == \
        ["metamath:mulgt0", "metamath:mulgt0d"]
