"""The names ``@[to_additive]`` translates, as Lean's translation dictionary holds them.

A twin's dependencies are its original's, each through this dictionary (``lean.read``): ``add_comm`` uses
``AddCommMagma.add_comm`` where ``mul_comm`` uses ``CommMagma.mul_comm``. Lean (Mathlib/Tactic/Translate/
Core.lean) registers:

* each translated declaration with its twin, ``existing`` ones and twins declared by hand too
  (``insertTranslation`` in ``addTranslationAttr``: ``CommMagma`` -> ``AddCommMagma``, both written);
* with a structure, class or inductive, its fields (parent projections ``toX`` included) and its
  constructors with the twin's, paired by position (``proceedFields``; Lean refuses lists of different
  lengths, here, where a parse may miss one, the pairs are then made by name: ``guess_name`` of the last
  part);
* the ``simps`` lemmas of ``@[to_additive (attr := simps)]`` with the twin's (``applyAttributes``:
  ``translateLemmas``), paired by projection.

Equation lemmas (also registered) are not read here; ``ext``, ``reassoc`` and the other attributes of
``(attr := ..)`` are applied to both declarations without a translation. A pair is kept only where both
names are emitted.
"""
from __future__ import annotations

from mathlas_build.sources.lean_generated import guess_name


def _pairs(src: list[str], tgt: list[str]) -> list[tuple[str, str]]:
    """``src``'s names with ``tgt``'s: by position (Lean's rule) when the lists are as long, else by name."""
    if len(src) == len(tgt):
        return list(zip(src, tgt))
    by_last = {t.rsplit(".", 1)[-1]: t for t in tgt}
    return [(s, by_last[guess_name(s.rsplit(".", 1)[-1])]) for s in src
            if guess_name(s.rsplit(".", 1)[-1]) in by_last]


def twin_names(decls: list[dict], translations: dict[str, str], add_of: dict[str, str], emitted: set[str],
               simps: dict[int, list[tuple[str, str, str]]]) -> dict[str, str]:
    """Name -> twin name for every pair above. ``translations``: every ``@[to_additive]`` pair (``existing``
    ones included, lean.read's); ``add_of``: the twins generated here; ``decls[i]["gen"]``: the names each
    declaration generates; ``simps[i]``: ``(name, projection, owner)`` of ``decls[i]``'s simps lemmas."""
    twins = {s: t for s, t in translations.items() if s != t and s in emitted and t in emitted}
    twins.update(add_of)
    made: dict[str, tuple[list[str], list[str]]] = {}   # owner -> (fields and projections, constructors)
    for d in decls:
        for g in d.get("gen") or ():
            if g["generated"] in ("field", "constructor"):
                fields, ctors = made.setdefault(g["from"], ([], []))
                (ctors if g["generated"] == "constructor" else fields).append(g["name"])
    for s, t in list(twins.items()):
        if s in made and t in made:
            for a, b in zip(made[s], made[t]):
                for x, y in _pairs(a, b):
                    twins.setdefault(x, y)
    for k, lemmas in simps.items():
        add = add_of.get(decls[k]["full"] or "")
        if add:
            theirs = {proj: name for name, proj, owner in lemmas if owner == add}
            for name, proj, owner in lemmas:
                if owner == decls[k]["full"] and proj in theirs:
                    twins.setdefault(name, theirs[proj])
    return twins
