"""The search page says what it searched for (a misspelt name corrected, issue 30 part 3) and flags a
deprecated Lean declaration with its replacement (issue 31 item 17), in a real headless Chromium
against a real ``mathlas serve`` of the default bundle and the toy Lean project's bundle."""
from __future__ import annotations

from urllib.parse import quote

import pytest

from test_web_browser import WAIT, goto_ready, wait_js
from test_web_serve import WebServer, assert_clean


@pytest.fixture(scope="module")
def names_web(default_bundle_dir, lean_project_bundle_dir):
    server = WebServer("--bundle", str(default_bundle_dir), "--formal-bundle", str(lean_project_bundle_dir))
    yield server
    server.stop()
    assert_clean(server)


def test_the_page_says_what_it_searched_for(names_web, page):
    query = "fundamental theorm of algrebra"
    answer = names_web.get("/api/search", params={"q": query, "k": 20}).json()
    assert answer["searched_for"] == "fundamental theorem of algebra"
    goto_ready(page, names_web.base + "/?q=" + quote(query))
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    assert page.is_visible("#match")
    assert ("Searched for: fundamental theorem of algebra (theorm -> theorem, algrebra -> algebra)."
            in page.inner_text("#match"))


def test_a_deprecated_card_names_its_replacement(names_web, page):
    query = "sumTo add one"
    hits = names_web.get("/api/lean/search", params={"q": query, "k": 20}).json()["hits"]
    goto_ready(page, names_web.base + "/?corpus=lean&q=" + quote(query))
    wait_js(page, f"document.querySelectorAll('#results li.hit').length === {len(hits)}")
    cards = page.locator("#results li.hit")
    for i, h in enumerate(hits):
        flag = cards.nth(i).locator(".deprecated")
        if h["id"] == "lean:Toy.sumTo_add_one":
            assert flag.inner_text() == "deprecated since 2025-01-01, use lean:Toy.sumTo_succ"
            assert flag.locator("a").get_attribute("href") == "/doc/lean:Toy.sumTo_succ"
        else:
            assert flag.count() == 0, h["id"]
    page.goto(names_web.base + "/doc/lean:Toy.sumTo_add_one")
    page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
    assert "deprecated since 2025-01-01, use lean:Toy.sumTo_succ" in page.inner_text("#doc-fields")
