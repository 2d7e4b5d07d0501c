"""The build pipeline: recipes, atomic writes, resumable embedding through the cache, the bundle it writes."""
from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import CORPORA
from mathlas import bundle as fmt
from mathlas_build.document import Document
from mathlas_build.embed import embed_documents
from mathlas_build.recipe import RecipeError, load_recipe
from mathlas_build.writer import quantize_i8, write_bundle


def _docs(n=4):
    return [Document(id=f"t:{i}", source="t", kind="lemma", name=f"lemma {i}", title="T", body=f"$x^{i}$",
                     statement=f"statement number {i}", license="CC0") for i in range(n)]


def test_recipe_errors(tmp_path, encoder_dir):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'x'\n")
    with pytest.raises(RecipeError, match="missing required key 'version'"):
        load_recipe(bad, CORPORA)
    bad.write_text("name = [")
    with pytest.raises(RecipeError, match="not valid TOML"):
        load_recipe(bad, CORPORA)
    with pytest.raises(RecipeError, match="not found"):
        load_recipe(tmp_path / "none.toml", CORPORA)
    bad.write_text(f"name='x'\nversion='1'\n[encoder]\npath='{encoder_dir.as_posix()}'\n"
                   "[[sources]]\nreader='stacks'\npath='no-such-corpus'\n")
    with pytest.raises(RecipeError, match="does not exist"):
        load_recipe(bad, CORPORA)
    bad.write_text("name='x'\nversion='1'\n[encoder]\npath='/nonexistent/encoder'\n[[sources]]\nreader='stacks'\npath='.'\n")
    with pytest.raises(RecipeError, match="no encoder.json"):
        load_recipe(bad, tmp_path)


def test_cli_usage_errors(tmp_path):
    from mathlas_build.cli import main

    assert main([str(tmp_path / "missing.toml")]) == 2


def test_quantize_i8_roundtrip():
    v = np.random.default_rng(1).normal(size=(50, 16)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q, scale = quantize_i8(v)
    assert q.dtype == np.int8 and scale.dtype == np.float32
    back = q.astype(np.float32) * scale[:, None]
    assert np.abs(back - v).max() <= scale.max() / 2 + 1e-6
    assert ((back * v).sum(axis=1) / np.linalg.norm(back, axis=1)).min() > 0.999


def test_write_is_atomic_and_refuses_duplicates(tmp_path, encoder_dir):
    docs = _docs()
    vecs = np.eye(4, 384, dtype=np.float32)
    out = tmp_path / "b"
    dup = docs + [docs[0]]
    with pytest.raises(ValueError, match="duplicate document id 't:0'"):
        write_bundle(dup, ["x"] * 5, ["x"] * 5, np.zeros((5, 384), np.float32), encoder_dir, out,
                     name="b", version="1", sources={}, quiet=True)
    assert not out.exists() and not any(p.name.startswith(".b.tmp-") for p in tmp_path.iterdir())
    with pytest.raises(ValueError, match="differ in length"):
        write_bundle(docs, ["x"] * 3, ["x"] * 4, vecs, encoder_dir, out, name="b", version="1", sources={}, quiet=True)
    path = write_bundle(docs, [d.statement for d in docs], [d.name for d in docs], vecs, encoder_dir, out,
                        name="b", version="1", sources={"t": {"count": 4, "license": "CC0", "attribution": "t"}},
                        quiet=True)
    m = fmt.verify(path)
    assert m.count == 4 and fmt.MANIFEST not in m.files
    assert all(oct(os.stat(path / f).st_mode)[-3:] == "644" for f in m.files)  # tantivy writes 0600
    with pytest.raises(FileExistsError):
        write_bundle(docs, ["x"] * 4, ["x"] * 4, vecs, encoder_dir, out, name="b", version="1", sources={}, quiet=True)


def test_failed_write_leaves_nothing(tmp_path, encoder_dir, monkeypatch):
    import mathlas_build.writer as w

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(w, "write_vectors", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        write_bundle(_docs(), ["x"] * 4, ["x"] * 4, np.zeros((4, 384), np.float32), encoder_dir, tmp_path / "b",
                     name="b", version="1", sources={}, quiet=True)
    assert list(tmp_path.iterdir()) == []


def test_embedding_cache_resumes(tmp_path, encoder_dir, monkeypatch):
    import mathlas_build.embed as e

    texts = [f"lemma about rings number {i}" for i in range(7)]
    first = embed_documents(texts, encoder_dir, cache_dir=tmp_path, chunk=3, quiet=True)
    files = sorted(tmp_path.rglob("seg-*.npz"), key=lambda p: p.stat().st_size)
    assert len(files) == 3  # chunks of 3, 3, 1
    files[-1].unlink()  # a crash lost one of the full chunks
    calls = []
    orig = e.Encoder.encode_documents

    def spy(self, docs, **kw):
        calls.append(len(docs))
        return orig(self, docs, **kw)

    monkeypatch.setattr(e.Encoder, "encode_documents", spy)
    again = embed_documents(texts, encoder_dir, cache_dir=tmp_path, chunk=3, quiet=True)
    assert calls == [3]  # only the lost chunk is embedded again
    assert again.tobytes() == first.tobytes()


def test_rebuild_into_the_same_cache_embeds_nothing(tiny_recipe, tiny_bundle_dir, tmp_path, capsys):
    """Every recipe builds through the per-text cache; one that still says ``vector_store = true`` (the
    option the cache used to need) builds the same. Cached, fresh and cache-less vectors are the same bytes."""
    from mathlas_build.pipeline import build

    old = tmp_path / "old.toml"
    old.write_text(tiny_recipe.read_text().replace("[options]\n", "[options]\nvector_store = true\n"))
    assert "vector_store = true" in old.read_text()
    built = []
    for name, recipe in (("first", tiny_recipe), ("again", old)):
        built.append(build(load_recipe(recipe, CORPORA), tmp_path / name, cache_dir=tmp_path / "cache"))
    err = capsys.readouterr().err
    assert err.count("0 already embedded") == 1 and err.count(", 0 to embed") == 1
    assert err.count("IO binding") == 1  # the second build loaded no model
    sums = [fmt.read_manifest(b).files[fmt.FLOAT_VECTORS].sha256 for b in (*built, tiny_bundle_dir)]
    assert sums[0] == sums[1] == sums[2]
    assert len(list((tmp_path / "cache" / "texts").rglob("seg-*.npz"))) == 1  # one chunk of 2,048 holds them all


def test_tiny_bundle_ids_follow_the_stable_scheme(tiny):
    ids = tiny.table.column("id").to_pylist()
    assert len(ids) == len(set(ids))
    prefixes = {i.split(":", 1)[0] for i in ids}
    assert prefixes == {"stacks", "planetmath", "hott", "openlogic", "napkin", "proofnet"}
    for i, link in zip(ids, tiny.table.column("link").to_pylist()):
        if i.startswith("stacks:"):
            assert link == f"https://stacks.math.columbia.edu/tag/{i.split(':')[1]}"
        if i.startswith("planetmath:"):
            assert link.startswith("https://planetmath.org/")
    texts = tiny.table.column("text").to_pylist()
    assert all(t and "\\begin" not in t for t in texts)


def test_build_is_reproducible(tiny_recipe, tiny_bundle_dir, tmp_path):
    """Rebuilding from the same recipe gives the same documents, texts and vectors."""
    from mathlas_build.pipeline import build

    again = build(load_recipe(tiny_recipe, CORPORA), tmp_path / "again", cache_dir=None, quiet=True)
    a, b = fmt.read_manifest(tiny_bundle_dir), fmt.read_manifest(again)
    for rel in (fmt.META, fmt.FLOAT_VECTORS, fmt.FLOAT_SCALES, "encoder/model.onnx"):
        assert a.files[rel].sha256 == b.files[rel].sha256, rel
    assert a.sources == b.sources and a.count == b.count


def test_install_goes_through_the_runtime_command(tiny_bundle_dir, tmp_path, monkeypatch, capfd):
    # `mathlas-build ... --install` and `mathlas index build-lean`: pack, then `mathlas index install`
    # in a child process (the build never imports the installer)
    import shutil

    from mathlas_build.pipeline import install_bundle

    built = tmp_path / "work" / "tiny-0.1.0"
    shutil.copytree(tiny_bundle_dir, built)
    data = tmp_path / "data"
    monkeypatch.setenv("MATHLAS_DATA_DIR", str(data))
    install_bundle(built, quiet=True)
    installed = data / "bundles" / "tiny-0.1.0"
    assert fmt.verify(installed).name == "tiny"
    assert capfd.readouterr().out.strip() == str(installed)
    install_bundle(built, quiet=True)  # the same version again: replaced, not refused
    assert fmt.verify(installed).name == "tiny"
