"""A trainable checkpoint from an int8 ONNX export: the way back from the encoder a release ships.

The fine-tuned checkpoint behind the default release's query encoder was lost with its machine
(docs/training.md, "Where the encoder's weights are"); what the repository keeps is the int8 export
inside the release (``encoder/model.onnx``: BERT weights quantised per channel by onnxruntime's dynamic
quantisation, embeddings quantised per tensor). ``checkpoint_from_int8_onnx`` dequantises every weight
back to float32 and writes an HF ``BertModel`` checkpoint (``config.json``, ``model.safetensors`` or
``pytorch_model.bin``, ``tokenizer.json``), so training can go on from the shipped encoder instead of
starting from the base again. The result is the shipped model up to its quantisation error: it embeds
like the ONNX export (cosine ≥ .99 on math sentences, checked by ``tests/test_training.py``).

Each MatMulInteger of the graph names its module in its output (``/encoder/layer.0/attention/self/
query/MatMul_output_0_output_quantized``), which is how its weight finds its parameter name; a graph
whose weights cannot all be placed is refused rather than half converted.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

# all-MiniLM-L6-v2 (the base of every MiniLM encoder mathlas ships): BertModel, 6 layers of 384
MINILM_CONFIG = {
    "architectures": ["BertModel"], "model_type": "bert", "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 384, "initializer_range": 0.02,
    "intermediate_size": 1536, "layer_norm_eps": 1e-12, "max_position_embeddings": 512,
    "num_attention_heads": 12, "num_hidden_layers": 6, "pad_token_id": 0,
    "position_embedding_type": "absolute", "type_vocab_size": 2, "vocab_size": 30522,
}
_MODULE = re.compile(r"^/(encoder/layer\.\d+/[a-z_/]+?)/MatMul_output_0_output_quantized$")


def dequantized_weights(model_path: Path) -> dict[str, np.ndarray]:
    """Every parameter of the quantised BERT graph as float32, under the HF ``BertModel`` names."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(model_path)).graph
    init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    out: dict[str, np.ndarray] = {}
    for name, value in init.items():  # biases and LayerNorm parameters are kept as float32
        if value.dtype == np.float32 and not name.startswith("onnx::") and name.endswith((".bias", ".weight")):
            out[name] = value
    for name in [n for n in init if n.endswith(".weight_quantized")]:  # embeddings: one scale a tensor
        stem = name.removesuffix("_quantized")
        q, zp, scale = init[name], init[stem + "_zero_point"], init[stem + "_scale"]
        out[stem] = ((q.astype(np.float32) - np.float32(zp)) * np.float32(scale)).astype(np.float32)
    placed = 0
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        m = _MODULE.match(node.output[0])
        weight = node.input[1]
        if not m or not weight.endswith("_quantized"):
            raise ValueError(f"{model_path}: cannot place the MatMulInteger writing {node.output[0]!r}")
        stem = weight.removesuffix("_quantized")
        q = init[weight].astype(np.float32)  # (in, out), one scale and zero point per output column
        w = (q - init[stem + "_zero_point"].astype(np.float32)[None, :]) * init[stem + "_scale"][None, :]
        out[m.group(1).replace("/", ".") + ".weight"] = np.ascontiguousarray(w.T)  # torch Linear: (out, in)
        placed += 1
    if placed == 0:
        raise ValueError(f"{model_path}: no quantised MatMul weights (is it an int8 export?)")
    return out


def checkpoint_from_int8_onnx(encoder_dir: Path, out: Path, config: dict | None = None) -> Path:
    """Write ``out/`` (an HF BertModel checkpoint) from ``encoder_dir`` (``model.onnx`` + ``tokenizer.json``,
    an encoder directory as bundles hold). Refuses weights that do not fill the model exactly."""
    import torch
    from transformers import BertConfig, BertModel

    encoder_dir, out = Path(encoder_dir), Path(out)
    weights = dequantized_weights(encoder_dir / "model.onnx")
    cfg = BertConfig(**(config or MINILM_CONFIG))
    model = BertModel(cfg, add_pooling_layer=False)
    expected = set(model.state_dict()) - {"embeddings.position_ids", "embeddings.token_type_ids"}
    missing, extra = expected - set(weights), set(weights) - expected
    if missing or extra:
        raise ValueError(f"{encoder_dir}: the export does not fill BertModel: missing {sorted(missing)[:5]}, "
                         f"unexpected {sorted(extra)[:5]}")
    model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in weights.items()}, strict=False)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    (out / "tokenizer.json").write_bytes((encoder_dir / "tokenizer.json").read_bytes())
    meta = {"from": str(encoder_dir / "model.onnx"), "note": "dequantised from an int8 export"}
    enc_json = encoder_dir / "encoder.json"
    if enc_json.is_file():
        meta["encoder"] = json.loads(enc_json.read_text(encoding="utf-8")).get("name")
    (out / "dequantized.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return out
