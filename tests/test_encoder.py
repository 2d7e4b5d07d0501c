"""The ONNX encoder: pooling, prompts, truncation, batching, Matryoshka, configuration errors."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from mathlas.encoder import Encoder, EncoderConfig
from mathlas.errors import EncoderError


def _pool(pooling, hidden, mask, **cfg):
    enc = Encoder.__new__(Encoder)
    enc.config = EncoderConfig(pooling=pooling, dims=hidden.shape[-1], **cfg)
    return enc._pool(hidden, mask)


def test_pooling_by_hand_with_right_and_left_padding():
    hidden = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2) + 1
    right = np.array([[1, 1, 0], [1, 1, 1]])
    left = np.array([[0, 1, 1], [1, 1, 1]])
    raw = dict(normalize=False)
    assert np.allclose(_pool("mean", hidden, right, **raw)[0], hidden[0, :2].mean(axis=0))
    assert np.allclose(_pool("cls", hidden, right, **raw)[0], hidden[0, 0])
    assert np.allclose(_pool("cls", hidden, left, **raw)[0], hidden[0, 1])  # first real token
    assert np.allclose(_pool("last_token", hidden, right, **raw)[0], hidden[0, 1])
    assert np.allclose(_pool("last_token", hidden, left, **raw)[0], hidden[0, 2])
    assert np.allclose(_pool("last_token", hidden, right, **raw)[1], hidden[1, 2])


def test_normalisation_and_matryoshka():
    hidden = np.random.default_rng(0).normal(size=(3, 4, 8)).astype(np.float32)
    mask = np.ones((3, 4), dtype=np.int64)
    v = _pool("mean", hidden, mask)
    assert np.allclose(np.linalg.norm(v, axis=1), 1)
    t = _pool("mean", hidden, mask, truncate_dims=3)
    assert t.shape == (3, 3) and np.allclose(np.linalg.norm(t, axis=1), 1)
    full = hidden.mean(axis=1)[:, :3]
    assert np.allclose(t, full / np.linalg.norm(full, axis=1, keepdims=True), atol=1e-6)


def test_real_encoder_batch_equals_one_by_one(encoder_dir):
    enc = Encoder(encoder_dir, threads=2)
    texts = ["ring", "a finitely generated module over a local ring with M = mM is zero",
             "Every bounded sequence of real numbers has a convergent subsequence.", "univalence"]
    batch = enc.encode_documents(texts, batch_size=4)
    single = np.vstack([enc.encode_documents([t]) for t in texts])
    assert batch.shape == (4, enc.config.out_dims)
    # dynamic int8 quantisation picks one activation scale per batch tensor, so batch neighbours
    # move a vector slightly (fp32 models agree to 1e-5); rows must still be the same vectors
    cos = (batch * single).sum(axis=1)
    assert cos.min() > 0.98, cos
    assert np.allclose(np.linalg.norm(batch, axis=1), 1, atol=1e-4)
    # related statements are closer than unrelated ones
    q = enc.encode_queries(["Nakayama lemma: M = mM implies M = 0"])[0]
    assert q @ batch[1] > q @ batch[3]


def test_truncation_keeps_final_special_token(encoder_dir):
    enc = Encoder(encoder_dir)
    ids = enc.tokenize(["word " * 2000])[0]
    assert len(ids) == enc.config.max_tokens
    full = enc._tokenizer.encode("word")
    assert ids[-1] == full.ids[-1]  # [SEP] survives truncation


def test_prompts_change_the_vector(encoder_dir, tmp_path):
    d = tmp_path / "enc"
    shutil.copytree(encoder_dir, d)
    cfg = json.loads((d / "encoder.json").read_text())
    cfg["query_prompt"] = "query: "
    (d / "encoder.json").write_text(json.dumps(cfg))
    enc = Encoder(d)
    assert not np.allclose(enc.encode_queries(["group"]), enc.encode_documents(["group"]))
    assert np.allclose(enc.encode_queries(["group"]), enc.encode(["group"], prompt="query: "))


@pytest.mark.parametrize("patch, message", [
    ({"pooling": "max"}, "pooling"),
    ({"padding_side": "middle"}, "padding_side"),
    ({"truncate_dims": 100000}, "truncate_dims"),
    ({"inputs": ["input_ids", "attention_mask", "pixel_values"]}, "pixel_values"),
    ({"model_file": "missing.onnx"}, "missing.onnx"),
])
def test_bad_encoder_config(encoder_dir, tmp_path, patch, message):
    d = tmp_path / "enc"
    shutil.copytree(encoder_dir, d)
    cfg = json.loads((d / "encoder.json").read_text())
    cfg.update(patch)
    (d / "encoder.json").write_text(json.dumps(cfg))
    with pytest.raises(EncoderError, match=message):
        Encoder(d).encode_queries(["x"])


def test_threads_from_the_environment(encoder_dir, monkeypatch):
    # $MATHLAS_ENCODER_THREADS: the session's thread count (mathlas serve sets 1), same vectors
    from mathlas.encoder import THREADS_ENV, threads_from_env

    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert threads_from_env() is None
    default = Encoder(encoder_dir).encode_queries(["Nakayama's lemma"])
    monkeypatch.setenv(THREADS_ENV, "1")
    assert threads_from_env() == 1
    one = Encoder(encoder_dir)
    np.testing.assert_allclose(one.encode_queries(["Nakayama's lemma"]), default, atol=1e-6)
    assert one._session.get_session_options().intra_op_num_threads == 1
    for bad in ("0", "two", "-1", "300"):
        monkeypatch.setenv(THREADS_ENV, bad)
        with pytest.raises(EncoderError, match=THREADS_ENV):
            threads_from_env()
