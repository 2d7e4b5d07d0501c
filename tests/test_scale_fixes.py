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
    from mathlas.dense import DenseChannel

    root, x = vector_dir
    return DenseChannel(root, len(x), x.shape[1])


def test_blocked_rescore_equals_one_product(dense, vector_dir):
    from mathlas.dense import RESCORE_BLOCK

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
    from mathlas.dense import MIN_POOL

    _, x = vector_dir
    dense.search(x[3], 10, pool=2000)
    assert dense.index.expansion_search == 2000
    hits = dense.search(x[3], 10, pool=1000)
    assert dense.index.expansion_search == 1000  # not kept at the largest pool ever asked for
    assert hits.keys[0] == 3 and len(hits) == 10
    dense.search(x[3], 10, pool=50)
    assert dense.index.expansion_search == MIN_POOL  # a small pool still walks as wide as the default
