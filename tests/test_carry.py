"""Carrying a built bundle's vectors into an embedding cache (mathlas_build.carry; how informal-1.2.0 kept
1.1.0's document vectors): a rebuild from that cache embeds nothing and writes the same vectors."""
from __future__ import annotations

import numpy as np

from mathlas import bundle as fmt
from mathlas_build.carry import carry, main


def test_rebuild_from_carried_vectors(tiny_bundle_dir, tiny_recipe, tmp_path, capsys):
    from mathlas_build.pipeline import build
    from mathlas_build.recipe import load_recipe
    from conftest import CORPORA

    cache = tmp_path / "carry"
    added = carry(tiny_bundle_dir, tiny_bundle_dir / "encoder", cache)
    assert added > 0 and f"[carry] {added:,} vectors of tiny-0.1.0" in capsys.readouterr().err
    assert main([str(tiny_bundle_dir), str(tiny_bundle_dir / "encoder"), str(cache), "-q"]) == 0
    assert capsys.readouterr().err == "" and carry(tiny_bundle_dir, tiny_bundle_dir / "encoder", cache, quiet=True) == 0

    out = build(load_recipe(tiny_recipe, CORPORA), tmp_path / "again", cache_dir=cache, quiet=False)
    err = capsys.readouterr().err
    assert ", 0 to embed" in err                                    # every text came from the carried cache
    old = np.load(tiny_bundle_dir / fmt.FLOAT_VECTORS) * np.load(tiny_bundle_dir / fmt.FLOAT_SCALES)[:, None]
    new = np.load(out / fmt.FLOAT_VECTORS) * np.load(out / fmt.FLOAT_SCALES)[:, None]
    assert old.shape == new.shape
    cos = (old * new).sum(1) / np.linalg.norm(old, axis=1) / np.linalg.norm(new, axis=1)
    assert cos.min() > 0.999                                         # the same vectors, requantized
