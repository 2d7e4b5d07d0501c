"""The search page in a real headless Chromium (Debian's ``chromium``, driven by Playwright's Python
client with ``executable_path``: no browser is downloaded) against a real ``mathlas serve``.

A person's path through the page: type a query and press Enter, see hits with rendered mathematics
(no ``$`` delimiter left), move with the arrow keys, open a document page, use a filter, share the
URL, open a Lean declaration and follow a dependency link; and the page stays readable on a phone.
Skips, saying why, only when no Chromium or no Playwright is installed (``.ci/run`` installs both).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from urllib.parse import parse_qs, urlparse

import pytest

from test_web_serve import papers_bundle_dir, web  # noqa: F401  (fixtures)

CHROMIUM = os.environ.get("MATHLAS_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    pytest.skip("no Chromium installed (Debian: apt-get install -y chromium; .ci/run does it); "
                "the browser tests need a real browser", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright's Python package is not installed "
                               "(pip install -e '.[test]')")

ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
WAIT = 30_000  # ms
QUERY = "a finitely generated module over a ring"


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="mathlas-chromium-")
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=ARGS,
                                                       viewport={"width": 1100, "height": 900})
        try:
            yield context
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser):
    pg = browser.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    pg.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    yield pg
    pg.close()
    assert errors == []


def wait_js(pg, expression: str, timeout_ms: int = WAIT) -> None:
    """Poll ``expression`` in the page until it is true. (Playwright's wait_for_function evaluates a
    string inside the page, which the page's Content-Security-Policy rightly forbids.)"""
    import time

    deadline = time.monotonic() + timeout_ms / 1000
    while not pg.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for: {expression}"
        pg.wait_for_timeout(50)


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
    ids = page.locator("#results code").all_inner_texts()
    other = browser.new_page()  # someone opening the shared link
    try:
        other.goto(shared)
        other.wait_for_selector("#results li.hit", timeout=WAIT)
        assert other.locator("#results code").all_inner_texts() == ids
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
    assert page.inner_text("#doc-signature").strip()
    assert "Mathlib." in page.inner_text("#doc-fields")
    page.wait_for_selector("#deps li a.dep", timeout=WAIT)
    target = page.locator("#deps li a.dep").first
    name = target.inner_text()
    target.click()
    wait_js(page, f"document.querySelector('#doc-name') && document.querySelector('#doc-name').textContent === {name!r}")
    assert urlparse(page.url).path == "/doc/lean:" + name
    page.click(".deps-head .tab[data-direction='used_by']")
    wait_js(page, "document.querySelector('#deps-title').textContent === 'Used by'")
    page.wait_for_selector("#deps li a.dep", timeout=WAIT)  # Nat.Prime.two_le (at least) uses it


def test_readable_on_a_phone(web, browser):
    pg = browser.new_page()
    pg.set_viewport_size({"width": 375, "height": 740})
    try:
        pg.goto(web.base + "/?q=" + QUERY.replace(" ", "+"))
        rendered_statements(pg)
        assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        box = pg.locator("#q").bounding_box()
        assert box and box["width"] > 200
    finally:
        pg.close()
