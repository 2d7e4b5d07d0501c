"""Figures and screenshots in the docs say which bundle they show, and it is the one that ships
(issue 31 item 18): a screenshot, an example answer or a measured row of an older bundle fails here.

- Every screenshot the README and docs/ show records how it was taken (scripts/page_screenshots.py
  writes a ``mathlas-screenshot`` PNG text chunk: the bundles served, mathlas's version), and the
  informal bundle it shows is the shipped default (``artifacts/catalog.json``).
- docs/mcp.md's example answers name the shipped default bundle.
- The README's cold start row and docs/benchmarks.md's ``match`` table say which bundle they were
  measured on: the shipped default (``scripts/bench_coldstart.py`` and ``scripts/bench_match.py``
  measure them again).
- docs/formal.md says what a Lean project outside git gets: no link, its module (the bundle has no
  file or line column).
"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shipped_default() -> str:
    """``informal-<version>``: the newest informal release in artifacts/catalog.json."""
    releases = json.loads((REPO / "artifacts" / "catalog.json").read_text(encoding="utf-8"))["releases"]
    versions = [tuple(int(x) for x in r["version"].split(".")) for r in releases if r["name"] == "informal"]
    return "informal-" + ".".join(map(str, max(versions)))


def screenshots_shown() -> list[Path]:
    shown = set()
    for doc in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        for m in re.finditer(r"!\[[^\]]*\]\(([^)\s]+\.png)\)", doc.read_text(encoding="utf-8")):
            shown.add((doc.parent / m.group(1)).resolve())
    return sorted(shown)


def load_script():
    spec = importlib.util.spec_from_file_location("page_screenshots", REPO / "scripts" / "page_screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_screenshot_shown_records_the_shipped_bundle():
    script, default = load_script(), shipped_default()
    shots = screenshots_shown()
    assert {p.name for p in shots} >= {"serve-search.png", "serve-document.png"}
    stale = {}
    for path in shots:
        facts = script.provenance(path)
        if not facts or facts.get("bundle") != default or facts.get("script") != "scripts/page_screenshots.py":
            stale[path.name] = facts
    assert not stale, (f"screenshots not taken from {default}: {stale}; run "
                       "python scripts/page_screenshots.py --bundle informal --formal-bundle <toy bundle>")


def test_the_screenshot_record_round_trips(tmp_path):
    import struct
    import zlib

    script = load_script()
    raw = b"\x00\x00\x00\x00"
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    chunk = lambda kind, body: (struct.pack(">I", len(body)) + kind + body  # noqa: E731
                                + struct.pack(">I", zlib.crc32(kind + body)))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw[:2])) + chunk(b"IEND", b"")
    path = tmp_path / "x.png"
    path.write_bytes(png)
    assert script.provenance(path) is None
    script.record(path, {"bundle": "informal-9.9.9"})
    assert script.provenance(path) == {"bundle": "informal-9.9.9"}
    assert [k for k, _ in script.png_chunks(path.read_bytes())][-1] == b"IEND"


def test_mcp_examples_name_the_shipped_bundle():
    default = shipped_default()
    named = set(re.findall(r"informal-\d+\.\d+\.\d+", (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")))
    assert named == {default}, f"docs/mcp.md names {sorted(named)}; the shipped default is {default}"


def test_measured_rows_name_the_bundle_they_were_measured_on():
    version = shipped_default().split("-", 1)[1]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `mathlas search` cold start"))
    assert f"({version}" in row, row
    bench = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    table = bench.split("## Knowing when nothing is known: `match`", 1)[1]
    said = re.search(r"Default bundle (informal-[\d.]+)", table)
    assert said and said.group(1) == shipped_default(), said and said.group(0)


def test_formal_md_says_what_a_project_outside_git_keeps(lean_project_bundle_dir):
    import pyarrow.parquet as pq

    columns = pq.read_schema(lean_project_bundle_dir / "meta" / "documents.parquet").names
    table = pq.read_table(lean_project_bundle_dir / "meta" / "documents.parquet", columns=["link", "module"])
    assert "module" in columns and not {"file", "line"} & set(columns)
    assert all(m for m in table.column("module").to_pylist())
    assert not any(table.column("link").to_pylist())            # the toy project is copied outside git
    text = " ".join((REPO / "docs" / "formal.md").read_text(encoding="utf-8").split())
    assert "names its module, file and line" not in text
    assert "it has no link (the hit still names its module" in text


@pytest.mark.parametrize("name", ["serve-search.png"])
def test_the_script_checks_without_a_browser(name, capsys):
    script = load_script()
    assert script.main(["--check", "--out", str(REPO / "docs")]) == 0
    assert name in capsys.readouterr().out
