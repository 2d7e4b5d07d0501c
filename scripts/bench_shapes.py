"""Does a Lean statement, typed as a person types it, find the declaration that states it?

Draws ``--n`` theorems and lemmas at random (``--seed``) from a formal bundle, written in the source
(no generated declaration), whose statement holds a relation or an operator (``=``, ``≤``, ``∣``,
``+``...: a statement a person could type as a formula, not ``Function.Injective f``), and searches
each through the library's seam (``mathlas.service.lean_search``, what ``mathlas lean search`` and
the MCP tool call) in two forms:

* ``statement``: the statement after the binders, as a person retypes it: its one-letter variables
  renamed (a seeded permutation: ``a b`` -> ``x y``), coercion arrows left out, and each of
  ``≤ ≥ ≠ → ↔ ∈``-in-a-big-operator written in ASCII (``<=``, ``in``...) with probability one half,
  tokens separated by spaces;
* ``conclusion``: for a statement with hypotheses (``(hp : p.Prime) : 2 ≤ p`` or ``a ∣ b → ...``),
  its conclusion alone, retyped the same way.

``--commute`` draws only statements with a ``+`` or ``*`` between two names or numbers that bind to it
alone, and types them with those two the other way round (``x + 1 ≤ exp x`` as ``1 + x ≤ exp x``:
``swap_once``), statements only.

For each: the target first (``top1``), in the top ten (``top10``), and the first hit a declaration
with the target's statement, up to its variables' names (``same1``: several declarations often state
one fact: ``add_comm``, ``AddCommMagma.add_comm``); and ``match``: how many answers say ``strong``
and how often their first hit has the target's statement. ``--no-shape`` searches without the shape
stage (``mathlas.ranking.shape.ShapeMatch``): the ranking before it. Wilson 95% intervals.

``--queries eval/lean-statements.jsonl`` scores a list of statements as a Lean user typed them
instead (one JSON object a line: ``query``, ``wanted``: the declarations wanted, any of them;
``kind``: ``true``, ``false`` for a statement Mathlib does not hold or not so, ``prose`` for words
that must not be read as a statement): of the true ones whose declaration the bundle holds, how many
put one first and in the top ten, how many answers say ``strong`` and how many of those have a wanted
declaration first; how many false ones are answered ``strong``; how many prose queries got a ``shape``
place. The file in the repository was written by a helper who knows Mathlib, each query with the
declaration it wants, before any was run (eval/lean-statements.jsonl; 146 true, 36 false, 16 prose).

    python scripts/bench_shapes.py --bundle PATH_OR_NAME [--n 200] [--seed 0] [--no-shape] [--commute] [--json out.json]
    python scripts/bench_shapes.py --bundle PATH_OR_NAME --queries eval/lean-statements.jsonl [--no-shape]
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_names import wilson  # noqa: E402

LATIN = "abcdefghijklmnopqrstuvwxyz"
GREEK = "αβγδεζηθικμνξπρστυφχψω"  # not λ: a keyword (fun) in Lean 4
ASCII = {"≤": "<=", "≥": ">=", "≠": "!=", "→": "->", "↔": "<->"}


def retype(toks: list[str], rng: random.Random) -> str:
    """``toks`` as a person retypes them (module docstring)."""
    from mathlas.ranking.lean_text import SHORT

    letters = {c: rng.sample(alphabet, len(alphabet)) for c, alphabet in (("l", LATIN), ("g", GREEK))}
    rename: dict[str, str] = {}
    used: set[str] = set()
    out = []
    big = False
    for t in toks:
        head, dot, rest = t.partition(".")
        if SHORT.fullmatch(head) and head[0] in LATIN + GREEK:  # x, x₁, and x in x.foo
            if head not in rename:
                pool = letters["l" if head[0] in LATIN else "g"]
                new = next((c for c in pool if c not in used), head[0])
                used.add(new)
                rename[head] = new + head[1:]
            t = rename[head] + dot + rest
        elif t in ASCII and rng.random() < 0.5:
            t = ASCII[t]
        elif t == "∈" and big and rng.random() < 0.5:
            t = "in"
        big = t in ("∑", "∏") or (big and t not in (",",))
        out.append(t)
    return " ".join(out)


def swap_once(toks: list[str]) -> list[str] | None:
    """``toks`` with the two operands of its first ``+`` or ``*`` whose operands are both a name or a
    number and bind to it alone (``x + 1 ≤ exp x`` -> ``1 + x ≤ exp x``; not ``f x + 1``, ``a * b + c``'s
    ``+``, ``c - a + b``); None where there is none: ``--commute``."""
    from mathlas.ranking.lean_text import CLOSE, OPEN, PRECEDENCE, is_name

    def atom(t):
        return is_name(t) or t[:1].isdigit()

    for i in range(1, len(toks) - 1):
        if toks[i] not in ("+", "*") or not (atom(toks[i - 1]) and atom(toks[i + 1])):
            continue
        before = toks[i - 2] if i >= 2 else None
        after = toks[i + 2] if i + 2 < len(toks) else None
        loose = PRECEDENCE[toks[i]]
        if (before is None or before in OPEN or before == "," or PRECEDENCE.get(before, 99) < loose and i >= 3
                and (toks[i - 3] in CLOSE or atom(toks[i - 3]))) and (
                after is None or after in CLOSE or after == "," or PRECEDENCE.get(after, 99) < loose):
            return toks[:i - 1] + [toks[i + 1], toks[i], toks[i - 1]] + toks[i + 2:]
    return None


def sample(b, n: int, seed: int, commute: bool = False) -> list[tuple[int, str, str | None]]:
    """``n`` (row, statement query, conclusion query or None) drawn with ``seed`` (module docstring);
    with ``commute``, only statements ``swap_once`` can change, changed so, and no conclusions."""
    from mathlas.ranking import lean_text as L
    from mathlas.ranking import shape as S

    cols = b.table.column_names
    kind = b.table.column("kind").to_pylist()
    sig = b.table.column("signature").to_pylist()
    generated = b.table.column("generated").to_pylist() if "generated" in cols else [None] * len(kind)
    rows = [i for i, (k, g, s) in enumerate(zip(kind, generated, sig)) if k in ("theorem", "lemma") and not g and s]
    rng = random.Random(seed)
    rng.shuffle(rows)
    out = []
    for r in rows:
        toks = L.tokens(sig[r])
        binders, stmt = L.split_binders(toks)
        names, hyps = L.bound(binders)
        stmt = L.strip_forall(stmt, names)
        if len(stmt) < S.MIN_TOKENS or not any(t in L.OPERATORS for t in stmt):
            continue
        arrows = L.top_level(stmt, {"→"})
        concl = stmt[arrows[-1] + 1:] if arrows else (stmt if hyps else None)
        if commute:
            swapped = swap_once(stmt)
            if swapped is None:
                continue
            out.append((r, retype(swapped, rng), None))
            if len(out) == n:
                break
            continue
        statement = retype(stmt, rng)
        conclusion = retype(concl, rng) if concl is not None and concl != stmt or (concl and hyps) else None
        out.append((r, statement, conclusion))
        if len(out) == n:
            break
    return out


def without_shape(b) -> None:
    """The ranking before the shape stage, for this process."""
    from mathlas.ranking import pipeline

    p = pipeline.pipeline_for(b)
    pipeline._PIPELINES[b] = p.with_stages([s for s in p.stages if s.name != "shape"])


def run(bundle: str, n: int, seed: int, shape: bool, k: int = 10, commute: bool = False) -> dict:
    from mathlas.formal import open_formal
    from mathlas.ranking.shape import ShapeIndex, statement_shapes
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    b = open_formal(bundle)
    t0 = time.perf_counter()
    index = ShapeIndex.of(b)
    built = time.perf_counter() - t0
    if not shape:
        without_shape(b)
    ids = b.table.column("id").to_pylist()
    sig = b.table.column("signature").to_pylist()

    def same_statement(target: int, key: int) -> bool:
        want = {s for kind, s in statement_shapes(sig[target])[0] if kind == "S"}
        if not want:
            return False
        shape = next(iter(want))
        rows = index.rows_with("S", shape).tolist() + index.rows_with("S-", shape).tolist()
        return key == target or key in rows

    drawn = sample(b, n, seed, commute)
    forms: dict[str, dict] = {}
    examples: dict[str, list] = {}
    t0 = time.perf_counter()
    for row, statement, conclusion in drawn:
        for form, q in (("statement", statement), ("conclusion", conclusion)):
            if q is None:
                continue
            res = lean_search(LeanSearchRequest.make(q, k), b)
            keys = [b.key_of(h.id) for h in res.hits]
            f = forms.setdefault(form, {"n": 0, "top1": 0, "top10": 0, "same1": 0, "strong": 0, "strong_same1": 0})
            f["n"] += 1
            first = keys[0] if keys else -1
            f["top1"] += first == row
            f["top10"] += row in keys[:10]
            same = first >= 0 and same_statement(row, first)
            f["same1"] += same
            if res.match == "strong":
                f["strong"] += 1
                f["strong_same1"] += same
            if not same and len(examples.setdefault(form, [])) < 12:
                examples[form].append({"query": q, "target": ids[row], "first": ids[first] if first >= 0 else None,
                                       "target_rank": (keys.index(row) + 1) if row in keys else None})
    took = time.perf_counter() - t0
    out: dict = {"bundle": b.label, "n": len(drawn), "seed": seed, "shape_stage": shape, "commute": commute,
                 "index_seconds": round(built, 1), "search_seconds": round(took, 1)}
    for form, f in forms.items():
        m = f["n"]
        row = {"queries": m}
        for key in ("top1", "top10", "same1"):
            lo, hi = wilson(f[key], m)
            row[key] = {"hits": f[key], "rate": round(f[key] / max(1, m), 3), "ci95": [round(lo, 3), round(hi, 3)]}
        row["strong"] = f["strong"]
        row["strong_same1"] = round(f["strong_same1"] / f["strong"], 3) if f["strong"] else None
        out[form] = row
    out["misses"] = examples
    return out


def score_queries(bundle: str, path: Path, shape: bool, k: int = 10) -> dict:
    """``--queries``: the module docstring."""
    from mathlas.formal import open_formal
    from mathlas.request import LeanSearchRequest
    from mathlas.service import lean_search

    b = open_formal(bundle)
    if not shape:
        without_shape(b)
    have = set(b.table.column("id").to_pylist())
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = {"bundle": b.label, "queries": len(rows), "shape_stage": shape}
    true = [r for r in rows if r["kind"] == "true" and set(r["wanted"]) & have]
    first = top10 = strong = strong_right = false_strong = prose_shaped = 0
    misses = []
    for r in rows:
        res = lean_search(LeanSearchRequest.make(r["query"], k), b)
        ids = [h.id for h in res.hits]
        if r["kind"] == "prose":
            prose_shaped += any((h.ranks or {}).get("shape") for h in res.hits)
        elif r["kind"] == "false":
            false_strong += res.match == "strong"
        elif r in true:
            at = next((i for i, x in enumerate(ids, 1) if x in r["wanted"]), None)
            first += at == 1
            top10 += at is not None
            strong += res.match == "strong"
            strong_right += res.match == "strong" and at == 1
            if at != 1 and len(misses) < 15:
                misses.append({"query": r["query"], "wanted": r["wanted"], "first": ids[0] if ids else None, "at": at})
    n = len(true)
    out["true, wanted in the bundle"] = {"queries": n, "first": first, "top10": top10,
                                         "first_ci95": [round(x, 3) for x in wilson(first, n)],
                                         "strong": strong, "strong with a wanted first": strong_right}
    out["false answered strong"] = f"{false_strong} of {sum(r['kind'] == 'false' for r in rows)}"
    out["prose given a shape place"] = f"{prose_shaped} of {sum(r['kind'] == 'prose' for r in rows)}"
    out["misses"] = misses
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-shape", action="store_true", help="without the shape stage (the ranking before it)")
    ap.add_argument("--json", help="write the figures to this file too")
    ap.add_argument("--commute", action="store_true",
                    help="draw statements with a + or * between two names or numbers, typed in the other order")
    ap.add_argument("--queries", type=Path, help="score these statements instead (eval/lean-statements.jsonl)")
    a = ap.parse_args()
    out = score_queries(a.bundle, a.queries, not a.no_shape) if a.queries else run(a.bundle, a.n, a.seed, not a.no_shape,
                                                                                  commute=a.commute)
    text = json.dumps(out, indent=1, ensure_ascii=False)
    print(text)
    if a.json:
        Path(a.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
