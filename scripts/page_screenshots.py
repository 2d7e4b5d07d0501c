"""Take the README's and docs/http.md's screenshots of the search page, from the bundles given.

    python scripts/page_screenshots.py --bundle DIR --formal-bundle DIR [--out docs]

Starts ``mathlas serve --port 0`` on the bundles, drives Debian's Chromium with Playwright (as the
browser tests do) and writes, 1200 CSS pixels wide at most:

    serve-landing.png    the page before a query: what is indexed, example queries
    serve-search.png     an informal search (the README's query)
    serve-document.png   a document page (Stacks' Nakayama's lemma, 00DV)
    serve-metamath.png   a Metamath card        serve-openlogic.png  an Open Logic card
    serve-lean.png       Lean cards (signature, docstring, module) from the formal bundle
    serve-lean-document.png  a Lean declaration's page: declaration, docstring, uses and used-by

Each file is checked to be under 200 KB and records what it shows in a PNG text chunk
(``mathlas-screenshot``: the bundles served, mathlas's version, this script), which
tests/test_docs_figures.py reads: a screenshot of a bundle other than the shipped default fails
there, so the README never shows an old page. ``--check`` only reads the docs' PNGs and says which
are stale. Talk goes to stderr; the paths written to stdout.

The README's screenshots are taken from the default bundle and the test Lean project's bundle::

    python scripts/page_screenshots.py --bundle informal --formal-bundle <toy bundle dir>

(the toy bundle: ``mathlas-build`` on ``mathlas_build.lean_build.lean_recipe(tests/data/lean-project)``,
as tests/conftest.py's ``lean_project_bundle_dir`` makes it).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from urllib.parse import quote

QUERY = "a finitely generated module M over a local ring with M = mM is zero"
DOCUMENT = "stacks:00DV"
CARDS = {"metamath": "the square root of 2 is irrational", "openlogic": "compactness theorem"}
LEAN_QUERY = "doubling a natural number"
LEAN_DOCUMENT = "lean:Toy.double_eq_two_mul"  # of the tests' toy project; the top hit elsewhere
MAX_BYTES = 200_000
WIDTH = 1200
CHUNK_KEY = b"mathlas-screenshot"
SHOTS = ("serve-landing.png", "serve-search.png", "serve-document.png", "serve-metamath.png", "serve-openlogic.png",
         "serve-lean.png", "serve-lean-document.png")


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """A PNG's chunks as (type, data)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    out, i = [], 8
    while i + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        out.append((kind, data[i + 8:i + 8 + n]))
        i += 12 + n
    return out


def provenance(path: Path) -> dict | None:
    """What a screenshot records of how it was taken (``None``: nothing, an older screenshot)."""
    for kind, body in png_chunks(path.read_bytes()):
        if kind == b"tEXt" and body.startswith(CHUNK_KEY + b"\0"):
            return json.loads(body[len(CHUNK_KEY) + 1:].decode("latin-1"))
    return None


def record(path: Path, facts: dict) -> None:
    """Write ``facts`` into the PNG at ``path`` as a ``tEXt`` chunk before its end."""
    data = path.read_bytes()
    body = CHUNK_KEY + b"\0" + json.dumps(facts, sort_keys=True).encode("latin-1")
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    end = data.rindex(b"IEND") - 4
    path.write_bytes(data[:end] + chunk + data[end:])


def warm_up(base: str) -> None:
    """Each search once before its screenshot, so that the time the page shows is a search's, not the
    first one's (which opens the bundle and loads the encoder: seconds)."""
    for path in [f"/api/search?k=20&q={quote(QUERY)}", f"/api/lean/search?k=20&q={quote(LEAN_QUERY)}",
                 *(f"/api/search?k=20&source={s}&q={quote(q)}" for s, q in CARDS.items())]:
        for _ in range(2):
            with urllib.request.urlopen(base + path, timeout=120) as r:
                r.read()


def served_labels(base: str) -> dict:
    with urllib.request.urlopen(base + "/api/bundles", timeout=60) as r:
        listing = json.load(r)
    return {"bundle": (listing.get("served") or [{}])[0].get("label"),
            "formal_bundle": (listing.get("formal") or {}).get("label")}


def serve(bundle: str, formal: str) -> tuple[subprocess.Popen, str, Path]:
    log = Path(tempfile.mkstemp(prefix="mathlas-serve-", suffix=".log")[1])
    proc = subprocess.Popen([sys.executable, "-m", "mathlas.web", "serve", "--port", "0", "--bundle", bundle,
                             "--formal-bundle", formal], stdout=subprocess.DEVNULL, stderr=log.open("w"))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        m = re.search(r"mathlas serve: (http://127\.0\.0\.1:\d+)/", log.read_text(errors="replace"))
        if m:
            try:
                with urllib.request.urlopen(m.group(1) + "/health", timeout=5) as r:
                    if r.status == 200:
                        return proc, m.group(1), log
            except OSError:
                pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.terminate()
    sys.exit(f"page_screenshots: mathlas serve did not start:\n{log.read_text(errors='replace')[-2000:]}")


def wait_js(pg, expression: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not pg.evaluate(expression):
        if time.monotonic() > deadline:
            sys.exit(f"page_screenshots: timed out waiting for {expression}")
        pg.wait_for_timeout(100)


def settle(pg) -> None:
    """Hits listed, every statement body fetched and typeset."""
    wait_js(pg, "document.querySelectorAll('#results li.hit').length > 0")
    wait_js(pg, "document.querySelectorAll('#results .statement:not([data-loaded])').length === 0")
    pg.wait_for_timeout(300)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", help="the informal bundle (directory or installed name)")
    ap.add_argument("--formal-bundle", help="the Lean bundle of the Lean card")
    ap.add_argument("--out", default="docs", help="where the PNGs go (default: docs)")
    ap.add_argument("--chromium", default=os.environ.get("MATHLAS_CHROMIUM") or shutil.which("chromium"))
    ap.add_argument("--check", action="store_true", help="only say what each screenshot in --out records")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.check:
        for name in SHOTS:
            print(f"{out / name}: {provenance(out / name) or 'no record (taken before the script recorded it)'}")
        return 0
    if not (args.bundle and args.formal_bundle):
        ap.error("--bundle and --formal-bundle are required (or --check)")
    from playwright.sync_api import sync_playwright

    import mathlas

    proc, base, log = serve(args.bundle, args.formal_bundle)
    facts = {**served_labels(base), "mathlas": mathlas.__version__, "script": "scripts/page_screenshots.py"}
    warm_up(base)
    written = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox", "--headless=new"])
            pg = browser.new_page(viewport={"width": WIDTH, "height": 860}, color_scheme="light")

            def shot(name: str, **kw) -> None:
                path = out / name
                (kw.pop("element").screenshot if "element" in kw else pg.screenshot)(path=str(path), **kw)
                record(path, {**facts, "shows": name})
                size = path.stat().st_size
                print(f"{path}: {size:,} bytes", file=sys.stderr)
                if size > MAX_BYTES:
                    sys.exit(f"page_screenshots: {path} is {size:,} bytes, over {MAX_BYTES:,}")
                written.append(path)

            pg.goto(base + "/")
            wait_js(pg, "document.body.dataset.ready === 'true'")
            shot("serve-landing.png")
            pg.goto(base + "/?q=" + quote(QUERY))
            settle(pg)
            shot("serve-search.png")
            doc = "/doc/" + DOCUMENT  # Nakayama's lemma; the top hit where the bundle lacks it
            try:
                urllib.request.urlopen(base + "/api/doc/" + quote(DOCUMENT, safe=":"), timeout=30).close()
            except urllib.error.HTTPError:
                doc = pg.locator("#results a.open").first.get_attribute("href")
            pg.goto(base + doc)
            pg.wait_for_selector("#doc:not([hidden])")
            pg.wait_for_timeout(300)
            end = pg.locator("#doc").bounding_box()
            shot("serve-document.png", clip={"x": 0, "y": 0, "width": WIDTH,
                                             "height": min(860, end["y"] + end["height"] + 24)})
            for source, q in CARDS.items():
                pg.goto(base + f"/?q={quote(q)}&source={source}")
                settle(pg)
                pg.set_viewport_size({"width": WIDTH, "height": 1400})
                cards = pg.locator("#results li.hit")
                box_b = cards.nth(min(1, cards.count() - 1)).bounding_box()
                top_y = pg.locator("#search").bounding_box()["y"] - 8
                shot(f"serve-{source}.png", clip={"x": 0, "y": top_y, "width": WIDTH,
                                                  "height": box_b["y"] + box_b["height"] + 12 - top_y})
                pg.set_viewport_size({"width": WIDTH, "height": 860})
            pg.goto(base + "/?corpus=lean&q=" + quote(LEAN_QUERY))
            wait_js(pg, "document.querySelectorAll('#results li.hit pre.lean').length > 0")
            pg.wait_for_timeout(300)
            shot("serve-lean.png")
            doc = "/doc/" + LEAN_DOCUMENT
            try:
                urllib.request.urlopen(base + "/api/doc/" + quote(LEAN_DOCUMENT, safe=":"), timeout=30).close()
            except urllib.error.HTTPError:
                doc = pg.locator("#results a.open").first.get_attribute("href")
            pg.goto(base + doc)
            wait_js(pg, "!document.querySelector('#deps-uses-status').textContent.includes('loading') && "
                        "!document.querySelector('#deps-used_by-status').textContent.includes('loading')")
            end = pg.locator("#doc").bounding_box()
            shot("serve-lean-document.png", clip={"x": 0, "y": 0, "width": WIDTH,
                                                  "height": min(860, end["y"] + end["height"] + 24)})
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.unlink(missing_ok=True)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
