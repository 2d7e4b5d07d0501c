"""Dry-run planner: expected embedding time and bundle size for a corpus size, model and GPU count.

Every number the planner uses is in the cost table below, each marked MEASURED (on this repository's
2-core build machine, from the real ``informal-1.3.0`` bundle or a build log) or ESTIMATED (from
published specifications and a stated assumption). ``format_plan``
prints the sources next to the figures, so an estimate never passes for a measurement.

Size model per document: binary HNSW = dims/8 sign-bit bytes + the graph's links and key; int8 float
vectors = dims + a 4-byte row scale; BM25 and metadata scale with text length (per-document bytes of the
informal corpus; ``--from-bundle`` takes them from any other bundle's manifest). The encoder is a fixed cost.

Time model: reading the corpus (every shard reads all of it, in parallel; the merge reads it again) +
embedding = docs / (docs/s per device x devices) + writing the metadata, BM25 and HNSW, once on one
machine after the merge (MEASURED rates; HNSW insertion grows slowly with corpus size).
GPU docs/s is ESTIMATED as ``MFU x peak FLOP/s / (2 x non-embedding parameters x tokens per document)``
(the 2·N FLOPs per token of a transformer forward pass, Kaplan et al. 2020, "Scaling Laws for Neural
Language Models"); the MFU (fraction of peak reached) is MEASURED for MiniLM on an H200 (1.3%: a small
model is host-bound) and an assumption for the Qwen3 models, stated below.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

# --------------------------------------------------------------------------------------------------
# The cost table: the only place these numbers live.
# --------------------------------------------------------------------------------------------------

# The default bundle the per-document figures were measured on (tests/test_plan.py fails when the
# shipped default bundle is another one: re-measure with bundle_bytes_per_doc / bundle_tokens_per_doc).
MEASURED_BUNDLE = "informal-1.6.1"
MEASURED_CORPUS = "informal-1.6.1 (65,024 documents, all-MiniLM-L6-v2-math-v2, 384 dims)"
# MEASURED from that bundle's manifest (1.6.1 is 1.6.0 with another ranker: the same indexes): bm25/ 16,097,634 B; meta/documents.parquet 19,317,616 B;
# vectors/binary.usearch 12,780,724 B = 65,024 x (48 B sign bits + 148.6 B HNSW links and key).
# (informal-1.5.1, before 1.6.0's headings: bm25 247.48, meta 296.97, tokens 112.1.)
# (informal-1.4.0, before the readers' repairs of 1.5.0: bm25 247.52, meta 296.81, tokens 112.1.)
# (informal-1.2.0, before the alias field: bm25 243.6; 1.1.0, before the display text and titles of
# issue 21: bm25 236.6, meta 293.9.)
# (informal-1.3.0: bm25 246.65, meta 296.48; 1.4.0's readers changed 3,825 texts.)
BYTES_PER_DOC = {"bm25": 247.56, "meta": 297.08, "hnsw_graph": 148.55}
# MEASURED on informal-1.6.1: ranker/ (the learned stage's docinfo.npz and its 50-tree model.json)
# is 4,146,572 B for 65,024 documents (1.6.0's 100 trees of 15 leaves: 4,221,369); a bundle without a ranker has none.
RANKER_BYTES_PER_DOC = 63.77
# MEASURED: mean retrieval-text tokens of that bundle's 65,024 texts with its WordPiece tokenizer
# (max 256; bundle_tokens_per_doc). informal-1.0.0's six sources had 149.5.
TOKENS_PER_DOC = 112.1
# MEASURED on the 2-core build machine (write_meta / write_bm25 / write_vectors on the informal data,
# under load from other jobs; see docs/building.md).
WRITE_DOCS_PER_S = {"meta": 3166.0, "bm25": 1029.0, "vectors": 2026.0}
# MEASURED: reading + LaTeX-to-words of the informal sources (27,264 documents in 151 s on the loaded
# 2-core machine). Every shard reads the whole corpus (in parallel on its own machine) and the merge
# reads it once more, so reading is paid twice in wall time.
READ_DOCS_PER_S = 180.0
# MEASURED: embedding informal-1.0.0's 27,264 documents (149.5 tokens each), fp32 MiniLM, 2 onnxruntime
# threads: 45 docs/s on an idle host (docs/benchmarks.md; 16-20 docs/s while other jobs shared the 2 cores).
CPU_MINILM_DOCS_PER_S = 45.0
CPU_MINILM_TOKENS_PER_DOC = 149.5
# all-MiniLM-L6-v2's parameters in matmuls: 6 layers x (4·384² + 2·384·1536)
MINILM_NONEMBEDDING = 10_616_832
# MEASURED on one NVIDIA H200 (scripts/bench_embed_gpu.py, docs/building.md "The document embedder on a
# GPU"): the Mathlib bundle's 288,733 retrieval texts (84.05 tokens each) through embed_documents with
# MiniLM's fp16 document model on onnxruntime-gpu's CUDA provider, batch 128: 7,117.6 docs/s. That is
# 1.3% of the chip's dense fp16 peak: a 6-layer model is bound by the host (tokenizing, padding, copies),
# not by FLOPs. (Its int8 model runs at 630 docs/s there, no faster than the machine's 16 CPU cores.)
GPU_MINILM_DOCS_PER_S = 7117.6
GPU_MINILM_TOKENS_PER_DOC = 84.05
H200_PEAK_FLOPS = 989.4e12
MINILM_GPU_MFU = GPU_MINILM_DOCS_PER_S * 2 * MINILM_NONEMBEDDING * GPU_MINILM_TOKENS_PER_DOC / H200_PEAK_FLOPS


@dataclass(frozen=True)
class Model:
    name: str
    params: int              # all parameters
    nonembedding: int        # parameters in matmuls (what costs FLOPs)
    dims: int                # output width (Matryoshka truncation can store fewer)
    prompt_tokens: int       # document instruction prepended to every document
    mfu: float               # fraction of GPU peak reached by onnxruntime fp16 (MiniLM: measured; Qwen3: assumed)
    encoder_bytes: int       # the bundle's encoder/ (int8 query model + tokenizer)
    encoder_source: str
    source: str


@dataclass(frozen=True)
class Device:
    name: str
    peak_flops: float        # dense fp16/bf16 tensor-core peak, no sparsity
    source: str


# Parameter counts: the Qwen3-Embedding checkpoints as listed in keras-hub's qwen3 presets
# (595,776,512 / 4,021,774,336 / 8,188,515,328); embedding table 151,669 x hidden subtracted.
# Dims 1024 / 2560 / 4096 and 28 / 36 / 36 layers per the Qwen3-Embedding model cards.
MODELS: dict[str, Model] = {
    "minilm": Model("all-MiniLM-L6-v2", 22_713_216, MINILM_NONEMBEDDING, 384, 0, MINILM_GPU_MFU, 23_663_578,
                    "MEASURED: informal-1.3.0 encoder/ (int8 model.onnx + tokenizer.json + encoder.json)",
                    "6 layers x (4·384² + 2·384·1536) matmul parameters"),
    "qwen3-0.6b": Model("Qwen3-Embedding-0.6B", 595_776_512, 440_467_456, 1024, 21, 0.35, 607_000_000,
                        "ESTIMATED: int8 per-channel ~1 B/parameter + 11 MB tokenizer",
                        "Qwen3-Embedding-0.6B model card; keras-hub preset parameter count"),
    "qwen3-4b": Model("Qwen3-Embedding-4B", 4_021_774_336, 3_633_501_696, 2560, 21, 0.35, 4_033_000_000,
                      "ESTIMATED: int8 per-channel ~1 B/parameter + 11 MB tokenizer",
                      "Qwen3-Embedding-4B model card; keras-hub preset parameter count"),
    "qwen3-8b": Model("Qwen3-Embedding-8B", 8_188_515_328, 7_567_279_104, 4096, 21, 0.35, 8_200_000_000,
                      "ESTIMATED: int8 per-channel ~1 B/parameter + 11 MB tokenizer",
                      "Qwen3-Embedding-8B model card; keras-hub preset parameter count"),
}
GPUS: dict[str, Device] = {
    "h100": Device("NVIDIA H100 SXM", 989.4e12, "NVIDIA H100 datasheet: 989.4 TFLOPS dense FP16/BF16 tensor (SXM)"),
    "h200": Device("NVIDIA H200", H200_PEAK_FLOPS, "NVIDIA H200 datasheet: 989.4 TFLOPS dense FP16/BF16 tensor (SXM)"),
    "a100": Device("NVIDIA A100", 312e12, "NVIDIA A100 datasheet: 312 TFLOPS dense FP16/BF16 tensor"),
    # the build machine's effective rate implied by the MEASURED MiniLM run: 45 docs/s x 2 x params x tokens
    "cpu": Device("2-core CPU (this repository's build machine)",
                  CPU_MINILM_DOCS_PER_S * 2 * MINILM_NONEMBEDDING * CPU_MINILM_TOKENS_PER_DOC,
                  "MEASURED MiniLM fp32 rate on 2 cores, scaled to other models by FLOPs per document"),
}


def guess_model(encoder_name: str) -> str:
    """The cost-table key of an encoder.json ``name`` (``minilm`` when nothing matches, with a warning later)."""
    low = encoder_name.lower()
    for key in ("qwen3-8b", "qwen3-4b", "qwen3-0.6b"):
        if key.split("-")[1] in low and "qwen3" in low:
            return key
    return "minilm"


@dataclass
class Plan:
    docs: int
    model: str
    device: str
    devices: int
    dims: int
    tokens_per_doc: float
    docs_per_s_per_device: float
    read_hours: float
    embed_hours: float
    write_hours: float
    total_hours: float
    sizes: dict[str, int]
    total_bytes: int
    sources: dict[str, str]


def make_plan(docs: int, model: str, *, gpus: int = 1, gpu: str = "h100", dims: int | None = None,
              tokens_per_doc: float | None = None, prompt_included: bool = False,
              encoder_bytes: int | None = None, from_bundle: Path | None = None,
              read_docs_per_s: float | None = None, ranker: bool = True) -> Plan:
    """Expected read/embed/write time and bundle size (see the module docstring for the model).
    ``ranker``: the bundle carries a learned ranking model (``--dry-run`` knows from the recipe's ``[ranker]``).

    ``tokens_per_doc`` defaults to the measured informal corpus; ``prompt_included`` says it already
    counts the model's document instruction (as ``--dry-run`` measures it with the recipe's tokenizer)."""
    if docs < 1:
        raise ValueError("--docs must be at least 1")
    if gpus < 1:
        raise ValueError("--gpus must be at least 1")
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; one of {', '.join(sorted(MODELS))}")
    if gpu not in GPUS:
        raise ValueError(f"unknown device {gpu!r}; one of {', '.join(sorted(GPUS))}")
    m, dev = MODELS[model], GPUS[gpu]
    dims = m.dims if dims is None else dims
    if not 0 < dims <= m.dims:
        raise ValueError(f"--dims {dims}: {m.name} has {m.dims} dims (Matryoshka keeps 1..{m.dims})")
    per_doc, corpus = dict(BYTES_PER_DOC), MEASURED_CORPUS
    if from_bundle:
        per_doc, corpus = bundle_bytes_per_doc(from_bundle), str(from_bundle)
    tokens = tokens_per_doc or TOKENS_PER_DOC
    extra = 0 if prompt_included else m.prompt_tokens
    tokens_full = tokens + extra
    flops_per_doc = 2 * m.nonembedding * tokens_full
    if gpu == "cpu":
        rate = dev.peak_flops / flops_per_doc
        rate_src = dev.source
    else:
        rate = m.mfu * dev.peak_flops / flops_per_doc
        if model == "minilm":
            how = (f"{'MEASURED' if gpu == 'h200' else 'ESTIMATED from the rate MEASURED on an H200'}: "
                   f"{m.mfu:.1%} MFU (fp16 model, {GPU_MINILM_DOCS_PER_S:,.0f} docs/s at {GPU_MINILM_TOKENS_PER_DOC} tokens)")
        else:
            how = f"ESTIMATED: {m.mfu:.0%} MFU (assumed)"
        rate_src = (f"{how} x {dev.source} / (2 x {m.nonembedding:,} "
                    f"non-embedding parameters x {tokens_full:.0f} tokens)")
    embed_s = docs / (rate * gpus)
    write_s = sum(docs / r for r in WRITE_DOCS_PER_S.values())
    read_rate = read_docs_per_s or READ_DOCS_PER_S
    read_s = 2 * docs / read_rate
    sizes = {
        "binary vectors (HNSW)": round(docs * (dims / 8 + per_doc["hnsw_graph"])),
        "int8 float vectors": docs * (dims + 4),
        "BM25": round(docs * per_doc["bm25"]),
        "metadata": round(docs * per_doc["meta"]),
        "encoder": encoder_bytes if encoder_bytes is not None else m.encoder_bytes,
        **({"learned ranker": round(docs * RANKER_BYTES_PER_DOC)} if ranker else {}),
    }
    sources = {
        "throughput": rate_src,
        "tokens per document": (f"{'given or measured by --dry-run' if tokens_per_doc else 'MEASURED on ' + MEASURED_CORPUS}: {tokens:.1f}"
                                f" + {extra} instruction/end tokens"),
        "read time": (f"{'given or measured by --dry-run' if read_docs_per_s else 'MEASURED on the informal LaTeX sources'}: "
                      f"{read_rate:,.0f} docs/s, paid by the shards and again by the merge"),
        "BM25, metadata, HNSW links per document": f"MEASURED on {corpus}",
        **({"learned ranker": f"MEASURED on {MEASURED_BUNDLE}: its ranker/ per document (docinfo arrays + model)"}
           if ranker else {}),
        "write time": "MEASURED write rates on the 2-core build machine (one machine, after the merge)",
        "encoder": "MEASURED: the recipe's encoder files" if encoder_bytes is not None else m.encoder_source,
        "model": m.source,
    }
    return Plan(docs=docs, model=model, device=dev.name, devices=gpus, dims=dims, tokens_per_doc=tokens_full,
                docs_per_s_per_device=round(rate, 2), read_hours=read_s / 3600, embed_hours=embed_s / 3600,
                write_hours=write_s / 3600, total_hours=(read_s + embed_s + write_s) / 3600, sizes=sizes, total_bytes=sum(sizes.values()),
                sources=sources)


def bundle_bytes_per_doc(bundle: Path) -> dict[str, float]:
    """Per-document BM25, metadata and HNSW-link bytes of a built bundle, from its manifest."""
    from mathlas import bundle as fmt

    m = fmt.read_manifest(Path(bundle))
    size = {k: 0 for k in ("bm25", "meta")}
    for rel, entry in m.files.items():
        top = rel.split("/", 1)[0]
        if top in size:
            size[top] += entry.size
    binary = m.files[fmt.BINARY_INDEX].size
    n = max(m.count, 1)
    return {"bm25": size["bm25"] / n, "meta": size["meta"] / n, "hnsw_graph": binary / n - m.vectors["dims"] / 8}


def bundle_tokens_per_doc(bundle: Path) -> float:
    """Mean tokens of a built bundle's retrieval texts with its own encoder's tokenizer (and document
    prompt), as the embedder counts them."""
    import pyarrow.parquet as pq

    from mathlas import bundle as fmt
    from mathlas.encoder import Encoder

    texts = pq.read_table(Path(bundle) / fmt.META, columns=["text"]).column("text").to_pylist()
    enc = Encoder(Path(bundle) / "encoder")
    counts = [len(ids) for start in range(0, len(texts), 4096)
              for ids in enc.tokenize(texts[start:start + 4096], enc.config.document_prompt)]
    return sum(counts) / max(len(counts), 1)


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n} B"


def _hours(h: float) -> str:
    return f"{h * 60:.1f} min" if h < 1 else f"{h:.1f} h" if h < 48 else f"{h / 24:.1f} days"


def format_plan(plan: Plan, as_json: bool = False) -> str:
    """The plan as text for a person (with every figure's source) or as JSON."""
    if as_json:
        return json.dumps(asdict(plan), indent=1)
    m = MODELS[plan.model]
    lines = [
        f"plan: {plan.docs:,} documents, {m.name} at {plan.dims} dims, {plan.devices} x {plan.device}",
        f"  reading     {_hours(plan.read_hours):>10}   (the corpus, in each shard and again in the merge)",
        f"  embedding   {_hours(plan.embed_hours):>10}   ({plan.docs_per_s_per_device:,.1f} docs/s per device, "
        f"{plan.tokens_per_doc:.0f} tokens/doc)",
        f"  writing     {_hours(plan.write_hours):>10}   (metadata, BM25, HNSW on one machine)",
        f"  total       {_hours(plan.total_hours):>10}",
        "bundle size:",
    ]
    lines += [f"  {k:<22} {_bytes(v):>10}" for k, v in plan.sizes.items()]
    lines += [f"  {'total':<22} {_bytes(plan.total_bytes):>10}", "sources:"]
    lines += [f"  {k}: {v}" for k, v in plan.sources.items()]
    return "\n".join(lines)
