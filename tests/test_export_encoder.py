"""Exporter round trip on a tiny random BERT: PyTorch vs ONNX fp32 / int8 encoder directory."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import tiny_bert

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from mathlas.encoder import Encoder  # noqa: E402
from mathlas_build import export_encoder as ee  # noqa: E402  (conftest puts build/ on the path)

SENTENCES = [
    "the derivative of sin x is cos x",
    "every finite group of prime order is cyclic",
    "the integral of x squared from zero to one is one third",
    "a continuous function on a compact set attains its maximum",
    "prime numbers are infinite",
    "eigenvalues of a symmetric matrix are real",
    "the sum of the angles of a triangle",
    "cauchy sequences converge in complete metric spaces",
]


def _tiny_checkpoint(root: Path) -> Path:
    return tiny_bert(root, SENTENCES * 4, vocab_size=200)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("enc")
    src = _tiny_checkpoint(root)
    summary = ee.export_encoder(src, root / "encoder", root / "work", name="tiny", source="random init (test)",
                                license="Apache-2.0", pooling="mean", max_tokens=32,
                                query_prompt="q: ", document_prompt="")
    return src, summary


def _torch_ref(src: Path, enc_dir: Path, texts):
    hs, _ = ee.torch_hidden(src, enc_dir / "tokenizer.json", texts, max_tokens=32)
    # independent reference pooling: unpadded sequences, so mean pooling is a plain mean
    means = np.stack([h.mean(axis=0) for h in hs])
    return hs, means / np.linalg.norm(means, axis=1, keepdims=True)


def test_encoder_json(exported):
    src, s = exported
    d = Path(s["encoder_dir"])
    assert {p.name for p in d.iterdir()} >= {"model.onnx", "tokenizer.json", "encoder.json"}
    meta = json.loads((d / "encoder.json").read_text())
    assert meta["name"] == "tiny" and meta["license"] == "Apache-2.0"
    assert meta["pooling"] == "mean" and meta["normalize"] is True
    assert meta["max_tokens"] == 32 and meta["dims"] == 32 and meta["truncate_dims"] is None
    assert meta["query_prompt"] == "q: " and meta["document_prompt"] == ""
    assert meta["padding_side"] == "right" and meta["output"] == "last_hidden_state"
    assert meta["inputs"] == ee.graph_input_names(d / "model.onnx")
    assert set(meta["inputs"]) <= {"input_ids", "attention_mask", "token_type_ids"}
    assert {"input_ids", "attention_mask"} <= set(meta["inputs"])
    assert meta["quantization"].startswith("int8 per-channel")
    assert s["model_bytes"] < s["fp32_bytes"]


def test_onnx_graph_io(exported):
    import onnxruntime as ort

    _, s = exported
    sess = ort.InferenceSession(str(Path(s["encoder_dir"]) / "model.onnx"), providers=["CPUExecutionProvider"])
    for i in sess.get_inputs():
        assert i.type == "tensor(int64)" and len(i.shape) == 2
        assert not isinstance(i.shape[0], int) and not isinstance(i.shape[1], int)  # dynamic axes
    (o,) = sess.get_outputs()
    assert o.name == "last_hidden_state" and len(o.shape) == 3


def test_fp32_matches_torch(exported):
    src, s = exported
    d = Path(s["encoder_dir"])
    hs, ref = _torch_ref(src, d, SENTENCES)
    f = Encoder(d, model_file=s["fp32_model"])
    for t, h in zip(SENTENCES, hs):
        np.testing.assert_allclose(f.token_states(t), h, atol=1e-4)
    np.testing.assert_allclose(f.encode_documents(SENTENCES), ref, atol=1e-5)


def test_int8_close_to_torch(exported):
    src, s = exported
    d = Path(s["encoder_dir"])
    _, ref = _torch_ref(src, d, SENTENCES)
    q = Encoder(d).encode_documents(SENTENCES)
    cos = (q * ref).sum(1)
    assert cos.min() > 0.98, cos
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("which", ["fp32", "int8"])
def test_batch_equals_one_by_one(exported, which):
    _, s = exported
    d = Path(s["encoder_dir"])
    enc = Encoder(d, model_file=s["fp32_model"] if which == "fp32" else None)
    lens = [len(ids) for ids in enc.tokenize(SENTENCES)]
    assert len(set(lens)) > 1  # the batch really is padded
    batch = enc.encode_documents(SENTENCES, batch_size=len(SENTENCES))
    single = np.concatenate([enc.encode_documents([t]) for t in SENTENCES])
    # fp32: padding is masked exactly; int8: dynamic activation scales are per batch
    tol = 1e-5 if which == "fp32" else 2e-2
    np.testing.assert_allclose(batch, single, atol=tol)
    if which == "int8":
        assert ((batch * single).sum(1)).min() > 0.995


def test_query_prompt_applied(exported):
    _, s = exported
    enc = Encoder(Path(s["encoder_dir"]), model_file=s["fp32_model"])
    q = enc.encode_queries(["prime numbers"])
    np.testing.assert_allclose(q, enc.encode_documents(["q: prime numbers"]), atol=1e-6)


def test_cli_help(capsys):
    with pytest.raises(SystemExit) as e:
        ee.main(["--help"])
    assert e.value.code == 0
    assert "--pooling" in capsys.readouterr().out


def test_torch_onnx_fallback_path(exported, tmp_path):
    """The torch.onnx.export(dynamo=False) fallback yields the same graph contract and numbers."""
    src, s = exported
    fp32, used = ee.export_onnx_fp32(src, tmp_path / "fp32", method="torch")
    assert used == "torch.onnx"
    assert ee.graph_input_names(fp32) == ee.graph_input_names(Path(s["encoder_dir"]) / "model.onnx")
    a = Encoder(Path(s["encoder_dir"]), model_file=str(fp32)).encode_documents(SENTENCES)
    b = Encoder(Path(s["encoder_dir"]), model_file=s["fp32_model"]).encode_documents(SENTENCES)
    np.testing.assert_allclose(a, b, atol=1e-5)
