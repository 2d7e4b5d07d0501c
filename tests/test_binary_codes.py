"""Binary codes of the dense channel's HNSW stage: sign bits and 3-bit thermometer codes
(mathlas.bundle.BINARY_CODES). Real writer, real usearch, the real runtime."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mathlas import bundle as fmt


def _clustered(n=6000, dims=64, seed=5):
    """Unit vectors in groups of 20 around random centres: near neighbours that sign bits blur."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n // 20, dims))
    x = centres.repeat(20, axis=0) + 0.9 * rng.standard_normal((n, dims))
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    q = x[rng.integers(0, n, 60)] + 0.4 * rng.standard_normal((60, dims)).astype(np.float32)
    return x, (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def test_thermometer_code_layout_and_hamming_is_l1_of_levels():
    center = np.zeros(2, np.float32)
    t = np.array([0.5, 0.5], np.float32)
    # levels: x <= -t -> 0, -t < x <= 0 -> 1, 0 < x <= t -> 2, x > t -> 3
    a = np.array([[-0.9, 0.7]], np.float32)   # levels 0, 3
    b = np.array([[0.2, -0.1]], np.float32)   # levels 2, 1
    ca, cb = fmt.binary_codes(a, center, t), fmt.binary_codes(b, center, t)
    assert ca.shape == (1, 1)  # 2 dims x 3 bits = 6 bits, one byte
    assert np.unpackbits(ca)[:6].tolist() == [0, 1, 0, 1, 0, 1]  # [x>-t | x>0 | x>t] per dimension block
    assert int(np.unpackbits(ca ^ cb).sum()) == abs(0 - 2) + abs(3 - 1)
    assert np.array_equal(fmt.binary_codes(a, center), fmt.sign_bits(a, center))
    assert fmt.code_bits(384, "thermometer3") == 1152 and fmt.code_bits(384, "sign") == 384
    with pytest.raises(ValueError, match="binary codes"):
        fmt.code_bits(384, "pq")


def test_thermometer_codes_rank_neighbours_better_than_signs():
    """Exhaustive hamming ranking, then exact rescoring of the pool: the recall of each code."""
    x, queries = _clustered()
    center = x.mean(axis=0)
    thresholds = (fmt.THERMOMETER_SD * (x - center).std(axis=0)).astype(np.float32)
    recalls = {}
    for name, t in (("sign", None), ("thermometer3", thresholds)):
        codes = fmt.binary_codes(x, center, t)
        hits = []
        for q in queries:
            ham = np.unpackbits(codes ^ fmt.binary_codes(q, center, t), axis=1).sum(axis=1)
            pool = np.argsort(ham, kind="stable")[:40]
            top = pool[np.argsort(-(x[pool] @ q))[:10]]
            hits.append(len(set(top.tolist()) & set(np.argsort(-(x @ q))[:10].tolist())) / 10)
        recalls[name] = float(np.mean(hits))
    assert recalls["thermometer3"] > recalls["sign"] + 0.05, recalls


@pytest.mark.slow
def test_writer_and_runtime_with_thermometer_codes(tmp_path):
    from mathlas.ranking.dense import DenseChannel, default_pool
    from mathlas.errors import BundleCorruptError
    from mathlas_build.writer import write_vectors

    x, queries = _clustered()
    info = write_vectors(x, tmp_path, codes="thermometer3")
    assert info["binary_codes"] == "thermometer3" and fmt.needed_format(info) == 2
    t = np.load(tmp_path / fmt.VECTOR_THRESHOLDS)
    np.testing.assert_allclose(t, fmt.THERMOMETER_SD * (x - x.mean(axis=0)).std(axis=0), rtol=1e-4)
    dense = DenseChannel(tmp_path, len(x), x.shape[1], codes="thermometer3")
    assert dense.index.ndim == 3 * x.shape[1]
    stored = np.stack(dense.index.get(np.arange(5, dtype=np.uint64)))
    assert np.array_equal(stored, fmt.binary_codes(x[:5], dense.center, t))
    assert dense.search(x[42], 5).keys[0] == 42
    exact = [set(dense.exact(q, 10).keys.tolist()) for q in queries]

    def recall(channel, pool):
        got = [set(channel.search(q, 10, pool=pool).keys.tolist()) for q in queries]
        return float(np.mean([len(a & b) / 10 for a, b in zip(got, exact)]))

    write_vectors(x, tmp_path / "sign")
    signs = DenseChannel(tmp_path / "sign", len(x), x.shape[1])
    # measured: sign 0.44 / 0.75, thermometer 0.77 / 0.97 at pools 100 / 400
    assert recall(dense, 100) > recall(signs, 100) + 0.2
    assert recall(dense, 400) >= 0.95 > recall(signs, 400)
    assert dense.search(x[42], 5, pool=None).keys[0] == 42 and default_pool(10, len(x)) == 800
    with pytest.raises(BundleCorruptError, match="binary codes"):
        DenseChannel(tmp_path, len(x), x.shape[1], codes="sign")  # 192-bit index, 64-bit codes
    with pytest.raises(BundleCorruptError, match="binary_codes"):
        DenseChannel(tmp_path, len(x), x.shape[1], codes="pq")
    assert fmt.needed_format(write_vectors(x[:100], tmp_path / "s")) == 1
    assert "binary_codes" not in write_vectors(x[:100], tmp_path / "s2")  # sign bundles stay format 1


def test_bundle_with_thermometer_codes_is_format_2_and_searches(tmp_path, encoder_dir):
    import mathlas
    from mathlas_build.document import Document
    from mathlas_build.writer import write_bundle

    x, _ = _clustered(n=400, dims=384)
    docs = [Document(id=f"t:{i}", source="t", kind="lemma", name=f"lemma {i}", title="T", body="",
                     statement=f"statement {i}", license="CC0") for i in range(len(x))]
    with pytest.raises(ValueError, match="binary_codes"):
        write_bundle(docs, [d.statement for d in docs], [d.name for d in docs], x, encoder_dir, tmp_path / "bad",
                     name="b", version="1", sources={}, binary_codes="pq", quiet=True)
    out = write_bundle(docs, [d.statement for d in docs], [d.name for d in docs], x, encoder_dir, tmp_path / "b",
                       name="b", version="1", sources={"t": {"count": len(x), "license": "CC0", "attribution": "t"}},
                       binary_codes="thermometer3", quiet=True)
    m = fmt.verify(out)
    assert m.format_version == 2 and m.vectors["binary_codes"] == "thermometer3"
    assert fmt.VECTOR_THRESHOLDS in m.files
    b = mathlas.open_bundle(out)
    assert b.dense.codes == "thermometer3"
    assert b.dense.search(x[7], 3).keys[0] == 7
    assert b.search("statement 7", k=5)  # both channels through the public API
    # a runtime that reads only format 1 would refuse it; this one reads 1 and 2
    data = json.loads((out / fmt.MANIFEST).read_text())
    data["format_version"] = fmt.FORMAT_VERSION + 1
    (out / fmt.MANIFEST).write_text(json.dumps(data))
    with pytest.raises(mathlas.errors.BundleVersionError, match="upgrade"):
        mathlas.open_bundle(out)
