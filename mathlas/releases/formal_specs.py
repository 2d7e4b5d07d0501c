"""Which formal (Lean) bundles a request means: the one it names, ``$MATHLAS_FORMAL_BUNDLE``, or every
installed one. Apart from ``mathlas.formal`` so that what only needs the names (``mathlas.groups``)
does not import the engine."""
from __future__ import annotations

import os

FORMAL_BUNDLE = "mathlib"      # the name of the formal bundle built from the Mathlib + Batteries corpora
FORMAL_ENV = "MATHLAS_FORMAL_BUNDLE"


def installed_formal() -> list[str]:
    """Names of the installed formal bundles (their manifest lists the ``lean`` source), mathlib first."""
    from mathlas.releases.install import installed

    names = {b.name for b in installed() if b.manifest is not None and "lean" in b.manifest.sources}
    return sorted(names, key=lambda n: (n != FORMAL_BUNDLE, n))


def formal_bundle_specs(bundle: str | None) -> list[str]:
    """The formal bundles a request means: the one it names, else ``$MATHLAS_FORMAL_BUNDLE``, else every
    installed formal bundle (mathlib first); none installed: ``[mathlib]``, whose absence says how to build one."""
    if bundle:
        return [bundle]
    env = os.environ.get(FORMAL_ENV)
    if env:
        return [env]
    return installed_formal() or [FORMAL_BUNDLE]


def formal_bundle_spec(bundle: str | None) -> str:
    """The one formal bundle a request means where one is needed: the first of ``formal_bundle_specs``."""
    return formal_bundle_specs(bundle)[0]
