"""The runtime and writer changes that serving at 10^6+ documents needs (docs/scale.md): blocked
rescoring, a per-request HNSW expansion, memory-mapped Arrow metadata, chunked quantisation and a
BM25 index of several segments. Real writer, real usearch / tantivy / pyarrow, small sizes."""
from __future__ import annotations

import numpy as np
import pytest

from mathlas import bundle as fmt


@pytest.fixture(scope="module")
def vector_dir(tmp_path_factory):
    """A vectors/ directory of 3,000 random 64-dim unit vectors written by the real writer."""
    from mathlas_build.writer import write_vectors

    root = tmp_path_factory.mktemp("vectors")
    x = np.random.default_rng(1).standard_normal((3000, 64)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    write_vectors(x, root)
    return root, x


@pytest.fixture()
def dense(vector_dir):
    from mathlas.ranking.dense import DenseChannel

    root, x = vector_dir
    return DenseChannel(root, len(x), x.shape[1])


def test_blocked_rescore_equals_one_product(dense, vector_dir):
    from mathlas.ranking.dense import RESCORE_BLOCK

    _, x = vector_dir
    q = x[7] + 0.1 * x[8]
    q = (q / np.linalg.norm(q)).astype(np.float32)
    # several blocks, unsorted and repeated keys: scores come back in the order of the keys asked for
    keys = np.random.default_rng(2).integers(0, len(x), 3 * RESCORE_BLOCK + 17)
    want = (dense.vectors[keys].astype(np.float64) @ q) * dense.scales[keys]
    got = dense.rescore(q, keys)
    assert got.dtype == np.float32 and got.shape == keys.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # int8 scores stay close to the float vectors they quantise
    np.testing.assert_allclose(got, x[keys] @ q, atol=0.02)


def test_exact_scan_in_blocks_is_the_true_top_k(dense, vector_dir):
    _, x = vector_dir
    q = x[11]
    ranking = dense.exact(q, 10)
    approx = (dense.vectors.astype(np.float32) @ q) * dense.scales
    assert ranking.keys[0] == 11
    assert set(ranking.keys.tolist()) == set(np.argsort(-approx)[:10].tolist())


def test_expansion_follows_each_request(dense, vector_dir):
    from mathlas.ranking.dense import MIN_POOL

    _, x = vector_dir
    dense.search(x[3], 10, pool=2000)
    assert dense.index.expansion_search == 2000
    hits = dense.search(x[3], 10, pool=1000)
    assert dense.index.expansion_search == 1000  # not kept at the largest pool ever asked for
    assert hits.keys[0] == 3 and len(hits) == 10
    dense.search(x[3], 10, pool=50)
    assert dense.index.expansion_search == MIN_POOL  # a small pool still walks as wide as the default


def test_default_pool_grows_with_the_corpus(dense, vector_dir, monkeypatch):
    from mathlas.ranking import dense as dense_mod

    pools = [dense_mod.default_pool(10, n) for n in (27_000, 70_000, 280_000, 1_000_000, 10**8)]
    assert pools == [800, 800, 1600, 3100, 3200]  # sqrt growth past 70k documents, capped at 4x
    assert dense_mod.default_pool(1000, 27_000) == 4000  # never fewer than 4k candidates
    # the channel asks for the pool of its own size
    seen = []
    real = dense_mod.DenseChannel._candidates
    monkeypatch.setattr(dense_mod.DenseChannel, "_candidates", lambda self, q, pool: seen.append(pool) or real(self, q, pool))
    _, x = vector_dir
    dense.search(x[3], 10)
    assert seen == [dense_mod.default_pool(10, dense.count)]


# -- metadata: memory-mapped Arrow IPC copy -----------------------------------------------------
@pytest.fixture(scope="module")
def arrow_bundle(tiny_bundle_dir, tmp_path_factory):
    """The tiny bundle plus META_ARROW written by the real write_meta from the bundle's own rows,
    listed in the manifest like any other file."""
    import shutil

    import pyarrow.parquet as pq

    from mathlas_build.document import Document
    from mathlas_build.writer import write_meta

    root = tmp_path_factory.mktemp("arrow") / "tiny-arrow"
    shutil.copytree(tiny_bundle_dir, root)
    rows = pq.read_table(root / fmt.META).to_pylist()
    base = set(Document.__dataclass_fields__) - {"extra", "statement"}  # statement is not stored
    docs = [Document(**{k: r[k] for k in base if k in r}, statement="",
                     extra={k: r[k] for k in fmt.OPTIONAL_META_COLUMNS if r.get(k) is not None})
            for r in rows]
    scratch = tmp_path_factory.mktemp("meta") / "documents.parquet"
    write_meta(docs, [r["text"] for r in rows], scratch, arrow=True)
    shutil.copyfile(scratch.parent / "documents.arrow", root / fmt.META_ARROW)
    m = fmt.read_manifest(root)
    m.files = fmt.file_entries(root)
    fmt.write_manifest(root, m)
    return root


def test_write_meta_arrow_copy_is_the_same_table(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mathlas_build.document import Document
    from mathlas_build.writer import write_meta

    docs = [Document(id=f"x:{i}", source="x", kind="lemma", name=f"n{i}", title="t", body="b", statement="s",
                     link="", license="CC0", extra={"year": 2000 + i}) for i in range(5)]
    write_meta(docs, [f"text {i}" for i in range(5)], tmp_path / "a" / "documents.parquet")
    assert not (tmp_path / "a" / "documents.arrow").exists()  # small bundles: parquet only
    write_meta(docs, [f"text {i}" for i in range(5)], tmp_path / "b" / "documents.parquet", arrow=True)
    arrow = pa.ipc.open_file(pa.memory_map(str(tmp_path / "b" / "documents.arrow"))).read_all()
    assert arrow.equals(pq.read_table(tmp_path / "b" / "documents.parquet"))
    assert arrow.column("year").to_pylist() == [2000, 2001, 2002, 2003, 2004]


def test_runtime_prefers_the_arrow_copy_and_answers_the_same(tiny, arrow_bundle):
    import mathlas

    b = mathlas.open_bundle(arrow_bundle)
    assert b.meta_file == fmt.META_ARROW and tiny.meta_file == fmt.META
    assert fmt.verify(arrow_bundle).files[fmt.META_ARROW].size > 0
    assert b.table.equals(tiny.table)
    assert b.source_names == tiny.source_names
    ids = tiny.table.column("id").to_pylist()
    for doc_id in ids:  # the sorted-id lookup finds every document
        assert b.get(doc_id) == tiny.get(doc_id)
    with pytest.raises(mathlas.UsageError, match="no document"):
        b.get("stacks:no-such-tag")
    with pytest.raises(mathlas.UsageError, match="no document"):
        b.get(min(ids) + "\x00")  # sorts between two ids
    for kwargs in ({}, {"kinds": ["definition"]}, {"sources": ["stacks"]}, {"exclude_sources": ["planetmath"]},
                   {"kinds": "lemma", "sources": ["stacks", "hott"]}):
        for mode in ("hybrid", "lexical"):
            got = b.search("finitely generated module", k=8, mode=mode, **kwargs)
            want = tiny.search("finitely generated module", k=8, mode=mode, **kwargs)
            assert [(h.id, h.score) for h in got] == [(h.id, h.score) for h in want]
    kinds = {h.kind for h in b.search("ring", k=20, mode="lexical", kinds=["definition"])}
    assert kinds <= {"definition"}


def test_arrow_metadata_is_mapped_not_copied(tiny_bundle_dir, arrow_bundle):
    import pyarrow as pa

    import mathlas

    def allocated(path):
        before = pa.total_allocated_bytes()
        b = mathlas.open_bundle(path, shared=False)  # a fresh open is what is measured
        return b, pa.total_allocated_bytes() - before

    parquet, from_parquet = allocated(tiny_bundle_dir)
    mapped, from_arrow = allocated(arrow_bundle)
    table_bytes = parquet.table.nbytes
    assert from_parquet >= table_bytes  # the parquet is decompressed into pyarrow's memory pool
    assert from_arrow < table_bytes / 10  # the Arrow file's buffers point into the memory map
    del parquet, mapped


def test_bad_arrow_copy_is_a_corrupt_bundle(arrow_bundle, tmp_path):
    import shutil

    import mathlas
    from mathlas.errors import BundleCorruptError

    bad = tmp_path / "bad"
    shutil.copytree(arrow_bundle, bad)
    data = (bad / fmt.META_ARROW).read_bytes()
    (bad / fmt.META_ARROW).write_bytes(data[: len(data) // 2])
    with pytest.raises(BundleCorruptError, match="documents.arrow"):
        mathlas.open_bundle(bad)  # sizes differ from the manifest
    with pytest.raises(BundleCorruptError, match="cannot read meta/documents.arrow"):
        from mathlas.engine import Bundle

        Bundle(bad, fmt.read_manifest(bad))


# -- writer: chunked quantisation ---------------------------------------------------------------
def test_chunked_write_vectors_matches_whole_matrix_quantisation(tmp_path, monkeypatch):
    """Rows quantised in chunks (chunk size 1,000 over 3,000 rows, read from a memory map) give the
    same int8 rows, scales, centre and sign bits as quantising the whole matrix at once."""
    from mathlas.ranking.dense import DenseChannel
    from mathlas_build import writer

    x = np.random.default_rng(3).standard_normal((3000, 64)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    np.save(tmp_path / "x.npy", x)
    monkeypatch.setattr(writer, "VECTOR_CHUNK_ROWS", 1000)
    root = tmp_path / "b"
    writer.write_vectors(np.load(tmp_path / "x.npy", mmap_mode="r"), root)
    q, scale = writer.quantize_i8(x)
    assert np.array_equal(np.load(root / fmt.FLOAT_VECTORS), q)
    assert np.array_equal(np.load(root / fmt.FLOAT_SCALES), scale)
    center = np.load(root / fmt.VECTOR_CENTER)
    np.testing.assert_allclose(center, x.mean(axis=0), atol=1e-6)
    dense = DenseChannel(root, len(x), 64)
    stored = np.stack(dense.index.get(np.arange(len(x), dtype=np.uint64)))
    assert np.array_equal(stored, fmt.sign_bits(x, center))
    assert dense.search(x[42], 5).keys[0] == 42


def test_write_vectors_of_no_documents(tmp_path):
    from mathlas_build.writer import write_vectors

    info = write_vectors(np.zeros((0, 16), np.float32), tmp_path)
    assert info["dims"] == 16 and np.load(tmp_path / fmt.FLOAT_VECTORS).shape == (0, 16)


# -- BM25 index of several segments -------------------------------------------------------------
@pytest.fixture(scope="module")
def multi_segment(tmp_path_factory):
    """40,000 documents through the real write_bm25 with tantivy's smallest heap: several segments."""
    import random

    from mathlas.ranking.lexical import LexicalChannel
    from mathlas_build.document import Document
    from mathlas_build.writer import write_bm25

    rng = random.Random(5)
    words = [f"common{i}" for i in range(3000)]
    n = 40_000
    docs = [Document(id=f"t:{i}", source="even" if i % 2 == 0 else "odd", kind="lemma", name="", title="",
                     body="", statement="") for i in range(n)]
    # each document has one word of its own (marker<key in letters>) among shared ones
    texts = [f"marker{_letters(i)} " + " ".join(rng.choices(words, k=30)) for i in range(n)]
    root = tmp_path_factory.mktemp("bm25")
    write_bm25(docs, texts, [""] * n, root / fmt.BM25_DIR, heap_bytes=15_000_000)
    return LexicalChannel(root, n), n


def _letters(i: int) -> str:  # digits would be split off by the tokenizer, vowels and -s stemmed away
    return "".join("bcdfghjklm"[int(c)] for c in str(i)) + "x"


def test_write_bm25_keeps_several_segments_and_hits_map_to_keys(multi_segment):
    from mathlas.ranking.filters import Filters

    channel, n = multi_segment
    assert channel.searcher.num_segments > 1 and not channel._doc_is_key
    assert channel.searcher.num_docs == n
    for key in (0, 1, 12_345, 27_001, n - 1):  # documents of different segments
        ranking = channel.search(f"marker{_letters(key)}", 5)
        assert ranking.keys.tolist() == [key]
    # deep result lists and filters: every key is the document's own
    ranking = channel.search("common7 common8", 2000)
    assert len(ranking) > 100 and len(set(ranking.keys.tolist())) == len(ranking)
    even = channel.search("common7 common8", 50, Filters(include_sources=("even",)))
    assert len(even) == 50 and all(k % 2 == 0 for k in even.keys.tolist())
    allowed = np.zeros(n, dtype=bool)
    allowed[30_000:30_500] = True
    masked = channel.search("common7 common8", 20, Filters(allowed=allowed, custom=True))
    assert len(masked) > 0 and all(30_000 <= k < 30_500 for k in masked.keys.tolist())
    # the fast-field keys agree with the stored ones
    hits = channel.searcher.search(channel._text_query(["common7"]), 300).hits
    stored = [channel.searcher.doc(a)["key"][0] for _, a in hits]
    assert channel._ranking(hits).keys.tolist() == stored
