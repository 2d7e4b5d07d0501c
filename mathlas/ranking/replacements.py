"""Deprecated declarations after their replacements: the ``ReplacementsFirst`` stage.

A formal bundle built since deprecation was recorded holds, per declaration, ``deprecated`` (a note:
``since 2024-01-01``, the attribute's message) and ``replaced_by`` (the id of the declaration to use
instead: the one ``@[deprecated X]`` names, or the target of a deprecated ``alias``). A deprecated
declaration usually states what its replacement states, so both rank close; the user should meet the
replacement first. The flag itself is shown by every surface (``mathlas.formal.formal_hit``), and a
Lean search may leave the deprecated out (``LeanSearchRequest.deprecated``).
"""
from __future__ import annotations

import numpy as np

from mathlas.errors import UsageError


class ReplacementsFirst:
    """A stage (``mathlas.ranking.stages``): a deprecated declaration among the answer's first
    ``plan.top`` rows goes right after its replacement when the pool ranks that replacement lower (a
    chain of replacements too). The order of the scores stays: a moved row takes its new
    predecessor's score. A bundle without a ``replaced_by`` column is left as it is."""

    name = "replacements"

    def __call__(self, pool, ctx):
        b = ctx.bundle
        if not len(pool) or not b.has_column("replaced_by"):
            return pool
        n = len(b)
        head = [k for k in pool.keys[:ctx.plan.top].tolist() if k < n]
        # read by key (a chunked column's take would concatenate its chunks first: half a millisecond)
        replaced = b.strings("replaced_by")(head) if head else []
        target: dict[int, int] = {}
        for k, rid in zip(head, replaced):
            if rid:
                try:
                    target[k] = b.key_of(rid)
                except UsageError:  # a replacement the bundle does not hold
                    pass
        if not target:
            return pool
        keys = pool.keys.tolist()
        order = list(range(len(keys)))
        for _ in range(len(target)):  # one move a pass; a chain needs a pass per link
            at = {keys[i]: p for p, i in enumerate(order)}
            move = next(((p, at[target[keys[i]]]) for p, i in enumerate(order)
                         if keys[i] in target and at.get(target[keys[i]], -1) > p), None)
            if move is None:
                break
            p, j = move
            order.insert(j, order.pop(p))  # taken from before j: inserted at j, it lands right after
        if order == list(range(len(keys))):
            return pool
        out = pool.take(np.asarray(order, dtype=np.int64))
        return out.rescored(np.minimum.accumulate(out.scores))
