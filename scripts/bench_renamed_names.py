"""Does an old Lean name, renamed since, lead to its replacement, or is it corrected into another?

Mathlib renames declarations and keeps the old name for a while as a deprecated alias or theorem
(``card_le_of_subset`` -> ``Finset.card_le_card``); users, and models trained on older Mathlib, go on
typing the old one. A formal bundle records each deprecated declaration with its replacement (the
``deprecated`` and ``replaced_by`` columns: some 3,200 pairs on Mathlib). This bench asks what happens
once the old names are gone, as they will be when Mathlib deletes them: the name index is made without
the deprecated declarations (their ids blanked in a copy of the bundle's ``NameIndex``, so that no
lookup, correction or name placement sees them; the keys of the others are unchanged), and each search
leaves them out of the answer (``LeanSearchRequest.deprecated`` false). Nothing is changed for a user:
the copy lives in this process only.

Each pair's old name is searched through the library's seam (``mathlas.service.lean_search``, what
``mathlas lean search`` and the MCP tool call) in two forms:

* ``full``: the old name as typed (``Finset.card_le_of_subset``);
* ``last``: its last component (``card_le_of_subset``, as typed after ``open Finset``), where it has
  a namespace and no remaining declaration's name ends so.

For each: the replacement first and in the top ten, and what the query was searched as
(``NameIndex.identifier_why``): as typed; ``spelling``, corrected into a declaration's name, either
the replacement's (``right``) or another's (``wrong``: a correction into an unrelated declaration,
``card_le_of_subset`` -> ``Matroid.cRk_le_of_subset``), and how many of those were answered ``match:
strong``; ``prime``, the unprimed name; ``namespace``, the last component, said plainly. Proportions
with Wilson 95% intervals.

    python scripts/bench_renamed_names.py --bundle PATH_OR_NAME [--n 0] [--seed 0] [--json out.json]

``--n`` draws that many pairs (``--seed``); 0, every pair.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_names import counted as share  # noqa: E402

GONE = "lean:"   # the id a deprecated declaration has in the copy of the name index: no name is it or ends so


def pairs(b) -> list[tuple[str, str]]:
    """Each deprecated declaration's name with its replacement's, both without ``lean:``, where the
    bundle holds the replacement and the replacement is not deprecated itself."""
    cols = b.table.column_names
    if "deprecated" not in cols or "replaced_by" not in cols:
        raise SystemExit(f"{b.label} records no deprecation (no deprecated / replaced_by columns)")
    ids = b.table.column("id").to_pylist()
    dep = b.table.column("deprecated").to_pylist()
    new = b.table.column("replaced_by").to_pylist()
    old = {i for i, d in zip(ids, dep) if d}
    have = set(ids)
    return sorted((i.removeprefix("lean:"), r.removeprefix("lean:")) for i, d, r in zip(ids, dep, new)
                  if d and r and r in have and r not in old and r != i)


def forget_deprecated(b):
    """For this process: ``b``'s name index made without its deprecated declarations (module
    docstring); returns it (``remember`` puts the bundle's own back)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from mathlas.ranking import names

    dep = pc.fill_null(pc.greater(pc.utf8_length(b.table.column("deprecated")), 0), False)
    ids = pc.if_else(dep, pa.scalar(GONE), b.table.column("id"))
    cols = b.table.column_names
    index = names.NameIndex(ids, b.table.column("name") if "name" in cols else None,
                            b.table.column("aliases") if "aliases" in cols else None, formal=True)
    with names._CACHE_LOCK:
        names._CACHE[b] = index
        names._COUNTERS.pop(b, None)   # lookups kept per bundle (concept_keys holds the index it was made with)
    return index


def remember(b) -> None:
    """Undo ``forget_deprecated``: ``b``'s own name index is made again on next use."""
    from mathlas.ranking import names

    with names._CACHE_LOCK:
        names._CACHE.pop(b, None)
        names._COUNTERS.pop(b, None)


def searched_as(index, query: str, popularity) -> tuple[str, str]:
    """What ``query`` is searched as: (why, name) of ``NameIndex.identifier_why``, ("typed", query)
    when it is searched as typed."""
    found = index.identifier_why(query, popularity)
    return ("typed", query) if found is None else (found[1], found[0])


def is_name_of(shown: str, target: str) -> bool:
    """Whether ``shown`` (some last components of a name) names ``target``."""
    return target == shown or target.endswith("." + shown)


def run(bundle: str, n: int, seed: int, k: int = 10) -> dict:
    from mathlas.formal import open_formal

    b = open_formal(bundle)
    every = pairs(b)
    drawn = random.Random(seed).sample(every, n) if 0 < n < len(every) else every
    index = forget_deprecated(b)
    try:
        rows = search_all(b, index, drawn, k)
    finally:
        remember(b)

    out: dict = {"bundle": b.label, "pairs": len(every), "drawn": len(drawn), "seed": seed}
    for form in ("full", "last"):
        sel = [r for r in rows if r["form"] == form]
        wrong = [r for r in sel if r["searched_as"] == "wrong"]
        out[form] = {
            "first": share(sum(r["rank"] == 1 for r in sel), len(sel)),
            "top10": share(sum(r["rank"] is not None for r in sel), len(sel)),
            "searched_as": dict(Counter(r["searched_as"] for r in sel).most_common()),
            "wrong": share(len(wrong), len(sel)),
            "wrong_strong": sum(r["match"] == "strong" for r in wrong),
            "wrong_top10": sum(r["rank"] is not None for r in wrong),
        }
    out["rows"] = rows
    return out


def search_all(b, index, drawn: list[tuple[str, str]], k: int) -> list[dict]:
    """Each pair's old name searched in its forms (module docstring), one row each."""
    from mathlas.ranking.names import pagerank_of
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    popularity = pagerank_of(b)
    rows = []
    for old, new in drawn:
        forms = [("full", old)]
        last = old.rsplit(".", 1)[-1]
        if last != old and not index.suffix(last):
            forms.append(("last", last))
        for form, query in forms:
            why, shown = searched_as(index, query, popularity)
            r = lean_search(LeanSearchRequest.make(query, k, deprecated=False), b)
            got = [h.id.removeprefix("lean:") for h in r.hits]
            rank = got.index(new) + 1 if new in got else None
            if why == "spelling":
                why = "right" if is_name_of(shown, new) else "wrong"
            rows.append({"old": old, "new": new, "form": form, "query": query, "searched_as": why,
                         "shown": shown, "rank": rank, "first": got[0] if got else None, "match": r.match})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", required=True, help="the formal bundle: a name or a directory")
    ap.add_argument("--n", type=int, default=0, help="pairs drawn (0: every pair)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the figures and every row here")
    args = ap.parse_args(argv)
    res = run(args.bundle, args.n, args.seed)
    for form in ("full", "last"):
        x = res[form]
        cells = "  ".join(f"{key} {x[key]['hits']}/{x[key]['n']} {x[key]['rate']:.3f} "
                          f"[{x[key]['ci95'][0]:.3f}, {x[key]['ci95'][1]:.3f}]" for key in ("first", "top10", "wrong"))
        print(f"{form:<5} {cells}  wrong and strong {x['wrong_strong']}, wrong with the replacement in the top ten "
              f"{x['wrong_top10']}; searched as {x['searched_as']}")
    print(f"{res['bundle']}: {res['drawn']} of {res['pairs']} renamed names (seed {res['seed']}), "
          f"the deprecated declarations left out of the name index and the answers")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
