"""The search page in a real headless Chromium (Debian's ``chromium``, driven by Playwright's Python
client with ``executable_path``: no browser is downloaded) against a real ``mathlas serve``.

A person's path through the page: land on it and see what is indexed and what to try, type a query
and press Enter, see hits with rendered mathematics (no ``$`` delimiter left, nothing KaTeX could not
draw), move with the arrow keys, open a document page, tick a filter and see the results change,
pick a kind from the bundle's kinds, meet the server's refusal of a kind it does not know, be told
what to try after an empty query or no results, share the URL, open a Lean declaration and follow a
dependency link; give the token a server asks for, in the page's own words; and the page stays
readable on a phone. The Lean project bundle and the default
bundle have their own modules (test_web_browser_lean.py, test_web_browser_default.py), which reuse
the helpers here; the fixtures (``web``, ``browser``, ``page``) are conftest.py's. Skips, saying why, only when no Chromium or no Playwright is
installed (``.ci/run`` installs both).
"""
from __future__ import annotations

from urllib.parse import parse_qs, quote, urlparse

import pytest

from conftest import CHROMIUM

if not CHROMIUM:
    pytest.skip("no Chromium installed (Debian: apt-get install -y chromium; .ci/run does it); "
                "the browser tests need a real browser", allow_module_level=True)
pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed "
                    "(pip install -e '.[test]')")

WAIT = 30_000  # ms
QUERY = "a finitely generated module over a ring"


def wait_js(pg, expression: str, timeout_ms: int = WAIT) -> None:
    """Poll ``expression`` in the page until it is true; while a followed link loads the next document
    the expression may read an element that is not there yet, and is asked again. (Playwright's
    wait_for_function evaluates a string inside the page, which the page's Content-Security-Policy
    rightly forbids.)"""
    import time

    from playwright.sync_api import Error

    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            if pg.evaluate(expression):
                return
        except Error as e:   # the page is between two documents (a link followed): the element is not there yet
            if "null" not in str(e) and "context was destroyed" not in str(e):
                raise
        assert time.monotonic() < deadline, f"timed out waiting for: {expression}"
        pg.wait_for_timeout(50)


# What KaTeX could not draw: a formula it could not parse (.katex-error, whose colour the page's
# stylesheet sets) and a command it does not know, which it draws as text in its error colour.
KATEX_TROUBLE = """(root) => {
  const scope = root ? document.querySelector(root) : document;
  const red = [...scope.querySelectorAll('.katex *')].filter(e => getComputedStyle(e).color === 'rgb(204, 0, 0)');
  return [...scope.querySelectorAll('.katex-error')].map(e => (e.getAttribute('title') || '').slice(0, 120))
         .concat(red.map(e => 'drawn in the error colour: ' + e.textContent.slice(0, 60)));
}"""


def katex_trouble(pg, root: str | None = None) -> list[str]:
    return pg.evaluate(KATEX_TROUBLE, root)


def goto_ready(pg, url: str) -> None:
    """Open a search page URL and wait until the page has filled its form from it."""
    pg.goto(url)
    wait_js(pg, "document.body.dataset.ready === 'true'")


def rendered_statements(pg):
    pg.wait_for_selector("#results li.hit .statement.rendered", timeout=WAIT)
    return pg.locator("#results li.hit .statement.rendered")


def test_type_a_query_and_see_rendered_math(web, page):
    page.goto(web.base + "/")
    # the page fills its form from the URL once it knows the bundles: type after that (on a busy
    # machine the bundles can arrive after the keystrokes, and the form was reset under them)
    wait_js(page, "document.body.dataset.ready === 'true'")
    page.fill("#q", QUERY)
    page.press("#q", "Enter")
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    assert "results from tiny-0.1.0" in page.inner_text("#status")
    assert parse_qs(urlparse(page.url).query)["q"] == [QUERY]   # the search is in the URL
    statements = rendered_statements(page)
    page.wait_for_timeout(500)  # the rest of the bodies arrive
    texts = statements.all_inner_texts()
    assert texts and all("$" not in t for t in texts), [t for t in texts if "$" in t]
    # KaTeX rendered the math, offline. (A few source formulas KaTeX cannot typeset, e.g. \xymatrix
    # diagrams or a URL a PlanetMath author put between dollars, show as the source in red.)
    assert page.locator("#results .katex").count() > 3 * page.locator("#results .katex-error").count()
    hit = page.locator("#results li.hit").first
    assert "lexical #" in hit.get_attribute("title") or "dense #" in hit.get_attribute("title")
    assert hit.locator("a.out").get_attribute("href").startswith("https://")


def test_keyboard_and_document_page(web, page):
    page.goto(web.base + "/?q=" + QUERY.replace(" ", "+"))
    page.wait_for_selector("#results li.hit", timeout=WAIT)
    page.focus("#q")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    second = page.locator("#results a.open").nth(1)
    assert page.evaluate("document.activeElement.dataset.index") == "1"
    title, href = second.inner_text(), second.get_attribute("href")
    page.keyboard.press("ArrowUp")
    assert page.evaluate("document.activeElement.dataset.index") == "0"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
    assert urlparse(page.url).path == urlparse(href).path
    assert page.inner_text("#doc-name") == title
    body = page.inner_text("#doc-body")
    assert body.strip() and "$" not in body
    fields = page.inner_text("#doc-fields")
    assert "license" in fields and "tiny-0.1.0" in fields
    page.go_back()
    page.wait_for_selector("#results li.hit", timeout=WAIT)


def test_filter_and_share_the_url(web, page, browser):
    page.goto(web.base + "/?q=exercise")
    page.wait_for_selector("#results li.hit", timeout=WAIT)
    page.click("#sources-field summary")
    page.check("#sources input[value='proofnet']")
    page.click("#sources-field summary")  # closing the list searches again
    wait_js(page, "location.search.includes('source=proofnet')")
    wait_js(page, "[...document.querySelectorAll('#results .badge')].every(b => b.textContent === 'proofnet')")
    shared = page.url
    ids = page.locator("#results .meta > code").all_inner_texts()
    other = browser.new_page()  # someone opening the shared link
    try:
        other.goto(shared)
        other.wait_for_selector("#results li.hit", timeout=WAIT)
        assert other.locator("#results .meta > code").all_inner_texts() == ids
        assert other.is_checked("#sources input[value='proofnet']")
        assert other.input_value("#q") == "exercise"
    finally:
        other.close()
    page.select_option("#mode", "lexical")
    wait_js(page, "location.search.includes('mode=lexical')")


def test_lean_declaration_page_and_dependency_link(web, page):
    page.goto(web.base + "/?corpus=lean&q=prime+two+le")
    page.wait_for_selector("#results li.hit", timeout=WAIT)
    first = page.locator("#results a.open").first
    assert first.inner_text() == "Nat.Prime.two_le"
    first.click()
    page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
    assert page.inner_text("#doc-name") == "Nat.Prime.two_le"
    assert "Prime p → 2 ≤ p" in page.inner_text("#doc-signature")
    assert "Mathlib." in page.inner_text("#doc-fields")
    page.wait_for_selector("#deps-uses li a.dep", timeout=WAIT)
    target = page.locator("#deps-uses li a.dep").first
    name = target.inner_text()
    target.click()
    wait_js(page, f"document.querySelector('#doc-name') && document.querySelector('#doc-name').textContent === {name!r}")
    assert urlparse(page.url).path == "/doc/lean:" + name
    # Nat.Prime.two_le (at least) uses it: it is listed under "Used by", with no click needed
    wait_js(page, "[...document.querySelectorAll('#deps-used_by li a.dep')].some(a => a.textContent === 'Nat.Prime.two_le')")


def test_readable_on_a_phone(web, browser):
    pg = browser.new_page()
    pg.set_viewport_size({"width": 375, "height": 740})
    try:
        pg.goto(web.base + "/?q=" + QUERY.replace(" ", "+"))
        rendered_statements(pg)
        assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        box = pg.locator("#q").bounding_box()
        assert box and box["width"] > 200
        goto_ready(pg, web.base + "/")  # the landing part: sources table and examples fit too
        assert pg.is_visible("#indexed table.sources")
        assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    finally:
        pg.close()


# ------------------------------------------------------------------------------ issue 21: the page tells
# what it searches, filters apply as they change, and every empty answer says what to try

def test_landing_page_says_what_is_indexed(web, page):
    served = web.get("/api/bundles").json()
    tiny = served["served"][0]
    goto_ready(page, web.base + "/")
    assert page.is_visible("#about")
    block = page.locator(f"#indexed .bundle[data-bundle='{tiny['label']}']")
    assert f"{tiny['count']} statements" in block.locator("h3").inner_text()
    rows = block.locator("tbody tr")
    assert rows.count() == len(tiny["sources"])
    for i, (name, info) in enumerate(tiny["sources"].items()):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells == [name, f"{info['count']:,}", info["license"]]
        assert rows.nth(i).get_attribute("title") == info["attribution"]
    assert served["formal"]["label"] in page.inner_text("#indexed")
    examples = page.locator("#examples a.example")
    assert examples.count() >= 3
    lean_example = page.locator("#examples a.example[data-corpus='lean']")
    assert lean_example.count() == 1  # this server has a formal bundle
    first = examples.first
    query = first.inner_text()
    first.click()
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    assert parse_qs(urlparse(page.url).query)["q"] == [query]
    assert page.input_value("#q") == query
    assert not page.is_visible("#about")
    lean_url = lean_example.get_attribute("href")
    assert parse_qs(urlparse(lean_url).query)["corpus"] == ["lean"]


def test_ticking_a_source_searches_again_at_once(web, page):
    goto_ready(page, web.base + "/?q=exercise")
    page.wait_for_selector("#results li.hit", timeout=WAIT)
    assert len(set(page.locator("#results .badge").all_inner_texts())) > 1
    page.click("#sources-field summary")
    page.check("#sources input[value='proofnet']")  # the list stays open: no other action
    wait_js(page, "location.search.includes('source=proofnet')")
    wait_js(page, "document.querySelectorAll('#results .badge').length > 0 && "
                  "[...document.querySelectorAll('#results .badge')].every(b => b.textContent === 'proofnet')")
    assert page.inner_text("#sources-count") == "(1)"
    page.check("#sources input[value='hott']")
    wait_js(page, "location.search.includes('source=hott')")
    wait_js(page, "new Set([...document.querySelectorAll('#results .badge')].map(b => b.textContent)).size === 2")
    page.uncheck("#sources input[value='proofnet']")
    page.uncheck("#sources input[value='hott']")
    wait_js(page, "!location.search.includes('source=')")
    wait_js(page, "new Set([...document.querySelectorAll('#results .badge')].map(b => b.textContent)).size > 2")


def test_kind_field_offers_the_bundles_kinds(web, page):
    served = web.get("/api/bundles").json()
    kinds = served["served"][0]["kinds"]
    goto_ready(page, web.base + "/?q=exercise")
    page.wait_for_selector("#results li.hit", timeout=WAIT)
    assert page.evaluate("document.querySelector('#kind').tagName") == "SELECT"
    values = page.eval_on_selector_all("#kind option", "os => os.map(o => o.value)")
    assert values == ["", *kinds]
    page.select_option("#kind", "exercise")  # applies at once
    wait_js(page, "location.search.includes('kind=exercise')")
    wait_js(page, "document.querySelectorAll('#results .kind').length > 0 && "
                  "[...document.querySelectorAll('#results .kind')].every(k => k.textContent === 'exercise')")
    page.select_option("#corpus", "lean")  # the Lean bundle's kinds
    wait_js(page, "[...document.querySelectorAll('#kind option')].some(o => o.value === 'instance')")
    values = page.eval_on_selector_all("#kind option", "os => os.map(o => o.value)")
    assert values == ["", *served["formal"]["kinds"]]


def test_unknown_kind_shows_the_servers_one_line_error(web, page):
    answer = web.get("/api/search", params={"q": "group", "kind": "theorm"})
    assert answer.status_code == 422
    message = answer.json()["error"]
    page.expected_statuses.add(422)
    goto_ready(page, web.base + "/?q=group&kind=theorm")
    wait_js(page, "document.querySelector('#status').classList.contains('error')")
    assert page.inner_text("#status") == message
    assert "\n" not in message and "theorm" in message
    assert page.locator("#results li.hit").count() == 0
    # the kind field shows what was asked for, among the bundle's kinds, as not one of them
    assert page.evaluate("document.querySelector('#kind').tagName") == "SELECT"
    assert page.input_value("#kind") == "theorm"
    assert page.inner_text("#kind option:checked") == "theorm (not in this bundle)"


def test_empty_query_says_what_to_try(web, page):
    goto_ready(page, web.base + "/")
    page.press("#q", "Enter")
    wait_js(page, "document.querySelector('#status').textContent.length > 0")
    assert "Type a query" in page.inner_text("#status")
    assert page.is_visible("#examples a.example")
    assert page.locator("#results li.hit").count() == 0


def test_no_results_say_so_and_offer_a_way_out(web, page):
    goto_ready(page, web.base + "/?q=group&source=proofnet&kind=lemma")  # ProofNet has exercises only
    wait_js(page, "!document.querySelector('#suggest').hidden")
    status = page.inner_text("#status")
    assert status.startswith("No results for “group” in tiny-0.1.0") and "proofnet" in status and "lemma" in status
    tries = page.locator("#suggest a").all_inner_texts()
    assert "search every source" in tries and "any kind" in tries
    page.click("#suggest a:text('any kind')")
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    assert "kind=" not in page.url and "source=proofnet" in page.url
    assert set(page.locator("#results .badge").all_inner_texts()) == {"proofnet"}
    assert page.is_hidden("#suggest")
    # a word no document has, by keywords only
    goto_ready(page, web.base + "/?q=zzxqvw&mode=lexical")
    wait_js(page, "!document.querySelector('#suggest').hidden")
    assert page.inner_text("#status").startswith("No results for “zzxqvw”")
    assert "hybrid mode (keywords and meaning)" in page.locator("#suggest a").all_inner_texts()


def test_every_statement_renders_without_katex_trouble(web, page, tiny):
    """Every document of the tiny bundle (every informal source), on its document page and as a
    search card: KaTeX draws all of it, nothing as a parse error or in its error colour."""
    ids = tiny.table.column("id").to_pylist()
    trouble = {}
    for doc_id in ids:
        page.goto(web.base + "/doc/" + quote(doc_id, safe=":"))
        page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
        found = katex_trouble(page, "#doc")
        if found:
            trouble[doc_id] = found
    sources = sorted({i.split(":", 1)[0] for i in ids})
    for source in sources:  # the cards: every document of the source is a hit of a 20-hit search
        goto_ready(page, web.base + f"/?q=a&source={source}")
        page.wait_for_selector("#results li.hit", timeout=WAIT)
        wait_js(page, "document.querySelectorAll('#results .statement:not([data-loaded])').length === 0")  # bodies arrived
        found = katex_trouble(page, "#results")
        if found:
            trouble["cards of " + source] = found
    assert not trouble, "KaTeX could not draw: " + "; ".join(
        f"{where}: {found[0]}" + (f" (+{len(found) - 1} more)" if len(found) > 1 else "") for where, found in trouble.items())


def test_an_xy_pic_diagram_is_drawn(web, page):
    """The snake lemma's diagram (Stacks writes it with xy-pic's \\xymatrix, which KaTeX lacks): its
    objects and arrows, with the vertical maps' labels, in one typeset array."""
    page.goto(web.base + "/doc/stacks:07JW")
    page.wait_for_selector("#doc:not([hidden])", timeout=WAIT)
    assert katex_trouble(page, "#doc") == []
    display = page.locator("#doc-body .katex-display").first.locator(".katex-html")
    diagram = display.inner_text()
    for glyph in ("X", "Y", "Z", "U", "V", "W", "α", "β", "γ"):
        assert glyph in diagram, glyph
    assert display.locator(".x-arrow").count() == 6  # the rows' horizontal maps, drawn as extensible arrows
    assert diagram.count("↓") == 3                   # alpha, beta, gamma


def test_a_shared_url_names_its_bundle_by_name(web, page):
    goto_ready(page, web.base + "/?q=primes&bundle=papers")
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    assert "results from papers-0.1.0" in page.inner_text("#status")
    assert page.input_value("#bundle") == "papers-0.1.0" and page.is_visible("#bundle-field")
    assert set(page.locator("#results .badge").all_inner_texts()) == {"arxiv"}
    page.select_option("#bundle", "tiny-0.1.0")  # another bundle: its own sources, searched at once
    wait_js(page, "location.search.includes('bundle=tiny-0.1.0')")
    wait_js(page, "document.querySelector('#status').textContent.includes('results from tiny-0.1.0')")
    assert page.locator("#sources input[value='stacks']").count() == 1
    page.go_back()  # the URL that named it "papers"
    wait_js(page, "document.querySelector('#status').textContent.includes('results from papers-0.1.0')")
    assert page.input_value("#bundle") == "papers-0.1.0"


def test_the_page_says_when_nothing_close_was_found(web, page):
    """The answer's match (issue 22 part 6) shows on the page as the JSON says it: a note above the
    hits, "a clear match" when it is strong (it showed nothing then, which read as nothing said)."""
    for q in ("recipe for a chocolate cake with strawberries", "Noetherian ring"):
        answer = web.get("/api/search", params={"q": q, "k": 20}).json()
        goto_ready(page, web.base + "/?q=" + q.replace(" ", "+"))
        wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
        assert page.is_visible("#match"), q
        text = page.inner_text("#match")  # the note once, as a sentence (issue 31 item 10)
        note = answer["note"] or "a clear match: most likely the first hit"
        assert text.lower().count(note.lower()) == 1 and f"match: {answer['match']}" in text, (q, text)
    assert web.get("/api/search", params={"q": "recipe for a chocolate cake with strawberries"}).json()["match"] != "strong"


# ------------------------------------------------------------------------------ a shared URL's source and mode
# (walk-through #6): a source or mode the server does not know is sent as asked, so its one-line
# refusal shows under the box, as a kind's does; a source in another case is that source

def searches_sent(pg) -> list[dict]:
    """The query strings of the page's /api/search requests from now on (a list that fills as they go)."""
    sent: list[dict] = []
    pg.on("request", lambda r: sent.append(parse_qs(urlparse(r.url).query))
          if urlparse(r.url).path == "/api/search" else None)
    return sent


@pytest.mark.parametrize("url, params, field, shown", [
    ("/?q=group&source=arxiv", {"q": "group", "source": "arxiv"}, "source", "arxiv"),
    ("/?q=group&mode=fuzzy", {"q": "group", "mode": "fuzzy"}, "mode", "fuzzy (not a mode)"),
])
def test_an_unknown_source_or_mode_shows_the_servers_refusal(web, page, url, params, field, shown):
    answer = web.get("/api/search", params=params)
    assert answer.status_code == 422
    message = answer.json()["error"]
    page.expected_statuses.add(422)
    sent = searches_sent(page)
    goto_ready(page, web.base + url)
    wait_js(page, "document.querySelector('#status').classList.contains('error')")
    assert page.inner_text("#status") == message  # the server's one line, not unfiltered results
    assert page.locator("#results li.hit").count() == 0
    assert sent and all(s[field] == [params[field]] for s in sent)  # sent as asked, every time
    if field == "mode":
        assert page.input_value("#mode") == "fuzzy" and page.inner_text("#mode option:checked") == shown
        page.select_option("#mode", "lexical")  # a real mode: the results come
    else:
        box = page.locator("#sources label", has=page.locator("input[value='arxiv']"))
        assert box.locator("input").is_checked() and "not in this bundle" in box.text_content()  # the list is closed
        assert page.inner_text("#sources-count") == "(1)"
        page.click("#sources-field summary")
        box.locator("input").uncheck()  # unticked: every source again
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    assert not page.evaluate("document.querySelector('#status').classList.contains('error')")


def test_a_source_in_another_case_is_that_source(web, page):
    """``source=ProofNet`` (TheoremSearch's habit) ticks proofnet, as POST /search reads it."""
    ts = web.post("/search", json={"query": "exercise", "sources": ["ProofNet"], "n_results": 5}).json()
    assert {t["paper"]["paper_id"] for t in ts["theorems"]} == {"proofnet"}
    sent = searches_sent(page)
    goto_ready(page, web.base + "/?q=exercise&source=ProofNet")
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    assert set(page.locator("#results .badge").all_inner_texts()) == {"proofnet"}
    assert page.is_checked("#sources input[value='proofnet']") and page.inner_text("#sources-count") == "(1)"
    assert page.locator("#sources input").count() == len(web.get("/api/bundles").json()["served"][0]["sources"])
    assert sent[-1]["source"] == ["proofnet"]


@pytest.mark.slow
def test_without_a_formal_bundle_the_landing_page_says_what_the_operator_can_do(tiny_bundle_dir, tmp_path, page):
    """No formal bundle (none installed, no --formal-bundle): the landing page says so in a sentence
    that names `mathlas serve --formal-bundle` (it read "No Lean bundle is served. build it with ...")."""
    from test_web_serve import WebServer, assert_clean

    server = WebServer("--bundle", str(tiny_bundle_dir), env={"MATHLAS_DATA_DIR": str(tmp_path / "data")})
    try:
        formal = server.get("/api/bundles").json()["formal"]
        goto_ready(page, server.base + "/")
        line = page.locator("#indexed p.muted", has_text="Lean").inner_text()
        assert line == f"No Lean bundle is served; {formal['how_to_build']}."
        assert "restart it with `mathlas serve --formal-bundle NAME_OR_DIR`" in line and "bundle=PATH" not in line
        assert page.is_disabled("#corpus option[value='lean']")
        page.expected_statuses.add(404)  # a shared Lean URL: the server's line, what its operator can do
        goto_ready(page, server.base + "/?q=prime&corpus=lean")
        wait_js(page, "document.querySelector('#status').classList.contains('error')")
        assert page.inner_text("#status") == server.get("/api/lean/search", params={"q": "prime"}).json()["error"]
        assert "--formal-bundle" in page.inner_text("#status")
    finally:
        server.stop()
    assert_clean(server)


# ------------------------------------------------------------------------------ a server with a token

TOKEN = "browser-test-token-0123"


@pytest.fixture(scope="module")
def token_web(tiny_bundle_dir):
    from test_web_serve import WebServer, assert_clean

    server = WebServer("--bundle", str(tiny_bundle_dir), "--token", TOKEN)
    yield server
    server.stop()
    assert_clean(server)


def test_the_token_box_talks_to_a_person(token_web, page):
    """Before a token the page showed nothing but the box, and a search the API's line ("send the header
    Authorization: Bearer <token>"); a wrong token "wrong token"; the kind and source lists were empty
    without a word. It now says what to do with the box, keeps a refused token in it to correct, and
    fills everything once the token is accepted."""
    from mathlas.web.guard import NO_TOKEN

    page.expected_statuses = {401}
    goto_ready(page, token_web.base + "/?q=group")
    assert page.is_visible("#token-box")
    status = page.inner_text("#status")
    assert status.startswith("This server needs a token: paste it in the token box above and press Use token")
    assert "Authorization" not in status and "header" not in status and NO_TOKEN not in status
    assert page.evaluate("document.activeElement.id") == "token"
    kinds = page.eval_on_selector_all("#kind option", "os => os.map(o => [o.value, o.textContent, o.disabled])")
    assert kinds == [["", "any", False], ["", "(after the token)", True]]
    assert page.text_content("#sources") == "The sources show once the token is accepted."  # inside the closed list

    page.fill("#token", "not-the-token")
    page.click("#token-save")
    wait_js(page, "document.getElementById('status').textContent.startsWith('That token')")
    assert page.inner_text("#status") == ("That token was not accepted: check it and paste it again, "
                                          "or ask whoever runs the server for the right one.")
    assert page.is_visible("#token-box") and page.input_value("#token") == "not-the-token"

    page.fill("#token", TOKEN)
    page.press("#token", "Enter")
    wait_js(page, "document.querySelectorAll('#results li.hit').length > 0")
    assert page.is_hidden("#token-box") and "results from tiny-0.1.0" in page.inner_text("#status")
    served = token_web.get("/api/bundles", headers={"Authorization": f"Bearer {TOKEN}"}).json()["served"][0]
    assert page.eval_on_selector_all("#kind option", "os => os.map(o => o.value)") == ["", *served["kinds"]]
    assert page.locator("#sources input").count() == len(served["sources"])

    page.evaluate("localStorage.removeItem('mathlas-token')")  # a document page without it says the same
    page.goto(token_web.base + "/doc/" + served_id(token_web))
    wait_js(page, "document.getElementById('status').textContent.startsWith('This server needs a token')")
    assert page.is_visible("#token-box")


def served_id(server) -> str:
    hits = server.get("/api/search", params={"q": "group", "k": 1}, headers={"Authorization": f"Bearer {TOKEN}"})
    return hits.json()["hits"][0]["id"]
