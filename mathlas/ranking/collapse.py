"""One theorem, one rank. ``Collapse`` keeps the best-ranked statement of each group of copies
(``mathlas.groups``: the same fact in several sources, forms of one Metamath statement, a Lean
``alias`` and its target) among the answer's rows, moves the other copies below them and lets the
next candidates fill the ranks they leave, so the top k holds k different facts. A request with
``collapse=False`` (``--all-copies``, ``all_copies``) keeps every copy where it ranks. It runs after
the stages that score and before those that place rows on purpose (``mathlas.ranking.stages``).

``with_also_in`` fills each hit's ``also_in``: where else its fact is stated (``{"source", "label",
"id"}``, the other copies whether they ranked or not, and the explicit copies in the installed bundle
of the other kind), the same with or without collapsing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from mathlas.hit import Hit
    from mathlas.ranking.candidates import Candidates


class Collapse:
    """One rank per group among the first ``plan.top`` rows (module docstring); the copies it folds
    keep their order after every other candidate."""

    name = "collapse"

    def __call__(self, pool: Candidates, ctx: Any) -> Candidates:
        if not getattr(ctx.request, "collapse", True) or len(pool) < 2:
            return pool
        from mathlas.groups import groups_of

        groups = groups_of(ctx.bundle)
        if not _a_group_twice(groups.of, pool.keys):
            return pool  # most pools (about 4 in 5): nothing to fold, known without a loop over the pool
        keys = pool.keys.tolist()
        kept = groups.collapse(keys, ctx.plan.top)
        folded = {k for _, copies in kept for k in copies}
        if not folded:
            return pool
        if ctx.bundle.has_column("alias_of"):
            kept = _targets_shown(ctx.bundle, kept)
            folded = {k for _, copies in kept for k in copies}
        shown = {k for k, _ in kept}
        row = {k: i for i, k in enumerate(keys)}
        # the rows shown (each where its group's best ranked), then every other row but the folded
        # copies, then the copies
        order = ([row[k] for k, _ in kept]
                 + [i for i, k in enumerate(keys) if k not in shown and k not in folded]
                 + [i for i, k in enumerate(keys) if k in folded and k not in shown])
        ctx.notes["collapsed"] = len(folded)
        return pool.take(np.asarray(order, dtype=np.int64))


def _targets_shown(bundle, kept: list[tuple[int, list[int]]]) -> list[tuple[int, list[int]]]:
    """A deprecated Lean ``alias`` that ranked above the declaration it stands for gives it its place
    (``mellin_inversion``, deprecated for ``mellinInv_mellin_eq``): the declaration is the name to
    use, and a deprecated one goes after its replacement anyway. An alias that is not deprecated keeps
    its place (``Nat.bertrand`` is the theorem's famous name)."""
    columns = [c for c in ("deprecated", "replaced_by") if bundle.has_column(c)]
    shown = [k for k, copies in kept if copies]
    if not columns or not shown:
        return kept
    flags = [bundle.strings(c)(shown) for c in columns]
    old = {k for i, k in enumerate(shown) if any(f[i] for f in flags)}
    targets = dict(zip(shown, bundle.strings("alias_of")(shown)))
    out = []
    for key, copies in kept:
        target = targets.get(key) if key in old else None
        if target:
            ids = bundle.strings("id")(copies)
            if target in ids:
                t = copies[ids.index(target)]
                out.append((t, [key, *(c for c in copies if c != t)]))
                continue
        out.append((key, copies))
    return out


def _a_group_twice(of: np.ndarray, keys: np.ndarray) -> bool:
    """Whether two of ``keys`` are in one group (``of``: each document's group, -1 for none; a saved
    finding's key, past its end, has none): else collapsing folds nothing."""
    group = of[keys[keys < len(of)]]
    group = np.sort(group[group >= 0])
    return bool((group[1:] == group[:-1]).any())


def with_also_in(bundle, hits: Sequence[Hit], keys: Sequence[int]) -> None:
    """Set each hit's ``also_in`` from the bundle's groups (``keys``: the hits' document keys; a
    saved finding's, past the bundle's documents, has none)."""
    n = len(bundle)
    if not any(0 <= int(k) < n for k in keys):
        return
    from mathlas.groups import groups_of

    groups = groups_of(bundle)
    for hit, key in zip(hits, keys):
        if 0 <= int(key) < n:
            hit.also_in = [c._asdict() for c in groups.also_in(int(key))]
