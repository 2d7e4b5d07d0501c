"""The document embedder: onnxruntime IO binding (exercised on the CPU provider), length buckets, provider choice."""
from __future__ import annotations

import json
import shutil

import numpy as np
import onnxruntime as ort
import pytest

from mathlas.encoder import Encoder
from mathlas_build import embed as e
from mathlas_build.embed import DocumentEncoder, embed_documents, length_batches, resolve_providers

TEXTS = [
    "Every finitely generated module over a principal ideal domain is a direct sum of cyclic modules.",
    "prime",
    "A compact subset of a Hausdorff space is closed.",
    "The fundamental group of the circle is the integers.",
    "Nakayama's lemma: if M is finitely generated and IM = M then some 1 + a kills M, a in I.",
    "zero",
    "Every bounded sequence of real numbers has a convergent subsequence (Bolzano-Weierstrass).",
]


def test_length_batches_cover_every_row_once_and_respect_the_budget():
    rng = np.random.default_rng(0)
    lengths = list(rng.integers(1, 200, size=300))
    for batch_size, budget in ((1, None), (7, None), (64, 1000), (300, 5000), (32, 50)):
        batches = length_batches(lengths, batch_size, budget)
        flat = np.concatenate(batches)
        assert sorted(flat.tolist()) == list(range(300))
        assert [lengths[i] for i in flat] == sorted(lengths)  # buckets follow length order
        for b in batches:
            assert len(b) <= batch_size
            if budget and len(b) > 1:
                assert len(b) * max(lengths[i] for i in b) <= budget
    # a row longer than the budget still gets a batch of its own
    assert [b.tolist() for b in length_batches([500, 3], 8, 100)] == [[1], [0]]
    with pytest.raises(ValueError):
        length_batches([1], 0)


def test_iobinding_matches_the_runtime_encoder_on_cpu(encoder_dir, monkeypatch):
    calls = []
    orig_bound, orig_run = ort.InferenceSession.run_with_iobinding, ort.InferenceSession.run

    def bound(self, binding, *a, **k):
        calls.append("iobinding")
        return orig_bound(self, binding, *a, **k)

    def plain(self, *a, **k):
        calls.append("run")
        return orig_run(self, *a, **k)

    monkeypatch.setattr(ort.InferenceSession, "run_with_iobinding", bound)
    monkeypatch.setattr(ort.InferenceSession, "run", plain)
    doc = DocumentEncoder(encoder_dir, provider="cpu", threads=1)
    got = doc.encode_documents(TEXTS, batch_size=3)
    assert doc.device == "cpu" and doc.active_providers == ["CPUExecutionProvider"]
    assert calls and set(calls) == {"iobinding"}  # every document batch went through IO binding
    calls.clear()
    ref = Encoder(encoder_dir, threads=1).encode_documents(TEXTS, batch_size=3)
    assert set(calls) == {"run"}
    # same batches, same kernels: the IO-bound path gives the runtime's vectors
    np.testing.assert_allclose(got, ref, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_token_budget_buckets_change_batches_not_vectors(encoder_dir):
    fixed = DocumentEncoder(encoder_dir, provider="cpu", threads=1).encode_documents(TEXTS, batch_size=4)
    budget = DocumentEncoder(encoder_dir, provider="cpu", threads=1, max_batch_tokens=60)
    lengths = [len(t) for t in budget.tokenize(TEXTS)]
    assert len(length_batches(lengths, 4, 60)) > len(length_batches(lengths, 4))  # the budget really splits
    got = budget.encode_documents(TEXTS, batch_size=4)
    # the int8 model quantises activations per batch, so other neighbours move vectors a little
    # (tests/test_shard.py checks buckets against fixed batches exactly on an fp32 model)
    assert ((got * fixed).sum(axis=1)).min() > 0.98


def test_cuda_request_without_cuda_falls_back_with_a_message(capsys, monkeypatch):
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    assert resolve_providers("cuda") == ["CPUExecutionProvider"]
    err = capsys.readouterr().err
    assert "CUDAExecutionProvider" in err and "embedding on CPU" in err and "onnxruntime-gpu" in err
    assert resolve_providers("auto") == ["CPUExecutionProvider"]
    assert resolve_providers("cuda", quiet=True) == ["CPUExecutionProvider"]
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError, match="cpu, cuda or auto"):
        resolve_providers("tpu")


def test_cuda_selected_when_onnxruntime_has_it(encoder_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(ort, "get_available_providers",
                        lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert resolve_providers("cuda") == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert resolve_providers("auto") == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert resolve_providers("cpu") == ["CPUExecutionProvider"]
    enc = tmp_path / "enc"
    shutil.copytree(encoder_dir, enc)
    cfg = json.loads((enc / "encoder.json").read_text())
    (enc / "encoder.json").write_text(json.dumps({**cfg, "fp16_model": "fp16/model.onnx"}))
    # on CUDA the fp16 document model is taken unless the recipe names one; nothing is loaded yet
    assert DocumentEncoder(enc, provider="cuda").model_file == "fp16/model.onnx"
    assert DocumentEncoder(enc, provider="cuda", model_file="model.onnx").model_file == "model.onnx"
    assert DocumentEncoder(enc, provider="cpu").model_file == cfg.get("model_file", "model.onnx")


def test_embed_documents_reports_throughput(encoder_dir, tmp_path, capsys):
    vecs = embed_documents(TEXTS, encoder_dir, cache_dir=tmp_path, provider="cpu", threads=1)
    err = capsys.readouterr().err
    assert "7 texts (7 distinct): 0 already embedded (0 in the cache), 7 to embed" in err
    assert "docs/s on cpu" in err and "IO binding" in err
    assert vecs.shape == (len(TEXTS), Encoder(encoder_dir).config.out_dims)
    fp = e.document_model_fingerprint(DocumentEncoder(encoder_dir, provider="cpu"))
    assert {p.parent for p in tmp_path.rglob("*.npz")} == {tmp_path / "texts" / fp}


@pytest.fixture
def sessions(monkeypatch):
    """Every onnxruntime session made while the test runs."""
    made = []
    real = ort.InferenceSession

    def counting(*a, **k):
        made.append(a[0] if a else k.get("path_or_bytes"))
        return real(*a, **k)

    monkeypatch.setattr(ort, "InferenceSession", counting)
    return made


def test_a_cached_rebuild_embeds_nothing_and_gives_the_same_bytes(encoder_dir, tmp_path, capsys, sessions):
    first = embed_documents(TEXTS, encoder_dir, cache_dir=tmp_path, provider="cpu", threads=1, chunk=2)
    assert len(sessions) == 1  # one encoder for the four chunks, not one per chunk
    assert len(list(tmp_path.rglob("seg-*.npz"))) == 4  # a segment per chunk: 2 + 2 + 2 + 1 texts
    capsys.readouterr()
    again = embed_documents(TEXTS, encoder_dir, cache_dir=tmp_path, provider="cpu", threads=1, chunk=2)
    err = capsys.readouterr().err
    assert "7 already embedded (7 in the cache), 0 to embed" in err and "IO binding" not in err
    assert len(sessions) == 1  # nothing to embed: the model is not even loaded
    assert again.dtype == np.float32 and again.tobytes() == first.tobytes()
    # without a cache the same chunks make the same batches: the same vectors as the cached ones
    fresh = embed_documents(TEXTS, encoder_dir, provider="cpu", threads=1, chunk=2, quiet=True)
    assert fresh.tobytes() == first.tobytes()


def test_a_cache_with_half_the_texts_embeds_only_the_other_half(encoder_dir, tmp_path, monkeypatch):
    half = embed_documents(TEXTS[::2], encoder_dir, cache_dir=tmp_path, provider="cpu", threads=1, quiet=True)
    calls = []
    orig = Encoder.encode_documents

    def spy(self, docs, **kw):
        calls.append(list(docs))
        return orig(self, docs, **kw)

    monkeypatch.setattr(Encoder, "encode_documents", spy)
    texts = [*TEXTS, TEXTS[1], TEXTS[0]]  # a repeated text is embedded once
    full = embed_documents(texts, encoder_dir, cache_dir=tmp_path, provider="cpu", threads=1, quiet=True)
    assert calls == [TEXTS[1::2]]  # the missing half, each text once, in text order
    assert full[0::2][:4].tobytes() == half.tobytes()  # the cached half, as stored
    other = embed_documents(TEXTS[1::2], encoder_dir, provider="cpu", threads=1, quiet=True)
    assert full[1:7:2].tobytes() == other.tobytes()  # the new half, as a build without a cache makes it
    assert full[7].tobytes() == full[1].tobytes() and full[8].tobytes() == full[0].tobytes()
    assert embed_documents([], encoder_dir, cache_dir=tmp_path, quiet=True).shape == (0, full.shape[1])
