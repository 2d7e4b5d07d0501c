"""Export a local Qwen3-Embedding checkpoint (0.6B / 4B / 8B, ``Qwen3Model``) to a mathlas ``encoder/`` directory.

Layout written to ``out_dir``::

    model.onnx          int8 per-channel dynamic quantization (CPU query encoding)
    fp16/model.onnx     fp16 weights/activations, fp32 graph inputs/outputs (GPU document encoding);
                        RMSNorm's variance path (Pow/ReduceMean/Add/Sqrt/Div nodes under ``*norm/``) kept
                        fp32 (x^2 overflows fp16 on large activations). Blocking whole norm sub-graphs
                        (Casts included) makes onnxruntime's converter emit duplicate node names.
    tokenizer.json      the checkpoint's tokenizer, left padding with ``<|endoftext|>``, with any
                        post-processor that already appends ``<|endoftext|>`` removed (the runtime
                        appends it itself, after truncation, via ``append_token``)
    encoder.json        pooling "last_token", normalize, padding_side "left", append_token,
                        prompts, truncate_dims (Matryoshka), inputs, and the measured
                        fp16-vs-int8 cosine ("fp16_int8_cosine_min" / "_mean")

The fp32 ONNX graph stays in ``work_dir/fp32`` (not part of the bundle).

Pooling and L2 normalisation are done by the runtime (``mathlas.encoder``) in numpy: the
hidden state of the last real token (with left padding: the last column), then the first
``truncate_dims`` components, then L2 normalisation.

Prompts (as implemented; see ``qwen3_prompt``): Qwen3-Embedding formats an instructed
input as ``f"Instruct: {task}\\nQuery:{text}"`` — no space after ``Query:``. The query prompt
is therefore ``"Instruct: <QUERY_TASK>\\nQuery:"`` prepended to the raw query text. Qwen3's
own recipe puts no instruction on documents; mathlas' issue names a document instruction,
so by default documents get the *same template* with ``DOCUMENT_TASK``
(``document_task=None`` gives Qwen3's no-instruction convention). ``encoder.json`` records
``prompt_template``, ``query_task`` and ``document_task`` next to the resulting prompts.

Position ids: optimum's export of Qwen3 has a ``position_ids`` input; the runtime fills it
with ``cumsum(mask) - 1``, so a left-padded row gets the same positions as the unpadded
sequence (batch == one-by-one). Note that HF's plain ``model(input_ids, attention_mask)``
with left padding uses positions ``0..width-1`` instead, i.e. differs slightly for padded rows.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any
from collections.abc import Sequence

import numpy as np

from mathlas_build import export_encoder as ee

EOT = "<|endoftext|>"
QUERY_TASK = "Given a math search query, retrieve theorems mathematically equivalent to the query."
DOCUMENT_TASK = "Represent the given math statement for retrieving related statements by natural language query."
PROMPT_TEMPLATE = "Instruct: {task}\nQuery:"  # Qwen3-Embedding get_detailed_instruct, the text follows directly
# RMSNorm variance path (input/post-attention/q_norm/k_norm/final norm) kept fp32 in the fp16 graph
FP16_KEEP_FP32 = (r"norm/(Pow|ReduceMean|Add|Sqrt|Div)",)


def qwen3_prompt(task: str | None) -> str:
    """The prefix put before a text: ``"Instruct: {task}\\nQuery:"`` (``""`` when ``task`` is empty/None)."""
    return PROMPT_TEMPLATE.format(task=task) if task else ""


# ---------------------------------------------------------------------------
# tokenizer
# ---------------------------------------------------------------------------

def configure_qwen3_tokenizer(tok_json: Path, out_path: Path, max_tokens: int) -> dict[str, Any]:
    """Copy tokenizer.json: left padding with ``<|endoftext|>``, truncation ``max_tokens``.

    The updated Qwen3-Embedding tokenizers append ``<|endoftext|>`` in their post-processor;
    the runtime appends it itself (``append_token``, after truncation, so it survives long
    inputs), so such a post-processor is replaced by a plain ByteLevel one.
    """
    from tokenizers import Tokenizer, processors

    tok = Tokenizer.from_file(str(tok_json))
    eot = tok.token_to_id(EOT)
    if eot is None:
        raise ValueError(f"{tok_json}: no {EOT} token; not a Qwen3 tokenizer?")
    tok.no_padding()
    tok.no_truncation()
    with_sp = tok.encode("x y", add_special_tokens=True).ids
    without = tok.encode("x y", add_special_tokens=False).ids
    removed = False
    if with_sp != without:
        if with_sp == without + [eot]:
            tok.post_processor = processors.ByteLevel(trim_offsets=False)
            removed = True
        else:
            raise ValueError(f"{tok_json}: unexpected post-processor ({without} -> {with_sp})")
    tok.enable_truncation(max_length=max_tokens)
    tok.enable_padding(direction="left", pad_id=eot, pad_token=EOT)
    tok.save(str(out_path))
    return {"eot_id": eot, "removed_eot_post_processor": removed}


# ---------------------------------------------------------------------------
# fp16 / int8
# ---------------------------------------------------------------------------

def _initializer_bytes(model) -> int:
    return sum(len(t.raw_data) for t in model.graph.initializer)


def _save_onnx(model, path: Path) -> None:
    import onnx

    path.parent.mkdir(parents=True, exist_ok=True)
    if _initializer_bytes(model) > 1_500_000_000:  # protobuf's 2 GB limit: weights to model.onnx_data
        onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=path.name + "_data", size_threshold=1024)
    else:
        onnx.save_model(model, str(path))


def convert_fp16(fp32_path: Path, out_path: Path, keep_fp32: Sequence[str] = FP16_KEEP_FP32) -> Path:
    """fp16 copy of the graph, fp32 inputs/outputs; nodes matching ``keep_fp32`` (regex) stay fp32."""
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    model = onnx.load(str(fp32_path))  # loads external data next to it
    block = [n.name for n in model.graph.node if any(re.search(k, n.name) for k in keep_fp32)]
    m16 = convert_float_to_float16(model, keep_io_types=True, node_block_list=block or None)
    _save_onnx(m16, Path(out_path))
    return Path(out_path)


def quantize_int8(fp32_path: Path, out_path: Path) -> Path:
    """int8 per-channel dynamic quantization; external data for graphs past protobuf's limit."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    large = ee.onnx_model_bytes(fp32_path) > 4 * 1_500_000_000  # int8 ~ 1/4 of fp32
    quantize_dynamic(str(fp32_path), str(out_path), per_channel=True, reduce_range=False,
                     weight_type=QuantType.QInt8, use_external_data_format=large)
    return out_path


# ---------------------------------------------------------------------------
# export
# ---------------------------------------------------------------------------

def export_qwen3(
    src_dir: Path | str,
    out_dir: Path | str,
    dims: int | None = None,
    work_dir: Path | str | None = None,
    *,
    name: str | None = None,
    source: str = "",
    license: str = "Apache-2.0",
    max_tokens: int = 512,
    query_task: str | None = QUERY_TASK,
    document_task: str | None = DOCUMENT_TASK,
    opset: int = 18,
    method: str = "auto",
    fp16: bool = True,
    fp16_keep_fp32: Sequence[str] = FP16_KEEP_FP32,
    sample_texts: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Export Qwen3 checkpoint ``src_dir`` to the encoder directory ``out_dir``.

    ``dims``: Matryoshka truncation (``truncate_dims``; None = full width). Returns a summary
    dict (paths, sizes, export method, encoder.json contents).
    """
    src, out_dir = Path(src_dir), Path(out_dir)
    work_dir = Path(work_dir) if work_dir else out_dir.with_name(out_dir.name + ".work")
    cfg = ee._load_hf_config(src)
    if cfg.get("model_type") != "qwen3":
        raise ValueError(f"{src}: model_type {cfg.get('model_type')!r}, expected 'qwen3'")
    hidden = int(cfg["hidden_size"])
    if dims is not None and not 0 < dims <= hidden:
        raise ValueError(f"dims {dims} outside 1..{hidden}")

    fp32, used = ee.export_onnx_fp32(src, work_dir / "fp32", opset=opset, method=method)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    model = quantize_int8(fp32, out_dir / "model.onnx")
    fp16_path = convert_fp16(fp32, out_dir / "fp16" / "model.onnx", fp16_keep_fp32) if fp16 else None
    tinfo = configure_qwen3_tokenizer(src / "tokenizer.json", out_dir / "tokenizer.json", max_tokens)

    inputs = ee.graph_input_names(model)
    for other in (fp32, fp16_path):
        if other is not None and ee.graph_input_names(other) != inputs:
            raise RuntimeError(f"graph inputs differ: {model} {inputs} vs {other} {ee.graph_input_names(other)}")
    meta: dict[str, Any] = {
        "name": name or src.name,
        "source": source,
        "license": license,
        "pooling": "last_token",
        "normalize": True,
        "max_tokens": int(max_tokens),
        "dims": hidden,
        "truncate_dims": int(dims) if dims else None,
        "query_prompt": qwen3_prompt(query_task),
        "document_prompt": qwen3_prompt(document_task),
        "prompt_template": PROMPT_TEMPLATE + "{text}",
        "query_task": query_task,
        "document_task": document_task,
        "append_token": EOT,
        "padding_side": "left",
        "pad_token_id": tinfo["eot_id"],
        "inputs": inputs,
        "output": "last_hidden_state",
        "model_file": "model.onnx",
        "quantization": "int8 per-channel dynamic",
        "fp16_model": "fp16/model.onnx" if fp16_path else None,
        "fp16_fp32_nodes": list(fp16_keep_fp32) if fp16_path else None,
        "tokenizer_eot_post_processor_removed": tinfo["removed_eot_post_processor"],
        "export_method": used,
    }
    enc_json = out_dir / "encoder.json"
    enc_json.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    if fp16_path:
        meta.update(measure_fp16_int8(out_dir, sample_texts))
        enc_json.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return {
        "encoder_dir": str(out_dir),
        "fp32_model": str(fp32),
        "fp16_model": str(fp16_path) if fp16_path else None,
        "method": used,
        "fp32_bytes": ee.onnx_model_bytes(fp32),
        "fp16_bytes": ee.onnx_model_bytes(fp16_path) if fp16_path else 0,
        "model_bytes": ee.onnx_model_bytes(model),
        "encoder_json": meta,
    }


def measure_fp16_int8(encoder_dir: Path | str, texts: Sequence[str] | None = None) -> dict[str, Any]:
    """Cosine between the fp16 (documents) and int8 (queries) models on sample texts, both prompts."""
    from mathlas.encoder import Encoder

    d = Path(encoder_dir)
    texts = list(texts or ee.MATH_SENTENCES)
    q8 = Encoder(d, threads=2)
    f16 = Encoder(d, threads=2, model_file=str((d / q8.config.extra["fp16_model"]).resolve()))
    cos = []
    for fn in ("encode_documents", "encode_queries"):
        a, b = getattr(q8, fn)(texts), getattr(f16, fn)(texts)
        cos.append((a * b).sum(1))
    c = np.concatenate(cos)
    return {"fp16_int8_cosine_min": round(float(c.min()), 6), "fp16_int8_cosine_mean": round(float(c.mean()), 6),
            "fp16_int8_cosine_n": int(c.size)}


def torch_qwen3_embed(src: Path | str, encoder_dir: Path | str, texts: Sequence[str], prompt: str = "") -> np.ndarray:
    """Reference: HF ``Qwen3Model`` on each text alone (no padding), last token, Matryoshka cut, L2."""
    import torch
    from transformers import AutoModel

    from mathlas.encoder import Encoder

    enc = Encoder(encoder_dir)  # its tokenization (prompt, truncation, appended <|endoftext|>)
    d = enc.config.truncate_dims
    model = AutoModel.from_pretrained(str(src), dtype=torch.float32).eval()
    out = []
    with torch.no_grad():
        for ids in enc.tokenize(texts, prompt):
            x = torch.tensor([ids])
            v = model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state[0, -1].numpy()
            v = v[:d] if d else v
            out.append(v / np.linalg.norm(v))
    return np.stack(out).astype(np.float32)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mathlas_build.export_qwen3",
                                description="Export a Qwen3-Embedding checkpoint directory to a mathlas encoder/ "
                                            "(int8 model.onnx for CPU queries, fp16/model.onnx for GPU documents).")
    p.add_argument("src", type=Path, help="HF checkpoint directory (config.json, safetensors, tokenizer.json)")
    p.add_argument("out", type=Path, help="encoder directory to write")
    p.add_argument("--dims", type=int, default=None, help="Matryoshka truncation (default: full width)")
    p.add_argument("--work-dir", type=Path, default=None)
    p.add_argument("--name", default=None)
    p.add_argument("--source", default="")
    p.add_argument("--license", default="Apache-2.0")
    p.add_argument("--max-tokens", type=int, default=512)
    p.add_argument("--query-task", default=QUERY_TASK)
    p.add_argument("--document-task", default=DOCUMENT_TASK, help="'' = no instruction (Qwen3's own convention)")
    p.add_argument("--opset", type=int, default=18)
    p.add_argument("--method", choices=["auto", "optimum", "torch"], default="auto")
    p.add_argument("--no-fp16", action="store_true")
    a = p.parse_args(argv)
    s = export_qwen3(a.src, a.out, a.dims, a.work_dir, name=a.name, source=a.source, license=a.license,
                     max_tokens=a.max_tokens, query_task=a.query_task or None,
                     document_task=a.document_task or None, opset=a.opset, method=a.method, fp16=not a.no_fp16)
    print(json.dumps({k: v for k, v in s.items() if k != "encoder_json"}, indent=2))
    m = s["encoder_json"]
    print(f"fp16 vs int8 cosine: min {m.get('fp16_int8_cosine_min')} mean {m.get('fp16_int8_cosine_mean')}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
