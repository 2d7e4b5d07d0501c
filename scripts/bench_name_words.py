"""Does a Lean declaration's name typed as words find it? ("mul pos" for ``mul_pos``)

Lean users say and type names as their words: "prime two le" for ``Nat.Prime.two_le``, "card le card"
for ``Finset.card_le_card``. Draws ``--n`` theorems and lemmas at random (``--seed``) from a formal
bundle, written in the source (no generated or derived name), whose last component is two words or
more of lower-case letters joined by ``_`` (``two_le``; not ``cast_ofNat``, ``mul_inv_cancel₀``,
``add_comm'``), and searches each through the library's seam (``mathlas.service.lean_search``, what
``mathlas lean search`` and the MCP tool call) in two forms:

* ``last``: its last component's words, space-separated ("two le" for ``Nat.Prime.two_le``);
* ``ns``: the namespace component before it and those words, lower-cased ("prime two le"), where
  that component is letters only.

For each: the drawn declaration first (``exact@1``) and in the top ten (``exact@10``), and the first
hit a declaration with the same last component (``same@1``: the words name every declaration that
ends so, ``Left.mul_pos`` as well as ``mul_pos``); ``strong``: how many answers say ``match:
strong``, how many of those have the drawn declaration first, and how many one with its last
component. Wilson 95% intervals.

``--no-words`` searches with the words not read as a name (``NameIndex.joined`` finds nothing): the
ranking before it. ``--phrases FILE`` (one phrase a line; ``eval/lean-phrases.txt``: plain English
and mathematical phrases; ``eval/lean-phrases-2.txt``, more of them, written blind) searches each phrase both ways in one process and reports the phrases whose
words were read as a name, with the first hits without and with it, and how many answers changed.

    python scripts/bench_name_words.py --bundle PATH_OR_NAME [--n 200] [--seed 0] [--no-words] [--json out.json]
    python scripts/bench_name_words.py --bundle PATH_OR_NAME --phrases eval/lean-phrases.txt
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_names import counted as share  # noqa: E402

_LAST = re.compile(r"[a-z]+(?:_[a-z]+)+")


def sample(b, n: int, seed: int) -> list[str]:
    """``n`` theorem and lemma names (no ``lean:``) written in the source whose last component is
    lower-case words joined by ``_``, drawn with ``seed``."""
    cols = b.table.column_names
    ids = b.table.column("id").to_pylist()
    kind = b.table.column("kind").to_pylist()
    generated = b.table.column("generated").to_pylist() if "generated" in cols else [None] * len(ids)
    derived = b.table.column("derived_name").to_pylist() if "derived_name" in cols else [None] * len(ids)
    pool = sorted(i.removeprefix("lean:") for i, k, g, d in zip(ids, kind, generated, derived)
                  if k in ("theorem", "lemma") and not g and not d and _LAST.fullmatch(i.rsplit(".", 1)[-1]))
    return random.Random(seed).sample(pool, min(n, len(pool)))


def forms(name: str) -> dict[str, str]:
    """The queries a name is typed as (module docstring)."""
    parts = name.split(".")
    words = parts[-1].replace("_", " ")
    out = {"last": words}
    if len(parts) > 1 and parts[-2].isalpha():
        out["ns"] = f"{parts[-2]} {words}".lower()
    return out


def words_off() -> None:
    """For this process: no phrase is read as a name typed as words (the ranking before it)."""
    from mathlas.ranking.names import NameIndex

    NameIndex.joined = lambda self, query: ([], [])


def run(bundle: str, n: int, seed: int, words: bool, k: int = 10) -> dict:
    from mathlas.formal import open_formal
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    b = open_formal(bundle)
    if not words:
        words_off()
    rows = []
    for name in sample(b, n, seed):
        last = name.rsplit(".", 1)[-1]
        for form, query in forms(name).items():
            r = lean_search(LeanSearchRequest.make(query, k), b)
            got = [h.id.removeprefix("lean:") for h in r.hits]
            rank = got.index(name) + 1 if name in got else None
            rows.append({"name": name, "form": form, "query": query, "rank": rank, "match": r.match,
                         "first": got[0] if got else None,
                         "same1": bool(got) and got[0].rsplit(".", 1)[-1] == last, "expanded": r.expanded})
    result: dict = {"bundle": b.label, "n": n, "seed": seed, "words": words}
    for form in ("last", "ns"):
        sel = [r for r in rows if r["form"] == form]
        strong = [r for r in sel if r["match"] == "strong"]
        result[form] = {
            "exact@1": share(sum(r["rank"] == 1 for r in sel), len(sel)),
            "exact@10": share(sum(r["rank"] is not None for r in sel), len(sel)),
            "same@1": share(sum(r["same1"] for r in sel), len(sel)),
            "strong": len(strong),
            "strong_exact": share(sum(r["rank"] == 1 for r in strong), len(strong)),
            "strong_same": share(sum(r["same1"] for r in strong), len(strong)),
        }
    result["rows"] = rows
    return result


def phrases(bundle: str, path: str, k: int = 10) -> dict:
    """Each phrase of ``path`` searched with and without names typed as words (module docstring)."""
    from mathlas.formal import open_formal
    from mathlas.ranking.names import NameIndex
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    b = open_formal(bundle)
    queries = [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")]
    answers: dict[str, list] = {}
    joined = NameIndex.joined
    for label in ("without", "with"):
        NameIndex.joined = joined if label == "with" else (lambda self, query: ([], []))
        answers[label] = [lean_search(LeanSearchRequest.make(q, k), b) for q in queries]
    NameIndex.joined = joined
    rows = []
    for q, before, after in zip(queries, answers["without"], answers["with"]):
        ids = ([h.id.removeprefix("lean:") for h in before.hits], [h.id.removeprefix("lean:") for h in after.hits])
        rows.append({"query": q, "read": "also searched as a name" in after.expanded, "expanded": after.expanded,
                     "first": [x[0] if x else None for x in ids], "match": [before.match, after.match],
                     "first_changed": ids[0][:1] != ids[1][:1], "top10_changed": ids[0] != ids[1]})
    read = [r for r in rows if r["read"]]
    return {"bundle": b.label, "phrases": len(rows), "read_as_name": len(read),
            "first_changed": sum(r["first_changed"] for r in rows),
            "top10_changed": sum(r["top10_changed"] for r in rows),
            "strong_after": sum(r["match"][1] == "strong" for r in read),
            "strong_before": sum(r["match"][0] == "strong" for r in read), "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", required=True, help="the formal bundle: a name or a directory")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-words", action="store_true", help="phrases are not read as names (the ranking before)")
    ap.add_argument("--phrases", metavar="FILE", help="phrases that should not be read as names: both ways")
    ap.add_argument("--json", help="write the figures and every row here")
    args = ap.parse_args(argv)
    if args.phrases:
        res = phrases(args.bundle, args.phrases)
        for r in res["rows"]:
            if r["read"] or r["top10_changed"]:
                print(f"{r['query']!r}: first {r['first'][0]} -> {r['first'][1]}, match {r['match'][0]} -> "
                      f"{r['match'][1]}; {r['expanded']}")
        print(f"{res['bundle']}: {res['read_as_name']} of {res['phrases']} phrases read as a name; first hit changed "
              f"{res['first_changed']}, top ten changed {res['top10_changed']}; of those read, strong "
              f"{res['strong_before']} -> {res['strong_after']}")
    else:
        res = run(args.bundle, args.n, args.seed, words=not args.no_words)
        for form in ("last", "ns"):
            x = res[form]
            cells = "  ".join(f"{key} {x[key]['hits']}/{x[key]['n']} {x[key]['rate']:.3f} "
                              f"[{x[key]['ci95'][0]:.3f}, {x[key]['ci95'][1]:.3f}]"
                              for key in ("exact@1", "exact@10", "same@1"))
            print(f"{form:<5} {cells}  strong {x['strong']} (drawn first {x['strong_exact']['hits']}, "
                  f"same last component first {x['strong_same']['hits']})")
        print(f"{res['bundle']}: seed {res['seed']}, names typed as words {'read' if res['words'] else 'not read'}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
