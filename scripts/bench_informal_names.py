"""Does a theorem's name find it? The informal side of issue 30, part 3.

Draws ``--n`` documents at random (``--seed``) from an informal bundle whose name, heading or alias is a
result's name: it holds a word that says what kind of result it is ("theorem", "lemma", "inequality",
"criterion"...) or a possessive, and at most eight words (Stacks' and the HoTT book's names are their
labels' words and are left out; their aliases count). Each name is searched through the library's seam
(``mathlas.service.search``, what ``mathlas search`` runs; saved findings left out) as a person might
type it:

* ``written``: as the source writes it ("Hensel's lemma", "Stone-Weierstrass theorem");
* ``plain``: lower case, accents, hyphens and the possessive's apostrophe dropped ("hensel lemma",
  "stone weierstrass theorem");
* ``no apostrophe``: the possessive typed without its apostrophe ("hensels lemma"), for names that
  have one.

A query is answered when its first hit, or a statement of the same fact shown with it ("also in"), is
named by the name as written (``mathlas.ranking.named.named_keys``: any entry of that name counts, not
only the one drawn). ``strong`` counts the answers whose ``match`` says so; ``strong and wrong`` the
strong answers that are not answered. ``--without-stage`` searches with ``NamedFirst`` switched off
(the ranking before it). Proportions with Wilson 95% intervals.

    python scripts/bench_informal_names.py [--bundle NAME_OR_DIR] [--n 200] [--seed 0] [--without-stage] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.bench_names import wilson  # noqa: E402

KIND_WORDS = frozenset("""theorem lemma inequality criterion conjecture law formula identity principle
corollary""".split())
# a proof or an example is asked for as "proof of X": its statement comes first on purpose (the
# statement lift), so it is no name to look up
SKIPPED_KINDS = frozenset({"proof", "example"})


def name_forms(name: str) -> dict[str, str]:
    """The ways a person types ``name`` (module docstring)."""
    from mathlas.ranking.text import strip_accents

    plain = strip_accents(name).lower().replace("-", " ").replace("–", " ")
    plain = re.sub(r"['’]s\b", "", plain)
    plain = re.sub(r"['’]", "", plain)
    plain = " ".join(plain.split())
    forms = {"written": name, "plain": plain}
    if re.search(r"\w['’]s\b", name):
        forms["no apostrophe"] = " ".join(re.sub(r"['’]s\b", "s", strip_accents(name).lower()).replace("-", " ").split())
    return forms


def draw(bundle, n: int, seed: int) -> list[tuple[str, str]]:
    """(id, name) of ``n`` documents named like results, drawn at random."""
    from mathlas.ranking.learned import LABEL_NAMED, _POSSESSIVE, words

    ids = bundle.column("id").to_pylist()
    sources = bundle.column("source").to_pylist()
    names = bundle.column("name").to_pylist()
    titles = bundle.column("title").to_pylist() if bundle.has_column("title") else [""] * len(ids)
    aliases = bundle.column("aliases").to_pylist() if bundle.has_column("aliases") else [None] * len(ids)
    kinds = bundle.column("kind").to_pylist()
    pool = []
    for i, (doc_id, source) in enumerate(zip(ids, sources)):
        if kinds[i] in SKIPPED_KINDS:
            continue
        candidates = [a for a in (aliases[i] or "").split(";") if a.strip()]
        if source not in LABEL_NAMED:
            candidates = [names[i] or "", titles[i] or "" if source == "proofwiki" else "", *candidates]
        for name in candidates:
            ws = words(name)
            if ws[:1] == ["proof"] or ws[:2] in (["another", "proof"], ["alternative", "proof"]):
                break  # a proof, whatever its kind column says
            if 2 <= len(ws) <= 8 and (set(ws) & KIND_WORDS or _POSSESSIVE.search(name)) and "$" not in name:
                pool.append((doc_id, name.strip()))
                break
    return random.Random(seed).sample(pool, min(n, len(pool)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", default=None, help="an informal bundle: a name or a directory (default: the default bundle)")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--without-stage", action="store_true", help="search with NamedFirst switched off")
    ap.add_argument("--json", help="write the figures and every row here")
    args = ap.parse_args(argv)

    from mathlas import service
    from mathlas.engine import open_bundle
    from mathlas.ranking import named
    from mathlas.request import SearchRequest

    if args.without_stage:
        named.NamedFirst.__call__ = lambda self, pool, ctx: pool  # the ranking before the stage
    b = open_bundle(args.bundle)
    sample = draw(b, args.n, args.seed)
    rows, tally = [], {}
    t0 = time.perf_counter()
    for doc_id, name in sample:
        for form, query in name_forms(name).items():
            answer = service.search(SearchRequest.make(query, 10), args.bundle, findings=False)
            first = answer.hits[0] if answer.hits else None
            keys = []
            if first is not None:
                keys = [b.key_of(first.id)]
                for copy in first.also_in or []:
                    try:
                        keys.append(b.key_of(copy["id"]))
                    except Exception:  # a copy in the other bundle
                        continue
            ok = any(named.named_keys(b, name, keys))
            t = tally.setdefault(form, {"n": 0, "answered": 0, "strong": 0, "strong_wrong": 0})
            t["n"] += 1
            t["answered"] += ok
            t["strong"] += answer.match == "strong"
            t["strong_wrong"] += answer.match == "strong" and not ok
            rows.append({"id": doc_id, "name": name, "form": form, "query": query, "answered": ok,
                         "first": first.id if first else None, "match": answer.match})
    print(f"bundle {b.name} {b.version}: {len(sample)} names drawn (seed {args.seed}), "
          f"{'without' if args.without_stage else 'with'} NamedFirst, {time.perf_counter() - t0:.0f} s")
    print("| form | queries | first hit named [95%] | strong | strong and wrong |")
    print("|---|---:|---|---:|---:|")
    for form, t in tally.items():
        lo, hi = wilson(t["answered"], t["n"])
        print(f"| {form} | {t['n']} | {t['answered'] / t['n']:.3f} [{lo:.3f}, {hi:.3f}] | {t['strong']} | {t['strong_wrong']} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"tally": tally, "rows": rows}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
