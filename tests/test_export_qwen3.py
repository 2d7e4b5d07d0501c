"""Qwen3 exporter round trip on a tiny random Qwen3 + a byte-level BPE trained here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("optimum.exporters.onnx")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from mathlas.encoder import Encoder  # noqa: E402
from mathlas_build import export_encoder as ee  # noqa: E402  (conftest puts build/ on the path)
from mathlas_build import export_qwen3 as eq  # noqa: E402

SENTENCES = ee.MATH_SENTENCES[:8]


def _tiny_checkpoint(root: Path, eot_post_processor: bool) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3Model

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = SENTENCES + [eq.qwen3_prompt(eq.QUERY_TASK), eq.qwen3_prompt(eq.DOCUMENT_TASK)]
    tok.train_from_iterator(corpus * 3, trainers.BpeTrainer(
        vocab_size=300, special_tokens=[eq.EOT], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    eot = tok.token_to_id(eq.EOT)
    if eot_post_processor:  # like the updated Qwen3-Embedding tokenizer.json: appends <|endoftext|>
        tok.post_processor = processors.TemplateProcessing(single=f"$A {eq.EOT}", special_tokens=[(eq.EOT, eot)])
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    src = root / "tiny-qwen3"
    src.mkdir()
    tok.save(str(src / "tokenizer.json"))
    PreTrainedTokenizerFast(tokenizer_file=str(src / "tokenizer.json"), eos_token=eq.EOT, pad_token=eq.EOT,
                            padding_side="left").save_pretrained(str(src))
    torch.manual_seed(0)
    cfg = Qwen3Config(vocab_size=tok.get_vocab_size(), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=128,
                      pad_token_id=eot, bos_token_id=eot, eos_token_id=eot, tie_word_embeddings=True)
    Qwen3Model(cfg).eval().save_pretrained(str(src), safe_serialization=True)
    return src


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("q3")
    src = _tiny_checkpoint(root, eot_post_processor=True)
    s = eq.export_qwen3(src, root / "encoder", None, root / "work", name="tiny-qwen3", source="random init (test)",
                        max_tokens=64, sample_texts=SENTENCES)
    return src, s


def test_prompts():
    assert eq.qwen3_prompt("T") == "Instruct: T\nQuery:"
    assert eq.qwen3_prompt(None) == "" and eq.qwen3_prompt("") == ""


def test_encoder_json(exported):
    _, s = exported
    d = Path(s["encoder_dir"])
    meta = json.loads((d / "encoder.json").read_text())
    assert {"model.onnx", "tokenizer.json", "encoder.json"} <= {p.name for p in d.iterdir()}
    assert (d / "fp16" / "model.onnx").is_file()
    assert meta["pooling"] == "last_token" and meta["normalize"] is True
    assert meta["padding_side"] == "left" and meta["append_token"] == "<|endoftext|>"
    assert meta["query_prompt"] == ("Instruct: Given a math search query, retrieve theorems mathematically "
                                    "equivalent to the query.\nQuery:")
    assert meta["document_prompt"] == ("Instruct: Represent the given math statement for retrieving related "
                                       "statements by natural language query.\nQuery:")
    assert meta["dims"] == 32 and meta["truncate_dims"] is None and meta["max_tokens"] == 64
    assert meta["fp16_model"] == "fp16/model.onnx"
    assert meta["inputs"] == eq.ee.graph_input_names(d / "model.onnx")
    assert meta["inputs"] == eq.ee.graph_input_names(d / "fp16" / "model.onnx")
    assert {"input_ids", "attention_mask"} <= set(meta["inputs"])
    assert set(meta["inputs"]) <= {"input_ids", "attention_mask", "position_ids"}
    assert meta["tokenizer_eot_post_processor_removed"] is True
    assert 0.9 < meta["fp16_int8_cosine_min"] <= meta["fp16_int8_cosine_mean"] <= 1.0 + 1e-6
    assert meta["fp16_int8_cosine_n"] == 2 * len(SENTENCES)
    assert s["model_bytes"] < s["fp32_bytes"]


def test_tokenization_appends_eot_once(exported):
    _, s = exported
    enc = Encoder(Path(s["encoder_dir"]))
    ids = enc.tokenize(["prime numbers"])[0]
    eot = enc._tokenizer.token_to_id(eq.EOT)
    assert ids[-1] == eot and ids.count(eot) == 1
    long = enc.tokenize([" ".join(SENTENCES * 3)])[0]
    assert len(long) == 64 and long[-1] == eot


def test_fp32_matches_torch(exported):
    src, s = exported
    d = Path(s["encoder_dir"])
    f = Encoder(d, model_file=s["fp32_model"])
    for prompt, fn in ((f.config.document_prompt, f.encode_documents), (f.config.query_prompt, f.encode_queries)):
        ref = eq.torch_qwen3_embed(src, d, SENTENCES, prompt)
        got = fn(SENTENCES)  # batched, left-padded
        np.testing.assert_allclose(got, ref, atol=1e-5)


@pytest.mark.parametrize("which", ["fp32", "fp16", "int8"])
def test_batch_equals_one_by_one(exported, which):
    _, s = exported
    d = Path(s["encoder_dir"])
    model = {"fp32": s["fp32_model"], "fp16": s["fp16_model"], "int8": None}[which]
    enc = Encoder(d, model_file=model)
    assert len({len(t) for t in enc.tokenize(SENTENCES)}) > 1  # the batch really is padded
    batch = enc.encode_documents(SENTENCES, batch_size=len(SENTENCES))
    single = np.concatenate([enc.encode_documents([t]) for t in SENTENCES])
    assert np.isfinite(batch).all()
    tol = {"fp32": 1e-5, "fp16": 5e-3, "int8": 5e-2}[which]  # int8: activation scales are per batch
    np.testing.assert_allclose(batch, single, atol=tol)


@pytest.mark.parametrize("which", ["fp16", "int8"])
def test_reduced_precision_close_to_fp32(exported, which):
    _, s = exported
    d = Path(s["encoder_dir"])
    ref = Encoder(d, model_file=s["fp32_model"]).encode_documents(SENTENCES)
    got = Encoder(d, model_file=s["fp16_model"] if which == "fp16" else None).encode_documents(SENTENCES)
    cos = (ref * got).sum(1)
    assert cos.min() > {"fp16": 0.999, "int8": 0.98}[which], cos


def test_matryoshka_and_no_doc_instruction(exported, tmp_path):
    src, s = exported
    t = eq.export_qwen3(src, tmp_path / "enc16", 16, tmp_path / "work", max_tokens=64, document_task=None,
                        fp16=False)
    d = Path(t["encoder_dir"])
    meta = json.loads((d / "encoder.json").read_text())
    assert meta["truncate_dims"] == 16 and meta["document_prompt"] == "" and "fp16_int8_cosine_min" not in meta
    f = Encoder(d, model_file=t["fp32_model"])
    v = f.encode_documents(SENTENCES)
    assert v.shape == (len(SENTENCES), 16)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(v, eq.torch_qwen3_embed(src, d, SENTENCES, ""), atol=1e-5)


def test_tokenizer_without_eot_post_processor(tmp_path):
    src = _tiny_checkpoint(tmp_path, eot_post_processor=False)
    info = eq.configure_qwen3_tokenizer(src / "tokenizer.json", tmp_path / "tok.json", 64)
    assert info["removed_eot_post_processor"] is False


def test_cli_help(capsys):
    with pytest.raises(SystemExit) as e:
        eq.main(["--help"])
    assert e.value.code == 0
    assert "--dims" in capsys.readouterr().out
