"""What an agent pays for mathlas in characters: ``tools/list`` and one k=10 search answer.

A real ``mathlas mcp`` server process (``python -m mathlas.mcp``), spoken to over stdio with the
official MCP client (``mcp.ClientSession``), as an agent's client would:

* ``tools/list``: the characters of the ``tools/list`` result as JSON (compact, the way it travels:
  camelCase keys, no null fields), and its share taken by output schemas;
* ``search``: one ``search_existing_math`` call with ``k=10`` (and ``detail`` left at its default):
  the characters of its text content (what a client model reads) and of its structured content
  (compact JSON), the mean per hit, and the same for ``detail="full"`` when the server has it.

Characters, not tokens: a tokenizer is the client's business; about 4 characters make a token of
JSON. Budgets (issue 13; ``tests/test_mcp_budget.py`` runs this script's ``measure`` against them)::

    tools/list <= 20,200      search k=10: text <= 2,500, structured <= 3,000

(tools/list was 20,000 until issue 30 added search_existing_math's all_copies argument.)

    python scripts/bench_mcp_size.py [--bundle B] [--query Q] [--json]
    python scripts/bench_mcp_size.py --check README.md docs/mcp.md   # the docs' figures = this run's

``--check`` finds the docs' tables of these measures (a header cell "now" or "after", rows named as
below) and fails, saying which figure to write, when a number in the "now" column is not this run's.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

QUERY = "a finitely generated module M over a local ring with M = mM is zero"
K = 10
BUDGETS = {"tools_list": 20_200, "search_text": 2_500, "search_structured": 3_000}


def compact(data: Any) -> str:
    """``data`` as compact JSON, the way it is counted here."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def answer_size(result) -> dict[str, Any]:
    """Characters of a ``tools/call`` answer: text content and structured content."""
    if result.is_error:
        raise RuntimeError(result.content[0].text if result.content else "tool error")
    text = sum(len(c.text) for c in result.content if getattr(c, "type", None) == "text")
    structured = len(compact(result.structured_content)) if result.structured_content is not None else 0
    hits = len((result.structured_content or {}).get("hits", []))
    return {"text": text, "structured": structured, "hits": hits,
            "text_per_hit": round(text / hits) if hits else None}


async def _measure(params: StdioServerParameters, query: str, k: int, errlog) -> dict[str, Any]:
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        tools = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]
        schemas = sum(len(compact(t.get("outputSchema"))) for t in tools if t.get("outputSchema"))
        search = next(t for t in listed.tools if t.name == "search_existing_math")
        default = await session.call_tool("search_existing_math", {"query": query, "k": k})
        out = {"n_tools": len(tools), "tools_list": len(compact({"tools": tools})),
               "output_schemas": schemas, "search": answer_size(default),
               "bundle": default.structured_content.get("bundle")}
        if "detail" in search.input_schema.get("properties", {}):
            full = await session.call_tool("search_existing_math", {"query": query, "k": k, "detail": "full"})
            out["search_full"] = answer_size(full)
        return out


def measure(bundle: str | None = None, query: str = QUERY, k: int = K, env: dict[str, str] | None = None,
            errlog=sys.stderr) -> dict[str, Any]:
    """Start a server, list its tools, run one search; the characters of each (see the module doc)."""
    env = dict(os.environ if env is None else env)
    if bundle:
        env["MATHLAS_BUNDLE"] = bundle
    params = StdioServerParameters(command=sys.executable, args=["-m", "mathlas.mcp"], env=env,
                                   cwd=str(Path(__file__).resolve().parent))
    return asyncio.run(_measure(params, query, k, errlog))


def _n(x: int) -> str:
    return f"{x:,d}"


def row_figures(r: dict[str, Any]) -> dict[str, tuple[list[str], set[str]]]:
    """Docs table row (its first cell, without markup) -> (the figures its "now" cell must show,
    every number that cell may hold)."""
    s = r["search"]
    rows = {
        "tools/list": ([_n(r["tools_list"])], {_n(r["tools_list"]), _n(r["n_tools"]), _n(r["output_schemas"])}),
        "search k=10, text content": ([_n(s["text"])], {_n(s["text"]), _n(s["text_per_hit"] or 0)}),
        "search k=10, structured content": ([_n(s["structured"])], {_n(s["structured"])}),
        "a k=10 search answer: text / structured content": ([f"{_n(s['text'])} / {_n(s['structured'])}"],
                                                             {_n(s["text"]), _n(s["structured"])}),
    }
    if "search_full" in r:
        f = r["search_full"]
        rows['search k=10, detail: "full"'] = ([_n(f["text"]), _n(f["structured"])], {_n(f["text"]), _n(f["structured"])})
    return rows


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def check_docs(r: dict[str, Any], paths: list[Path]) -> list[str]:
    """What in ``paths`` disagrees with the measurement ``r`` (empty: the docs say what was measured)."""
    figures, problems, k = row_figures(r), [], r.get("k", K)
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()
        found = 0
        for i, line in enumerate(lines):
            head = _cells(line) if line.startswith("|") else []
            col = next((j for j, c in enumerate(head) if c.lower() in ("now", "after")), None)
            if col is None:
                continue
            before = "\n".join(lines[max(0, i - 8):i])  # the bundle the paragraph above names
            for name in re.findall(r"`(informal-[\w.]+)`", before):
                if name != r["bundle"]:
                    problems.append(f"{path}:{i + 1 - 8}..{i}: names `{name}`, measured on `{r['bundle']}`")
            for j in range(i + 2, len(lines)):
                if not lines[j].startswith("|"):
                    break
                cells = _cells(lines[j])
                label = re.sub(r"[`*]", "", cells[0]).replace(f"k={k}", "k=10")
                if label not in figures or len(cells) <= col:
                    continue
                found += 1
                must, may = figures[label]
                cell = cells[col]
                numbers = set(re.findall(r"\d[\d,]*\d|\d", re.sub(r"\([^)]*budget[^)]*\)", "", cell)))
                for figure in must:
                    if figure not in cell:
                        problems.append(f"{path}:{j + 1}: {label}: measured {figure}, the docs say {cell!r}")
                for number in sorted(numbers - may):
                    problems.append(f"{path}:{j + 1}: {label}: {number} is not a figure of this run ({sorted(may)})")
        if not found:
            problems.append(f"{path}: no table of these measures (a \"now\" or \"after\" column)")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", help="bundle to search (default: $MATHLAS_BUNDLE or the default bundle)")
    ap.add_argument("--query", default=QUERY)
    ap.add_argument("-k", type=int, default=K)
    ap.add_argument("--json", action="store_true", help="print the measures as one JSON object")
    ap.add_argument("--check", nargs="+", type=Path, metavar="DOC",
                    help="exit 1 unless these docs' tables give this run's figures (README.md docs/mcp.md)")
    args = ap.parse_args()
    r = measure(args.bundle, args.query, args.k)
    r["k"] = args.k
    if args.check:
        problems = check_docs(r, args.check)
        for problem in problems:
            print(problem, file=sys.stderr)
        if not problems:
            print(f"the figures in {', '.join(map(str, args.check))} are this run's ({r['bundle']})", file=sys.stderr)
        return 1 if problems else 0
    if args.json:
        print(compact(r))
        return 0
    s = r["search"]
    print(f"bundle {r['bundle']}, {r['n_tools']} tools")
    print(f"  tools/list                     {r['tools_list']:8,d} chars   (output schemas {r['output_schemas']:,d};"
          f" budget {BUDGETS['tools_list']:,d})")
    print(f"  search k={args.k} text content      {s['text']:8,d} chars   ({s['hits']} hits, {s['text_per_hit']} a hit;"
          f" budget {BUDGETS['search_text']:,d})")
    print(f"  search k={args.k} structured        {s['structured']:8,d} chars   (budget {BUDGETS['search_structured']:,d})")
    if "search_full" in r:
        f = r["search_full"]
        print(f"  detail=\"full\": text {f['text']:,d}, structured {f['structured']:,d} chars")
    return 0


if __name__ == "__main__":
    sys.exit(main())
