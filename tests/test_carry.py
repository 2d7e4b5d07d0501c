"""Carrying a built bundle's vectors into an embedding cache (mathlas_build.carry; how informal-1.2.0 kept
1.1.0's document vectors): a rebuild from that cache embeds nothing and writes the same vectors."""
from __future__ import annotations

import numpy as np
import pytest

from mathlas import bundle as fmt
from mathlas_build.carry import carry, main


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_release_recipe_carries_the_release_vectors_exactly(tiny_recipe, tmp_path, capsys):
    """``[encoder] release`` + ``carry = true``: every text the release holds keeps the release's vector
    (the same int8 row and scale, so a rebuild reproduces the shipped vectors); only the others are
    embedded (with the release's encoder), through the carry cache, not the build's ``--cache``."""
    import re

    import pyarrow.parquet as pq

    from conftest import CORPORA
    from mathlas_build.pipeline import build
    from mathlas_build.recipe import load_recipe

    text, n = re.subn(r'(?m)^\[encoder\]\npath = "[^"]*"\n', '[encoder]\nrelease = "informal"\ncarry = true\n',
                      tiny_recipe.read_text(encoding="utf-8"))
    assert n == 1
    recipe = tmp_path / "carry.toml"
    recipe.write_text(text, encoding="utf-8")
    r = load_recipe(recipe, CORPORA, work_dir=tmp_path / "work")
    assert r.carry_cache == tmp_path / "work" / "carry" / r.release["bundle"].name
    out = build(r, tmp_path / "b", cache_dir=tmp_path / "cache")
    err = capsys.readouterr().err
    assert re.search(rf"\[carry\] [\d,]+ vectors of {r.release['bundle'].name} into {r.carry_cache}", err)
    assert not (tmp_path / "cache").exists()

    shipped, built = r.release["bundle"], out
    s = pq.read_table(shipped / fmt.META, columns=["id", "text"]).to_pydict()
    b = pq.read_table(built / fmt.META, columns=["id", "text"]).to_pydict()
    row = {d: i for i, d in enumerate(s["id"])}
    sq, ss = np.load(shipped / fmt.FLOAT_VECTORS, mmap_mode="r"), np.load(shipped / fmt.FLOAT_SCALES)
    bq, bs = np.load(built / fmt.FLOAT_VECTORS), np.load(built / fmt.FLOAT_SCALES)
    same = [(j, row[d]) for j, d in enumerate(b["id"]) if d in row and s["text"][row[d]] == b["text"][j]]
    assert len(same) >= len(b["id"]) // 2, "most of the tiny bundle's texts are the release's"
    for j, i in same:
        assert np.array_equal(bq[j], sq[i]) and bs[j] == ss[i], b["id"][j]
    new = len(set(b["text"]) - set(s["text"]))
    assert f", {new} to embed" in err
