"""Sharded, resumable builds and their merge (and the same shard work under Ray), with the tiny random Qwen3.

Every bundle here is compared with a single-process build of the same recipe: same files, byte for byte,
and the same manifest apart from its creation time."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mathlas import bundle as fmt
from mathlas_build import shard as sh
from mathlas_build.cli import main
from mathlas_build.pipeline import build
from mathlas_build.recipe import load_recipe

N_DOCS = 22
CHUNK = 4  # 6 chunks: shards of 3 get 2 chunks each, shards of 4 get 1 or 2


def test_parse_shard():
    assert sh.parse_shard("0/1") == (0, 1) and sh.parse_shard(" 3 / 8 ") == (3, 8)
    for bad in ("3/3", "1/0", "-1/2", "a/b", "2", ""):
        with pytest.raises(ValueError, match="--shard"):
            sh.parse_shard(bad)


@pytest.mark.parametrize("n_docs,count,chunk", [(22, 3, 4), (22, 4, 4), (5, 8, 2), (2048 * 5 + 1, 4, 2048), (1, 1, 10)])
def test_shard_rows_tile_the_corpus_in_whole_chunks(n_docs, count, chunk):
    rows = [sh.shard_rows(n_docs, i, count, chunk) for i in range(count)]
    assert rows[0][0] == 0 and rows[-1][1] == n_docs
    for (a, b), (c, _d) in zip(rows, rows[1:]):
        assert b == c and a <= b
    for a, b in rows:
        assert a % chunk == 0 and (b % chunk == 0 or b == n_docs)
    sizes = [b - a for a, b in rows]
    assert max(sizes) - min(sizes) <= chunk  # as even as whole chunks allow


# -- the tiny model and a tiny corpus -------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_qwen3(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("optimum.exporters.onnx")
    from test_export_qwen3 import SENTENCES, _tiny_checkpoint

    from mathlas_build import export_qwen3 as eq

    root = tmp_path_factory.mktemp("q3shard")
    src = _tiny_checkpoint(root, eot_post_processor=True)
    return eq.export_qwen3(src, root / "encoder", None, root / "work", name="tiny-qwen3",
                           source="random init (test)", max_tokens=64, sample_texts=SENTENCES, fp16=False)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    words = ["ring", "module", "prime", "group", "field", "ideal", "space", "compact", "sequence", "limit", "graph"]
    with (root / "toy.jsonl").open("w") as f:
        for i in range(N_DOCS):
            body = f"Lemma {i}: every {words[i % 11]} of rank ${i}$ " + " and ".join(words[: 1 + i % 7])
            f.write(json.dumps({"id": f"l{i:02d}", "name": f"lemma {i}", "body": body}) + "\n")
    return root


def _recipe(tmp_path: Path, encoder: str, version: str = "0.1.0") -> Path:
    path = tmp_path / f"toy-{version}.toml"
    path.write_text(f"""
name = "toy"
version = "{version}"
[encoder]
path = "{encoder}"
[options]
batch_size = 3
threads = 1
chunk = {CHUNK}
[[sources]]
reader = "generic"
path = "toy.jsonl"
options = {{ source = "toy", license = "CC0" }}
""", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def toy(tmp_path_factory, tiny_qwen3, corpus):
    """(recipe path, corpora root, single-process bundle)."""
    tmp = tmp_path_factory.mktemp("toy")
    recipe = _recipe(tmp, Path(tiny_qwen3["encoder_dir"]).as_posix())
    single = build(load_recipe(recipe, corpus), tmp / "single", provider="cpu", cache_dir=None, quiet=True)
    return recipe, corpus, single


def assert_same_bundle(a: Path, b: Path) -> None:
    """Same manifest but its time; every file byte-identical except two whose bytes differ between any two
    single-process builds as well: BM25's files are named by tantivy's random segment ids, and usearch
    links HNSW nodes in whatever order its insertion threads finish. Those must hold the same vectors
    and answer queries alike."""
    import mathlas
    import pyarrow.parquet as pq
    from mathlas.bundle import usearch_index_class

    ma, mb = fmt.read_manifest(a), fmt.read_manifest(b)
    unstable = lambda f: f.startswith("bm25/") or f == fmt.BINARY_INDEX
    shape = lambda m: sorted((Path(f).suffix, e.size) for f, e in m.files.items() if unstable(f))
    rest = lambda m: {f: (e.size, e.sha256) for f, e in m.files.items() if not unstable(f)}
    assert rest(ma) == rest(mb)  # float vectors, scales, centre, metadata, encoder
    assert shape(ma) == shape(mb)
    index = usearch_index_class()
    ia, ib = (index.restore(str(p / fmt.BINARY_INDEX), view=True) for p in (a, b))
    keys = np.arange(N_DOCS, dtype=np.uint64)
    assert np.array_equal(ia.get(keys), ib.get(keys))  # the same sign bits under the same keys
    da, db = json.loads((a / fmt.MANIFEST).read_text()), json.loads((b / fmt.MANIFEST).read_text())
    for d in (da, db):
        d.pop("created"), d.pop("files")
    assert da == db
    assert fmt.verify(b).count == N_DOCS
    ids = [pq.read_table(p / fmt.META, columns=["id"]).column("id").to_pylist() for p in (a, b)]
    assert ids[0] == ids[1] == [f"toy:l{i:02d}" for i in range(N_DOCS)]
    assert np.array_equal(np.load(a / fmt.FLOAT_VECTORS), np.load(b / fmt.FLOAT_VECTORS))
    ba, bb = mathlas.open_bundle(a), mathlas.open_bundle(b)
    for q in ("prime ideal", "compact space", "lemma 7 graph"):
        for mode in ("lexical", "dense"):
            # every document, so that ties (the random model makes some) cannot fall on the cut
            hits = [sorted((-round(h.score, 5), h.id) for h in x.search(q, k=N_DOCS, mode=mode)) for x in (ba, bb)]
            assert hits[0] == hits[1] and hits[0]


def _shards(recipe, corpora, root, count, only=None, **kw):
    r = load_recipe(recipe, corpora)
    return [sh.build_shard(r, root, i, count, provider="cpu", quiet=True, **kw) for i in (only or range(count))]


@pytest.mark.slow
def test_shards_merge_into_the_single_process_bundle(toy, tmp_path, monkeypatch):
    recipe, corpora, single = toy
    built = _shards(recipe, corpora, tmp_path / "shards", 3)
    assert all(b for _, b in built)
    m = sh.read_shard(built[1][0])
    assert (m["shard"], m["of"], m["start"], m["stop"], m["count"], m["corpus_count"]) == (1, 3, 8, 16, 8, N_DOCS)
    assert json.loads((built[1][0] / sh.IDS).read_text()) == [f"toy:l{i:02d}" for i in range(8, 16)]
    assert set(m["fingerprints"]) == {"recipe", "corpus", "encoder"}
    assert set(m["files"]) == {sh.VECTORS, sh.IDS}
    monkeypatch.setattr(sh, "MERGE_COPY_ROWS", 5)  # several copies per shard into the memory-mapped file
    out = sh.merge_shards(load_recipe(recipe, corpora), [tmp_path / "shards"], tmp_path / "merged", quiet=True)
    assert_same_bundle(single, out)
    assert not list(tmp_path.glob(".merged.vectors-*"))  # the merge's temporary vectors file is gone


def test_rerun_skips_finished_shards_and_redoes_torn_ones(toy, tmp_path):
    recipe, corpora, single = toy
    root = tmp_path / "shards"
    first = _shards(recipe, corpora, root, 4)
    assert [b for _, b in first] == [True] * 4
    assert [b for _, b in _shards(recipe, corpora, root, 4)] == [False] * 4  # all finished: nothing redone
    (first[1][0] / sh.SHARD_MANIFEST).unlink()  # crashed before the manifest
    vec = first[2][0] / sh.VECTORS
    data = bytearray(vec.read_bytes())
    data[-1] ^= 0xFF  # a flipped bit in a copy
    vec.write_bytes(bytes(data))
    with pytest.raises(sh.ShardError, match="no shard.json"):
        sh.read_shard(first[1][0])
    with pytest.raises(sh.ShardError, match="checksum"):
        sh.read_shard(first[2][0])
    with pytest.raises(sh.ShardError, match="torn"):
        sh.merge_shards(load_recipe(recipe, corpora), [root], tmp_path / "m", quiet=True)
    assert [b for _, b in _shards(recipe, corpora, root, 4)] == [False, True, True, False]
    out = sh.merge_shards(load_recipe(recipe, corpora), [root], tmp_path / "merged", quiet=True)
    assert_same_bundle(single, out)
    assert not any(p.name.startswith(".") for p in root.iterdir())  # no temporary shard left behind


def test_shards_and_single_builds_share_the_embedding_cache(toy, tmp_path, capsys):
    recipe, corpora, single = toy
    cache = tmp_path / "cache"
    _shards(recipe, corpora, tmp_path / "shards", 3, cache_dir=cache)
    assert len(list(cache.rglob("seg-*.npz"))) == 6  # a segment per chunk of 4 (22 documents)
    assert_same_bundle(single, sh.merge_shards(load_recipe(recipe, corpora), [tmp_path / "shards"],
                                               tmp_path / "merged", quiet=True))
    capsys.readouterr()
    again = build(load_recipe(recipe, corpora), tmp_path / "again", provider="cpu", cache_dir=cache)
    err = capsys.readouterr().err
    assert f"{N_DOCS} already embedded ({N_DOCS} in the cache), 0 to embed" in err
    assert_same_bundle(single, again)


def test_merge_refuses_incomplete_doubled_or_mixed_shards(toy, tmp_path):
    recipe, corpora, _ = toy
    r = load_recipe(recipe, corpora)
    s3 = [p for p, _ in _shards(recipe, corpora, tmp_path / "a", 3)]
    with pytest.raises(sh.ShardError, match=r"missing shard\(s\) 2/3: build them with --shard I/3"):
        sh.merge_shards(r, s3[:2], tmp_path / "m", quiet=True)
    copy = tmp_path / "copy"
    shutil.copytree(s3[0], copy)
    with pytest.raises(sh.ShardError, match="shard 0/3 given twice"):
        sh.merge_shards(r, [*s3, copy], tmp_path / "m", quiet=True)
    s2 = [p for p, _ in _shards(recipe, corpora, tmp_path / "b", 2, only=[1])]
    with pytest.raises(sh.ShardError, match="shards of different splits"):
        sh.merge_shards(r, [*s3[:2], *s2], tmp_path / "m", quiet=True)
    other = load_recipe(_recipe(tmp_path, Path(r.encoder).as_posix(), version="0.2.0"), corpora)
    s_other = sh.build_shard(other, tmp_path / "c", 2, 3, provider="cpu", quiet=True)[0]
    with pytest.raises(sh.ShardError, match="different recipes"):
        sh.merge_shards(r, [*s3[:2], s_other], tmp_path / "m", quiet=True)
    for i in (0, 1):
        sh.build_shard(other, tmp_path / "c", i, 3, provider="cpu", quiet=True)
    with pytest.raises(sh.ShardError, match="built from another recipe"):
        sh.merge_shards(r, [tmp_path / "c"], tmp_path / "m", quiet=True)
    # a corpus that changed after the shards were built
    changed = tmp_path / "changed"
    shutil.copytree(corpora, changed)
    with (changed / "toy.jsonl").open("a") as f:
        f.write(json.dumps({"id": "l99", "name": "new", "body": "a new lemma"}) + "\n")
    with pytest.raises(sh.ShardError, match="corpus .* changed"):
        sh.merge_shards(load_recipe(recipe, changed), s3, tmp_path / "m", quiet=True)
    assert not (tmp_path / "m").exists()


def test_coverage_errors_name_the_document():
    def man(i, ids):
        return {"shard": i, "of": 2, "count": len(ids)}

    corpus = ["a", "b", "c", "d"]
    sh.check_coverage([man(0, ["a", "b"]), man(1, ["c", "d"])], [["a", "b"], ["c", "d"]], corpus)
    with pytest.raises(sh.ShardError, match="'b' is in shard 0/2 and in shard 1/2"):
        sh.check_coverage([man(0, ["a", "b"]), man(1, ["b", "d"])], [["a", "b"], ["b", "d"]], corpus)
    with pytest.raises(sh.ShardError, match="1 corpus documents are in no shard .first: 'c'"):
        sh.check_coverage([man(0, ["a", "b"]), man(1, ["d"])], [["a", "b"], ["d"]], corpus)
    with pytest.raises(sh.ShardError, match="not in the corpus .first: 'x'"):
        sh.check_coverage([man(0, ["a", "b"]), man(1, ["c", "d", "x"])], [["a", "b"], ["c", "d", "x"]], corpus)
    with pytest.raises(sh.ShardError, match="out of row order at row 0"):
        sh.check_coverage([man(0, ["c", "d"]), man(1, ["a", "b"])], [["c", "d"], ["a", "b"]], corpus)


def test_cli_shard_and_merge(toy, tmp_path, capsys):
    recipe, corpora, single = toy
    common = ["--corpora", str(corpora), "--provider", "cpu", "--no-cache", "-q"]
    assert main([str(recipe), "--shard", "2/2", *common]) == 2
    assert "need 0 <= I < N" in capsys.readouterr().err
    for i in range(2):
        assert main([str(recipe), "--shard", f"{i}/2", "--shards-dir", str(tmp_path / "s"), *common]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(tmp_path / "s" / sh.shard_name(i, 2)) for i in range(2)]
    assert main(["merge", str(recipe), str(tmp_path / "s" / sh.shard_name(0, 2)), "--corpora", str(corpora),
                 "--out", str(tmp_path / "m"), "-q"]) == 1
    assert "missing shard(s) 1/2" in capsys.readouterr().err
    assert main(["merge", str(recipe), str(tmp_path / "s"), "--corpora", str(corpora), "--out", str(tmp_path / "m"),
                 "-q"]) == 0
    assert_same_bundle(single, tmp_path / "m")


def test_buckets_match_fixed_batches_on_fp32(tiny_qwen3):
    from mathlas_build.embed import DocumentEncoder

    d, fp32 = Path(tiny_qwen3["encoder_dir"]), str(tiny_qwen3["fp32_model"])
    texts = [f"lemma {i}: " + "ring " * (i * 3 % 11) for i in range(20)]
    fixed = DocumentEncoder(d, provider="cpu", model_file=fp32).encode_documents(texts, batch_size=5)
    bucketed = DocumentEncoder(d, provider="cpu", model_file=fp32, max_batch_tokens=40).encode_documents(texts, batch_size=8)
    np.testing.assert_allclose(bucketed, fixed, atol=1e-5)


@pytest.mark.slow
def test_ray_shards_make_the_single_process_bundle(toy, tmp_path):
    pytest.importorskip("ray.data")
    from mathlas_build.ray_build import build_shards_with_ray

    recipe, corpora, single = toy
    paths = build_shards_with_ray(recipe, corpora, tmp_path / "shards", 2, provider="cpu", quiet=True,
                                  cache_dir=tmp_path / "cache", init_kwargs={"num_cpus": 2})
    assert [p.name for p in paths] == [sh.shard_name(i, 2) for i in range(2)]
    assert len(list((tmp_path / "cache").rglob("seg-*.npz"))) == 6  # both workers wrote into one cache
    out = sh.merge_shards(load_recipe(recipe, corpora), paths, tmp_path / "merged", quiet=True)
    assert_same_bundle(single, out)
