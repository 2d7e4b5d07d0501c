"""The search page on a Lean bundle, in a real headless Chromium against a real ``mathlas serve``:
the bundle ``mathlas index build-lean`` makes of the toy project in tests/data/lean-project (every
declaration has a docstring; its theorems use each other, so dependencies go both ways).

A Lean card shows the declaration's signature and docstring (the fields the JSON has, under
``fields``); a declaration's page shows its signature, docstring, module, link and licence and both
directions of its dependencies at once, each list equal to ``/api/lean/deps``'s; the kind field
offers the Lean bundle's kinds and the server's refusal of another shows in the page.
"""
from __future__ import annotations

from urllib.parse import quote, urlparse

import pytest

from test_web_browser import WAIT, goto_ready, wait_js
from test_web_serve import WebServer, assert_clean

QUERY = "doubling a natural number"


@pytest.fixture(scope="module")
def lean_web(tiny_bundle_dir, lean_project_bundle_dir):
    server = WebServer("--bundle", str(tiny_bundle_dir), "--formal-bundle", str(lean_project_bundle_dir))
    yield server
    server.stop()
    assert_clean(server)


def words(text: str) -> str:
    """Text as a person reads it: Markdown marks gone (``**``, code ticks), whitespace collapsed."""
    from mathlas.headings import plain_markdown

    return " ".join(plain_markdown(text).replace("`", "").split())


def test_lean_cards_show_signature_and_docstring(lean_web, page):
    hits = lean_web.get("/api/lean/search", params={"q": QUERY, "k": 20}).json()["hits"]
    assert sum(bool(h["fields"].get("signature")) for h in hits) >= 5
    assert sum(bool(h["fields"].get("docstring")) for h in hits) >= 5
    goto_ready(page, lean_web.base + "/?corpus=lean&q=" + quote(QUERY))
    wait_js(page, f"document.querySelectorAll('#results li.hit').length === {len(hits)}")
    cards = page.locator("#results li.hit")
    for i, h in enumerate(hits):
        card, f = cards.nth(i), h["fields"]
        assert card.locator("a.open").inner_text() == h["name"]
        assert f["module"] in card.locator(".meta").inner_text()
        if f.get("signature"):
            assert words(f["signature"]) in words(card.locator("pre.lean").inner_text()), h["id"]
        if f.get("docstring"):
            assert words(card.locator(".docstring").inner_text()) == words(f["docstring"]), h["id"]
        else:
            assert card.locator(".docstring").count() == 0
        if h["link"]:
            assert card.locator("a.out").get_attribute("href") == h["link"]
        else:  # a project with no public home: no link, never another project's
            assert card.locator("a.out").count() == 0


def test_lean_document_page_shows_dependencies_both_ways(lean_web, page):
    hits = lean_web.get("/api/lean/search", params={"q": QUERY, "k": 20}).json()["hits"]

    def deps(doc_id: str, direction: str) -> list[str]:
        r = lean_web.get(f"/api/lean/deps/{doc_id}", params={"direction": direction, "limit": 200}).json()
        return [d["id"].removeprefix("lean:") for d in r["declarations"]]

    both = next(((h, deps(h["id"], "uses"), deps(h["id"], "used_by")) for h in hits
                 if deps(h["id"], "uses") and deps(h["id"], "used_by")), None)
    assert both, "no hit of the query both uses and is used by another declaration"
    hit, uses, used_by = both
    doc = lean_web.get("/api/doc/" + hit["id"]).json()
    page.goto(lean_web.base + "/doc/" + quote(hit["id"], safe=":"))
    page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
    assert page.inner_text("#doc-name") == hit["id"].removeprefix("lean:")
    assert words(doc["fields"]["signature"]) in words(page.inner_text("#doc-signature"))
    assert words(page.inner_text("#doc-docstring")) == words(doc["fields"]["docstring"])
    fields = page.inner_text("#doc-fields")
    assert doc["fields"]["module"] in fields and doc["license"] in fields
    assert page.locator("#doc-fields a.out").count() == (1 if doc["link"] else 0)
    if doc["link"]:
        assert page.locator("#doc-fields a.out").get_attribute("href") == doc["link"]
    wait_js(page, f"document.querySelectorAll('#deps-uses li a.dep').length === {len(uses)} && "
                  f"document.querySelectorAll('#deps-used_by li a.dep').length === {len(used_by)}")
    assert page.locator("#deps-uses li a.dep").all_inner_texts() == uses
    assert page.locator("#deps-used_by li a.dep").all_inner_texts() == used_by
    assert page.inner_text("#deps-uses-count") == f"({len(uses)})"
    # follow one: its page lists where we came from among what uses it
    page.locator("#deps-uses li a.dep").first.click()
    wait_js(page, f"document.querySelector('#doc-name').textContent === {uses[0]!r}")
    assert urlparse(page.url).path == "/doc/lean:" + uses[0]
    name = hit["id"].removeprefix("lean:")
    wait_js(page, f"[...document.querySelectorAll('#deps-used_by li a.dep')].some(a => a.textContent === {name!r})")


def test_lean_kinds_and_the_servers_refusal(lean_web, page):
    kinds = lean_web.get("/api/bundles").json()["formal"]["kinds"]
    assert {"theorem", "def"} <= set(kinds)
    goto_ready(page, lean_web.base + "/?corpus=lean&q=" + quote(QUERY))
    page.wait_for_selector("#results li.hit", timeout=WAIT)
    assert page.eval_on_selector_all("#kind option", "os => os.map(o => o.value)") == ["", *kinds]
    page.select_option("#kind", "def")
    wait_js(page, "location.search.includes('kind=def')")
    wait_js(page, "document.querySelectorAll('#results .kind').length > 0 && "
                  "[...document.querySelectorAll('#results .kind')].every(k => k.textContent === 'def')")
    answer = lean_web.get("/api/lean/search", params={"q": QUERY, "kind": "theorm"})
    assert answer.status_code == 422
    page.expected_statuses.add(422)
    goto_ready(page, lean_web.base + "/?corpus=lean&kind=theorm&q=" + quote(QUERY))
    wait_js(page, "document.querySelector('#status').classList.contains('error')")
    assert page.inner_text("#status") == answer.json()["error"]
    assert page.locator("#results li.hit").count() == 0


def test_lean_card_and_page_say_also_known_as(lean_web, page):
    """The toy project's docs/100.yaml names Toy.gauss_sum "Gauss's Summation Formula": its card and
    its page say so (as text: the alias is corpus text), a card of a declaration with none does not."""
    query = "Gauss's Summation Formula"
    hits = lean_web.get("/api/lean/search", params={"q": query, "k": 20}).json()["hits"]
    assert hits[0]["id"] == "lean:Toy.gauss_sum" and hits[0]["fields"]["aliases"] == [query]
    goto_ready(page, lean_web.base + "/?corpus=lean&q=" + quote(query))
    wait_js(page, f"document.querySelectorAll('#results li.hit').length === {len(hits)}")
    cards = page.locator("#results li.hit")
    assert cards.nth(0).locator(".aka").inner_text() == "also known as Gauss's Summation Formula"
    for i, h in enumerate(hits):
        assert cards.nth(i).locator(".aka").count() == (1 if h["fields"]["aliases"] else 0), h["id"]
    page.goto(lean_web.base + "/doc/lean:Toy.gauss_sum")
    page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
    assert "also known as\nGauss's Summation Formula" in page.inner_text("#doc-fields")


def test_a_lean_docstring_is_markdown(lean_web, page):
    """Issue 31 item 9: ``/-- **Gauss's formula**: ... `n * (n + 1)`. -/`` shows bold and code, no
    asterisks or ticks, on the card and on the declaration's page."""
    hits = lean_web.get("/api/lean/search", params={"q": "Gauss's formula", "k": 20}).json()["hits"]
    assert hits[0]["id"] == "lean:Toy.gauss_sum" and "**Gauss's formula**" in hits[0]["fields"]["docstring"]
    goto_ready(page, lean_web.base + "/?corpus=lean&q=" + quote("Gauss's formula"))
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    for where in ("#results li.hit:first-child .docstring", "#doc-docstring"):
        if where == "#doc-docstring":
            page.goto(lean_web.base + "/doc/lean:Toy.gauss_sum")
            page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
        box = page.locator(where)
        assert box.locator("strong").inner_text() == "Gauss's formula"
        assert box.locator("code").all_inner_texts() == ["n", "n * (n + 1)"]
        assert "*" not in box.inner_text().replace("n * (n + 1)", "") and "`" not in box.inner_text()


def test_a_name_typed_as_words_says_so_on_the_page(lean_web, page):
    """``/api/lean/search``'s ``expanded`` for a name typed as words ("also searched as a name: double
    succ -> Toy.double_succ") is the line above the hits, capitalised (the page had read any line but
    "searched for:" as an abbreviation: "Searched with also searched as a name: ...")."""
    answer = lean_web.get("/api/lean/search", params={"q": "double succ", "k": 10}).json()
    assert answer["expanded"] == "also searched as a name: double succ -> Toy.double_succ"
    goto_ready(page, lean_web.base + "/?corpus=lean&q=" + quote("double succ"))
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    line = page.inner_text("#match")
    assert "Also searched as a name: double succ -> Toy.double_succ." in line and "Searched with" not in line
    assert page.locator("#results li.hit a.open").first.inner_text() == "Toy.double_succ"
