"""What a bundle's manifest declares for its ranking (the ``fusion`` block), checked and kept.

``fusion(bundle)``: the RRF defaults (``k_rrf``, channel ``weights``...), the manifest's measured block
over ``mathlas.bundle.DEFAULT_FUSION``; ``priors(bundle)``: the document priors (``fusion.priors``:
name -> column, transform, weight); ``kind_weights(bundle)``: the measured kind weights
(``fusion.kind_weights``); ``definition_intent(bundle)``: what a query that reads as a noun phrase
changes (``fusion.definition_intent``; ``mathlas.ranking.intent``), or None.

A bundle never changes once written, so each is checked once per bundle (and metadata table: a
prior names a column) and kept: every search reads them. A block that is not what the format says
raises ``BundleCorruptError`` in one line, at every call until it is mended. The values are shared:
read them, do not change them (``Bundle.priors`` and ``Bundle.fusion`` hand out copies).
"""
from __future__ import annotations

import threading
import weakref
from typing import Any

from mathlas.bundle import DEFAULT_FUSION
from mathlas.checks import is_number
from mathlas.errors import BundleCorruptError
from mathlas.ranking.fusion import PRIOR_TRANSFORMS

_KEPT: weakref.WeakKeyDictionary[Any, dict] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _kept(bundle, name: str, make):
    """``make(bundle)``, kept per bundle and metadata table (a caller may replace the table)."""
    table = bundle.table
    with _LOCK:
        got = _KEPT.get(bundle, {}).get(name)
    if got is not None and got[0] is table:  # (table, value): a kept None is a value
        return got[1]
    value = make(bundle)
    with _LOCK:
        _KEPT.setdefault(bundle, {})[name] = (table, value)
    return value


def _declared(bundle) -> dict:
    return bundle.manifest.fusion or {}


def fusion(bundle) -> dict:
    """The RRF defaults: the manifest's measured ``fusion`` block over ``DEFAULT_FUSION``."""
    return _kept(bundle, "fusion", lambda b: {**DEFAULT_FUSION, **_declared(b)})


def definition_intent(bundle) -> dict | None:
    """The manifest's ``fusion.definition_intent`` (kinds, factor on their fused score, factor on the
    priors' weights for a query that reads as a noun phrase; ``mathlas.ranking.intent``), or None."""
    return _kept(bundle, "definition_intent", _definition_intent)


def _definition_intent(bundle) -> dict | None:
    spec = _declared(bundle).get("definition_intent")
    if not spec:
        return None
    kinds, factor, prior = ((spec.get("kinds"), spec.get("factor", 1.0), spec.get("prior_factor", 1.0))
                            if isinstance(spec, dict) else (None, None, None))
    if not (isinstance(kinds, list) and all(isinstance(x, str) for x in kinds) and is_number(factor)
            and factor >= 0 and is_number(prior) and prior >= 0):
        raise BundleCorruptError(f"bundle {bundle.root.name}: manifest fusion.definition_intent must give "
                                 f"kinds (a list), factor and prior_factor (numbers >= 0), got {spec!r}")
    return {"kinds": kinds, "factor": float(factor), "prior_factor": float(prior)}


def priors(bundle) -> dict[str, dict]:
    """The document priors the manifest declares (``fusion.priors``): name -> column, transform, weight."""
    return _kept(bundle, "priors", _priors)


def _priors(bundle) -> dict[str, dict]:
    declared = _declared(bundle).get("priors") or {}
    out = {}
    bad = f"bundle {bundle.root.name}: manifest fusion.priors"
    if not isinstance(declared, dict):
        raise BundleCorruptError(f"{bad} is not an object")
    for name, spec in declared.items():
        if not isinstance(spec, dict) or not bundle.has_column(spec.get("column")) \
                or spec.get("transform", "identity") not in PRIOR_TRANSFORMS:
            raise BundleCorruptError(f"{bad}[{name!r}] = {spec!r}: needs a metadata column and a transform "
                                     f"({', '.join(PRIOR_TRANSFORMS)})")
        w = spec.get("weight", 0.0)
        if not is_number(w):
            raise BundleCorruptError(f"{bad}[{name!r}]: weight {w!r} is not a number")
        out[name] = {"column": spec["column"], "transform": spec.get("transform", "identity"), "weight": float(w)}
    return out


def kind_weights(bundle) -> dict[str, float]:
    """The manifest's measured kind weights (``fusion.kind_weights``: kind -> factor on the fused
    score; kinds it leaves out count 1)."""
    return _kept(bundle, "kind_weights", _kind_weights)


def _kind_weights(bundle) -> dict[str, float]:
    declared = _declared(bundle).get("kind_weights") or {}
    if not isinstance(declared, dict) or not all(is_number(w) and w >= 0 for w in declared.values()):
        raise BundleCorruptError(f"bundle {bundle.root.name}: manifest fusion.kind_weights must map kinds "
                                 f"to numbers >= 0, got {declared!r}")
    return {str(k): float(w) for k, w in declared.items()}
