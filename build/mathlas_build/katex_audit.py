"""Render every math span of a bundle's display text with the real KaTeX, count the documents with an error.

``display.DisplayAudit`` (the build log) counts commands outside KaTeX's list; this runs KaTeX itself (the
vendored ``mathlas/web/static/katex/katex.min.js``, under Node.js) on each ``$...$``, ``$$...$$``, ``\\[...\\]``
and display environment of every ``body``, as the page cuts them, without the page's own macros, and prints
per source how many documents have a span KaTeX refuses and the most common errors::

    python -m mathlas_build.katex_audit BUNDLE_DIR [--katex PATH]

Needs ``node`` on the PATH (a message says so otherwise). Figures in docs/building.md ("Display text").
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mathlas_build.display import MATH_RE

KATEX_JS = Path(__file__).resolve().parents[2] / "mathlas" / "web" / "static" / "katex" / "katex.min.js"

_NODE = r"""
const katex = require(process.argv[2]); const fs = require('fs'); const readline = require('readline');
const rl = readline.createInterface({input: fs.createReadStream(process.argv[3])});
const docs = {}, bad = {}, errs = {};
rl.on('line', (line) => {
  const [src, id, tex, disp] = JSON.parse(line);
  (docs[src] = docs[src] || new Set()).add(id);
  try { katex.renderToString(tex, {displayMode: disp, throwOnError: true, strict: "ignore", trust: false, maxExpand: 1000}); }
  catch (e) {
    (bad[src] = bad[src] || new Set()).add(id);
    const m = String(e.message).replace(/ at position[\s\S]*/, '').slice(0, 70);
    errs[src] = errs[src] || {}; errs[src][m] = (errs[src][m] || 0) + 1;
  }
});
rl.on('close', () => {
  const out = {};
  for (const s of Object.keys(docs).sort())
    out[s] = {documents: docs[s].size, with_error: (bad[s] || new Set()).size,
              errors: Object.entries(errs[s] || {}).sort((a, b) => b[1] - a[1]).slice(0, 5)};
  console.log(JSON.stringify(out));
});
"""


def math_spans(body: str):
    """(tex, display) of every math span of ``body``, cut as the page cuts it."""
    for m in MATH_RE.finditer(body or ""):
        for group, display in ((1, True), (2, True), (3, False), (4, True), (7, False)):
            if m.group(group) is not None:
                yield m.group(group), display
                break


def audit(bundle_dir: Path, katex_js: Path = KATEX_JS) -> dict:
    """Per source: documents with math, documents with a span KaTeX refuses, the commonest errors."""
    import pyarrow.parquet as pq

    from mathlas import bundle as fmt

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise SystemExit("katex_audit needs Node.js (node) on the PATH: apt-get install nodejs")
    rows = pq.read_table(Path(bundle_dir) / fmt.META, columns=["id", "source", "body"]).to_pylist()
    with tempfile.TemporaryDirectory() as tmp:
        spans, script = Path(tmp) / "spans.jsonl", Path(tmp) / "audit.js"
        script.write_text(_NODE, encoding="utf-8")
        with spans.open("w", encoding="utf-8") as f:
            for r in rows:
                for tex, display in math_spans(r["body"]):
                    f.write(json.dumps([r["source"], r["id"], tex, display]) + "\n")
        p = subprocess.run([node, str(script), str(katex_js), str(spans)], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mathlas_build.katex_audit", description=__doc__.split("\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--katex", type=Path, default=KATEX_JS)
    a = ap.parse_args(argv)
    for source, r in audit(a.bundle, a.katex).items():
        top = "; ".join(f"{m} ({n})" for m, n in r["errors"][:3])
        print(f"{source}\t{r['with_error']:,} of {r['documents']:,} documents with a KaTeX error\t{top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
