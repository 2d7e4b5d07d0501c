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


@pytest.mark.slow
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


@pytest.mark.slow
def test_build_is_reproducible(tiny_recipe, tiny_bundle_dir, tmp_path):
    """Rebuilding from the same recipe gives the same documents, texts and vectors."""
    from mathlas_build.pipeline import build

    again = build(load_recipe(tiny_recipe, CORPORA), tmp_path / "again", cache_dir=None, quiet=True)
    a, b = fmt.read_manifest(tiny_bundle_dir), fmt.read_manifest(again)
    for rel in (fmt.META, fmt.FLOAT_VECTORS, fmt.FLOAT_SCALES, "encoder/model.onnx"):
        assert a.files[rel].sha256 == b.files[rel].sha256, rel
    assert a.sources == b.sources and a.count == b.count


@pytest.mark.slow
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
    assert sorted(p.name for p in built.parent.iterdir()) == ["tiny-0.1.0"]   # no release left beside it


@pytest.mark.slow
def test_pack_and_install_pack_once(tiny_bundle_dir, tmp_path, monkeypatch, capfd):
    # `--pack DIR --install`: the release --pack made is the one installed (it used to be packed again,
    # beside the bundle, and left there with a catalog.json)
    import shutil

    from mathlas_build.pipeline import install_bundle
    from mathlas_build.release import pack

    built = tmp_path / "work" / "tiny-0.1.0"
    shutil.copytree(tiny_bundle_dir, built)
    monkeypatch.setenv("MATHLAS_DATA_DIR", str(tmp_path / "data"))
    archive, _ = pack(built, tmp_path / "rel", quiet=True)
    install_bundle(built, quiet=True, archive=archive)
    assert fmt.verify(tmp_path / "data" / "bundles" / "tiny-0.1.0").name == "tiny"
    assert sorted(p.name for p in built.parent.iterdir()) == ["tiny-0.1.0"]


# ---------------------------------------------------------------- a recipe's encoder from a release, its ranker

REPO_ARTIFACTS = __import__("pathlib").Path(__file__).resolve().parents[1] / "artifacts"


def _with_encoder(tiny_recipe, table: str) -> str:
    """The tests' tiny recipe with its [encoder] table replaced by ``table``."""
    import re

    text = tiny_recipe.read_text(encoding="utf-8")
    new, n = re.subn(r'(?m)^\[encoder\]\npath = "[^"]*"\n', lambda _: table.strip() + "\n", text)
    assert n == 1
    return new


@pytest.fixture(scope="module")
def release_work(tmp_path_factory):
    """A build's work/ for this module: the default release is unpacked into it once."""
    return tmp_path_factory.mktemp("work")


@pytest.fixture(scope="module")
def default_release(release_work):
    """(catalog entry, unpacked directory's manifest) of the newest informal release in artifacts/."""
    from mathlas_build.release import find_release, unpack

    entry, archive = find_release(REPO_ARTIFACTS, "informal")
    return entry, fmt.read_manifest(unpack(archive, entry["sha256"], release_work / "releases", quiet=True))


@pytest.mark.slow
def test_a_recipe_builds_on_the_encoder_of_a_shipped_release(tiny_recipe, tiny_bundle_dir, tmp_path, release_work,
                                                             default_release):
    """``[encoder] release = "informal"``: the encoder/ of the newest informal release of the repository's
    catalog, checksum-verified, embeds the documents and travels in the bundle; the recipe's sha256 and
    licence are checked, and the manifest says which release the encoder came from."""
    import json

    from mathlas_build.pipeline import build

    entry, shipped = default_release
    model_sha = shipped.files["encoder/model.onnx"].sha256
    licence = shipped.encoder["license"]
    recipe = tmp_path / "release.toml"
    recipe.write_text(_with_encoder(tiny_recipe, f'[encoder]\nrelease = "informal"\nsha256 = "{model_sha}"\n'
                                                 f'license = "{licence}"\n'), encoding="utf-8")
    r = load_recipe(recipe, CORPORA, work_dir=release_work)
    assert r.release["release"] == f"informal-{entry['version']}" and r.encoder.parent.parent == release_work / "releases"
    out = build(r, tmp_path / "b", cache_dir=None, quiet=True)
    m = fmt.verify(out)
    for rel in ("encoder/model.onnx", "encoder/tokenizer.json", "encoder/encoder.json"):
        assert m.files[rel].sha256 == shipped.files[rel].sha256, rel
    assert m.recipe["encoder"]["from_release"] == {"release": f"informal-{entry['version']}",
                                                   "archive_sha256": entry["sha256"]}
    assert m.recipe["encoder"]["license"] == licence == m.encoder["license"]
    tiny = fmt.read_manifest(tiny_bundle_dir)
    if tiny.files["encoder/model.onnx"].sha256 == model_sha:  # the tests' encoder is the default bundle's
        assert m.files[fmt.FLOAT_VECTORS].sha256 == tiny.files[fmt.FLOAT_VECTORS].sha256
    # a pin that no longer holds stops the build before reading anything
    bad = recipe.read_text(encoding="utf-8").replace(model_sha, "0" * 64)
    recipe.write_text(bad, encoding="utf-8")
    with pytest.raises(RecipeError, match=f"release informal-.*has sha256 {model_sha}, the recipe expects 0000"):
        build(load_recipe(recipe, CORPORA, work_dir=release_work), tmp_path / "c", cache_dir=None, quiet=True)
    assert not (tmp_path / "c").exists()
    assert json.loads((out / "encoder" / "encoder.json").read_text())["name"] == shipped.encoder["name"]


def test_release_recipe_errors(tiny_recipe, tmp_path, release_work, default_release):
    entry, shipped = default_release
    recipe = tmp_path / "r.toml"

    def refused(table: str, match: str) -> None:
        recipe.write_text(_with_encoder(tiny_recipe, table), encoding="utf-8")
        with pytest.raises(RecipeError, match=match):
            load_recipe(recipe, CORPORA, work_dir=release_work)

    refused('[encoder]\nrelease = "informal-0.0.1"\n', r"release 'informal-0.0.1' is not in .*catalog.json "
                                                       rf"\(it has: .*informal-{entry['version']}")
    refused('[encoder]\nrelease = "informal"\npath = "x"\n', "needs path .* or release .*, not both")
    refused('[encoder]\nsha256 = "x"\n', "needs path .* or release")
    refused('[encoder]\nrelease = "informal"\ndocument_model = "fp32/model.onnx"\n',
            "document_model needs path: a release holds only its int8 query model")
    refused(f'[encoder]\npath = "{(release_work / "releases").as_posix()}"\ncarry = true\n',
            "carry needs release")
    refused('[encoder]\nrelease = "informal"\nlicense = "MIT"\n',
            f"license is 'MIT', the encoder's encoder.json says '{shipped.encoder['license']}'")


def test_a_damaged_release_archive_is_refused(tiny_bundle_dir, tiny_recipe, tmp_path):
    """A catalog of one's own (``releases = DIR``): its archive must have the catalog's sha256; an
    intact one is unpacked once (verified) and reused."""
    from mathlas_build.release import pack

    releases = tmp_path / "releases"
    archive, _ = pack(tiny_bundle_dir, releases, level=1)
    recipe = tmp_path / "r.toml"
    recipe.write_text(_with_encoder(tiny_recipe, f'[encoder]\nrelease = "tiny"\nreleases = "{releases.as_posix()}"\n'),
                      encoding="utf-8")
    r = load_recipe(recipe, CORPORA, work_dir=tmp_path / "work")
    assert r.release["release"] == "tiny-0.1.0" and (r.encoder / "model.onnx").is_file()
    assert load_recipe(recipe, CORPORA, work_dir=tmp_path / "work").encoder == r.encoder  # unpacked once
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    with pytest.raises(RecipeError, match="tiny-0.1.0.tar.zst has sha256 .* the archive is damaged"):
        load_recipe(recipe, CORPORA, work_dir=tmp_path / "elsewhere")
    assert not (tmp_path / "elsewhere" / "releases").exists() or \
        not any((tmp_path / "elsewhere" / "releases").iterdir())


@pytest.fixture()
def linear_model(tmp_path):
    """A ranking model JSON (linear: shorter texts first) and its sha256."""
    import json

    from mathlas.ranking.learned import FEATURES

    w = [0.0] * len(FEATURES)
    w[list(FEATURES).index("doc_loglen")] = -1.0
    path = tmp_path / "rankers" / "tiny-ltr.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"kind": "linear", "features": list(FEATURES), "weights": w,
                                "trained_on": {"queries": 0}}), encoding="utf-8")
    return path, fmt.sha256_file(path)


@pytest.mark.slow
def test_a_recipe_ranker_is_attached_and_the_bundle_verifies(tiny_recipe, tmp_path, linear_model, capsys):
    """``[ranker] model = ...`` with its sha256: the built bundle carries ranker/model.json, declared in
    the manifest's ranker block and listed with its checksum; search follows the model."""
    import mathlas
    from mathlas.ranking.learned import FEATURES
    from mathlas_build.pipeline import build

    model, sha = linear_model
    recipe = tmp_path / "ranked.toml"
    recipe.write_text(tiny_recipe.read_text(encoding="utf-8") +
                      f'\n[ranker]\nmodel = "{model.as_posix()}"\nsha256 = "{sha}"\nlicense = "CC0-1.0"\n',
                      encoding="utf-8")
    r = load_recipe(recipe, CORPORA)
    assert r.ranker["model"] == model and r.ranker["sha256"] == sha
    out = build(r, tmp_path / "b", cache_dir=tmp_path / "cache")
    assert f"[write] ranker tiny-ltr.json (linear) attached to {out}" in capsys.readouterr().err
    m = fmt.verify(out)
    assert m.ranker["kind"] == "linear" and m.ranker["features"] == list(FEATURES)
    assert m.files["ranker/model.json"].sha256 == fmt.sha256_file(out / "ranker" / "model.json")
    assert m.recipe["ranker"] == {"model": model.as_posix(), "sha256": sha, "license": "CC0-1.0"}
    b = mathlas.open_bundle(out)
    hits = b.search("finitely generated module over a Noetherian ring", k=8)
    lengths = [len(b.get(h.id).text) for h in hits]
    assert lengths == sorted(lengths)


def test_ranker_recipe_errors(tiny_recipe, tmp_path, linear_model):
    import json

    model, sha = linear_model
    recipe = tmp_path / "r.toml"

    def refused(table: str, match: str) -> None:
        recipe.write_text(tiny_recipe.read_text(encoding="utf-8") + "\n" + table, encoding="utf-8")
        with pytest.raises(RecipeError, match=match):
            load_recipe(recipe, CORPORA)

    refused(f'[ranker]\nmodel = "{model.as_posix()}"\n', f'records none: set sha256 = "{sha}" if this is the model')
    refused(f'[ranker]\nmodel = "{model.as_posix()}"\nsha256 = "abc"\n', f"has sha256 {sha}, the recipe says abc")
    refused('[ranker]\nmodel = "artifacts/rankers/no-such-model.json"\nsha256 = "x"\n', "no-such-model.json does not exist")
    refused('[ranker]\nsha256 = "x"\n', r"\[ranker\] needs model")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"kind": "linear", "features": ["bm25"], "weights": [1.0]}), encoding="utf-8")
    refused(f'[ranker]\nmodel = "{other.as_posix()}"\nsha256 = "{fmt.sha256_file(other)}"\n',
            "cannot be attached .*feature list differs.*scripts/train_ranker.py")


def _written(tmp_path, encoder_dir, out, **kw):
    docs = _docs()
    return write_bundle(docs, [d.statement for d in docs], [d.name for d in docs], np.eye(4, 384, dtype=np.float32),
                        encoder_dir, out, name="b", version="1",
                        sources={"t": {"count": 4, "license": "CC0", "attribution": "t"}}, quiet=True, **kw)


def test_the_ranker_is_attached_before_the_bundle_is_in_place(tmp_path, encoder_dir, linear_model, monkeypatch):
    """A build killed while the learned model is attached must leave no half-finished bundle at --out
    (it would fail `mathlas index verify` and block the rerun): the model goes in before the rename."""
    import subprocess
    import sys
    import textwrap

    import mathlas_build.training.ltr as ltr

    out = tmp_path / "b"
    seen = []
    real = ltr.DocInfo.of
    monkeypatch.setattr(ltr.DocInfo, "of", staticmethod(lambda *a, **k: (seen.append(out.exists()), real(*a, **k))[1]))
    path = _written(tmp_path, encoder_dir, out, ranker=linear_model[0])
    assert seen == [False]
    m = fmt.verify(path)
    assert m.ranker["kind"] == "linear" and "ranker/model.json" in m.files
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".b.")]
    # killed for real while attaching: nothing at --out, so the same command runs again
    killed = tmp_path / "killed"
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path[:0] = {sys.path!r}
        import numpy as np
        import mathlas_build.training.ltr as ltr
        ltr.DocInfo.of = staticmethod(lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL))
        from mathlas_build.document import Document
        from mathlas_build.writer import write_bundle
        docs = [Document(id=f"t:{{i}}", source="t", kind="lemma", name="n", title="T", body="b",
                         statement=f"s {{i}}", license="CC0") for i in range(4)]
        write_bundle(docs, ["s"] * 4, ["n"] * 4, np.eye(4, 384, dtype=np.float32), {str(encoder_dir)!r},
                     {str(killed)!r}, name="b", version="1", sources={{}}, ranker={str(linear_model[0])!r}, quiet=True)
    """)
    assert subprocess.run([sys.executable, "-c", script]).returncode == -9
    assert not killed.exists()
    assert fmt.verify(_written(tmp_path, encoder_dir, killed, ranker=linear_model[0])).ranker


def test_pack_of_a_changed_build_says_rebuild(tmp_path, encoder_dir, capsys):
    from mathlas_build.cli import main

    path = _written(tmp_path, encoder_dir, tmp_path / "b")
    with open(path / fmt.ENCODER_CONFIG, "a", encoding="utf-8") as f:
        f.write(" ")
    assert main(["pack", str(path), "--out", str(tmp_path / "art")]) == 1
    err = capsys.readouterr().err
    assert "rebuild the bundle (mathlas-build RECIPE --out DIR --force)" in err and "reinstall" not in err


@pytest.mark.slow   # packs a whole release with zstd (~25 s)
def test_pack_says_what_it_compresses_unless_quiet(tmp_path, encoder_dir, capsys):
    from mathlas_build.cli import main

    path = _written(tmp_path, encoder_dir, tmp_path / "b")
    assert main(["pack", str(path), "--out", str(tmp_path / "art")]) == 0
    assert "[pack] " in capsys.readouterr().err
    assert main(["pack", str(path), "--out", str(tmp_path / "art"), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_dry_run_counts_a_ranker_only_when_the_recipe_has_one(tmp_path, encoder_dir, linear_model, capsys):
    from mathlas_build.cli import main

    (tmp_path / "toy.jsonl").write_text('{"id": "a", "statement": "a prime number"}\n', encoding="utf-8")
    recipe = tmp_path / "toy.toml"
    base = (f'name = "toy"\nversion = "1"\n[encoder]\npath = "{encoder_dir.as_posix()}"\n[[sources]]\n'
            f'reader = "generic"\npath = "{(tmp_path / "toy.jsonl").as_posix()}"\n'
            'options = { source = "toy", license = "CC0" }\n')
    recipe.write_text(base, encoding="utf-8")
    assert main([str(recipe), "--dry-run", "--json", "-q"]) == 0
    assert "learned ranker" not in capsys.readouterr().out
    model, sha = linear_model
    recipe.write_text(base + f'[ranker]\nmodel = "{model.as_posix()}"\nsha256 = "{sha}"\n', encoding="utf-8")
    assert main([str(recipe), "--dry-run", "--json", "-q"]) == 0
    assert "learned ranker" in capsys.readouterr().out


@pytest.mark.slow   # packs and unpacks a release (~13 s)
def test_a_damaged_unpacked_release_is_unpacked_again(tiny_bundle_dir, tmp_path, capsys):
    # work/releases/<name>-<version>-<sha12>/ is a copy of a verified archive: when a file of it changes
    # size or goes, the next build unpacks the archive again instead of failing with "reinstall the bundle"
    from mathlas_build.release import pack, unpack

    archive, _ = pack(tiny_bundle_dir, tmp_path / "rel", quiet=True)
    digest = fmt.sha256_file(archive)
    dest = unpack(archive, digest, tmp_path / "releases", quiet=True)
    (dest / fmt.META).write_bytes(b"truncated")
    again = unpack(archive, digest, tmp_path / "releases")
    assert again == dest and fmt.verify(again).name == "tiny"
    assert f"[release] {dest} is damaged" in capsys.readouterr().err
    (dest / fmt.META).unlink()
    assert fmt.verify(unpack(archive, digest, tmp_path / "releases", quiet=True)).name == "tiny"
