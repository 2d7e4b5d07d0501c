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

    tools/list <= 20,000      search k=10: text <= 2,500, structured <= 3,000

    python scripts/bench_mcp_size.py [--bundle B] [--query Q] [--json]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

QUERY = "a finitely generated module M over a local ring with M = mM is zero"
K = 10
BUDGETS = {"tools_list": 20_000, "search_text": 2_500, "search_structured": 3_000}


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", help="bundle to search (default: $MATHLAS_BUNDLE or the default bundle)")
    ap.add_argument("--query", default=QUERY)
    ap.add_argument("-k", type=int, default=K)
    ap.add_argument("--json", action="store_true", help="print the measures as one JSON object")
    args = ap.parse_args()
    r = measure(args.bundle, args.query, args.k)
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
