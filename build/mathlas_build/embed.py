"""Document embedding with the bundle's own encoder: IO binding on CUDA or CPU, resumable through the embedding cache.

One code path for both devices. ``DocumentEncoder`` is the runtime ``Encoder`` (same tokenizer, padding,
pooling and ``encoder.json``) whose forward pass goes through onnxruntime IO binding: the padded batch is
bound as ``OrtValue``s on the session's device and the output is allocated there by onnxruntime, so on CUDA
the host<->device copies happen once per batch, outside ``run``. On the CPU provider the same binding calls
run with device ``cpu`` (that is what the tests exercise here). Batches are bucketed by token length:
texts are sorted by length and cut into batches of at most ``batch_size`` texts and, when
``max_batch_tokens`` is set, at most that many padded tokens, so short documents ride in large batches.

``provider`` is ``cpu``, ``cuda`` or ``auto``. ``cuda`` without onnxruntime's CUDA provider (no
onnxruntime-gpu, no driver) falls back to CPU and says so on stderr; ``auto`` takes CUDA when it is there.
On CUDA the encoder's fp16 document model (``fp16_model`` in ``encoder.json``, written by
``export_qwen3``) is used unless the recipe names a ``document_model``. A dynamic int8 model (MiniLM's
``model.onnx``) runs on CUDA no faster than on a CPU (measured on an H200: 630 docs/s, against 7,118 for
its fp16 export): the embedder says so on stderr (docs/building.md, "The document embedder on a GPU").

``embed_documents`` makes one encoder (one onnxruntime session) per call and embeds each distinct text
once. With a cache directory it looks every text up in the embedding cache (``textcache``: one vector
per distinct text, under ``<cache>/texts/<encoder fingerprint>/``) and embeds only the missing texts, in
chunks of ``CHUNK`` (``[options] chunk``), each saved as a cache segment when done: a crashed or
interrupted build loses at most the chunk in flight, an unchanged rebuild embeds nothing, and a rebuild
after a corpus update embeds only the texts that changed. Shards and Ray workers share the cache the
same way. How many texts are cached and how many are to embed, then a progress bar with docs/s, go to
stderr.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from collections.abc import Callable, Sequence

import numpy as np

from mathlas.bundle import sha256_file
from mathlas.encoder import Encoder
from mathlas.errors import EncoderError

CHUNK = 2048
CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"


def document_model_fingerprint(encoder: Encoder) -> str:
    """Hash of ``encoder.json`` and the model file that embeds documents: equal fingerprints, equal vectors."""
    cfg = (encoder.directory / "encoder.json").read_bytes()
    model = sha256_file(encoder.directory / encoder.model_file)
    return hashlib.sha256(cfg + model.encode()).hexdigest()[:16]


def resolve_providers(provider: str, quiet: bool = False) -> list[str]:
    """onnxruntime providers for ``cpu`` | ``cuda`` | ``auto``; ``cuda`` falls back to CPU with a message."""
    import onnxruntime as ort

    if provider not in ("cpu", "cuda", "auto"):
        raise ValueError(f"provider must be cpu, cuda or auto, not {provider!r}")
    available = ort.get_available_providers()
    if provider == "cpu":
        return [CPU]
    if CUDA in available:
        return [CUDA, CPU]
    if provider == "cuda" and not quiet:
        print(f"[embed] onnxruntime {ort.__version__} has no {CUDA} (available: {', '.join(available)}); "
              "embedding on CPU. For GPU embedding install onnxruntime-gpu matching your CUDA version.",
              file=sys.stderr)
    return [CPU]


def dynamic_int8(model: Path) -> bool:
    """Whether an ONNX file is a dynamically quantised int8 model (its graph holds
    ``DynamicQuantizeLinear`` nodes; the op name is stored as plain bytes in the protobuf)."""
    try:
        data = Path(model).read_bytes()
    except OSError:
        return False
    return b"DynamicQuantizeLinear" in data


def length_batches(lengths: Sequence[int], batch_size: int, max_batch_tokens: int | None = None) -> list[np.ndarray]:
    """Indices of ``lengths`` grouped into batches of similar length.

    Sorted by length (stable), then cut greedily: at most ``batch_size`` rows and, with
    ``max_batch_tokens``, at most that many padded tokens (rows x longest row); a single row longer
    than the budget still gets its own batch."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    order = np.argsort(np.asarray(lengths), kind="stable")
    batches, start = [], 0
    while start < len(order):
        stop = start + 1
        while stop < len(order) and stop - start < batch_size:
            if max_batch_tokens and (stop - start + 1) * lengths[order[stop]] > max_batch_tokens:
                break
            stop += 1
        batches.append(order[start:stop])
        start = stop
    return batches


class DocumentEncoder(Encoder):
    """The bundle's encoder for bulk document encoding: IO binding on the session's device, length buckets.

    Everything but the forward pass and the batching is the runtime ``Encoder``'s, so documents are
    tokenized, padded and pooled exactly as the runtime does it for queries."""

    def __init__(self, directory: str | os.PathLike, *, provider: str = "auto", threads: int | None = None,
                 model_file: str | None = None, max_batch_tokens: int | None = None, device_id: int = 0,
                 quiet: bool = False):
        providers = resolve_providers(provider, quiet)
        if model_file is None and providers[0] == CUDA:
            from mathlas.encoder import EncoderConfig

            model_file = EncoderConfig.load(Path(directory) / "encoder.json").extra.get("fp16_model")
        super().__init__(directory, threads=threads, providers=providers, model_file=model_file)
        self.max_batch_tokens = max_batch_tokens
        self.device_id = device_id
        self.quiet = quiet
        self._device: str | None = None

    @property
    def device(self) -> str:
        """``cuda`` or ``cpu``: where inputs are bound and the output is allocated."""
        if self._device is None:
            active = self.active_providers
            self._device = "cuda" if active and active[0] == CUDA else "cpu"
            if self.providers[0] == CUDA and self._device != "cuda" and not self.quiet:
                print(f"[embed] onnxruntime could not start {CUDA} (see its warning above: CUDA/cuDNN "
                      f"libraries?); embedding on CPU", file=sys.stderr)
        return self._device

    def warn_int8_on_cuda(self) -> None:
        """One line on stderr when a dynamic int8 model is about to embed on CUDA (it runs there at about
        a CPU's speed: the quantise/integer-matmul pairs are not what a GPU is fast at)."""
        if self.quiet or self.device != "cuda" or not dynamic_int8(self.directory / self.model_file):
            return
        print(f"[embed] {self.model_file} is a dynamic int8 model: on CUDA it runs about as fast as a CPU "
              "(an H200: 630 docs/s, against 7,118 for an fp16 export of the same encoder). For GPU speed give "
              "the recipe a float document model: python scripts/bench_embed_gpu.py fp16 (docs/building.md)",
              file=sys.stderr, flush=True)

    def _forward(self, batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        import onnxruntime as ort

        feeds, mask = self.batch_inputs(batch)
        device = self.device
        binding = self._session.io_binding()
        # OrtValues on the device; on CPU they wrap the numpy arrays, which stay alive in ``feeds``
        for name, array in feeds.items():
            binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(array, device, self.device_id))
        binding.bind_output(self.config.output, device, self.device_id)
        try:
            self._session.run_with_iobinding(binding)
            (hidden,) = binding.copy_outputs_to_cpu()
        except Exception as e:  # onnxruntime raises its own exception types
            raise EncoderError(f"encoder failed on a batch of {len(batch)} on {device}: {e}") from None
        return hidden.astype(np.float32, copy=False), mask

    def encode(self, texts: Sequence[str], *, prompt: str = "", batch_size: int = 32,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Encode texts in length buckets; rows come back in input order."""
        out = np.zeros((len(texts), self.config.out_dims), dtype=np.float32)
        if not texts:
            return out
        tokens = self.tokenize(texts, prompt)
        for idx in length_batches([len(t) for t in tokens], batch_size, self.max_batch_tokens):
            out[idx] = self._run([tokens[i] for i in idx])
            if progress:
                progress(len(idx))
        return out


def embed_documents(texts: Sequence[str], encoder_dir: Path | None = None, *,
                    encoder: DocumentEncoder | None = None, cache_dir: Path | None = None,
                    threads: int | None = None, provider: str = "auto", batch_size: int = 32,
                    max_batch_tokens: int | None = None, model_file: str | None = None,
                    chunk: int | None = None, quiet: bool = False) -> np.ndarray:
    """Embed ``texts`` as documents; returns float32 unit vectors, one row per text.

    One ``DocumentEncoder`` serves the whole call: ``encoder`` when given, else one made from
    ``encoder_dir`` and the options (``model_file`` picks another model of the encoder directory for
    documents: fp32/fp16, since dynamic int8 quantisation makes a vector depend slightly on its batch
    neighbours). Each distinct text is embedded once. With ``cache_dir`` the vectors come from the
    embedding cache (``textcache``) and only texts it lacks are embedded, ``chunk`` (default ``CHUNK``)
    at a time in text order, each finished chunk saved as one cache segment; batches never straddle
    two chunks. A cached vector is the stored float32 row, so it equals the freshly embedded one."""
    from mathlas_build.textcache import VectorStore, store_directory, text_keys

    chunk_size = chunk or CHUNK
    if encoder is None:
        encoder = DocumentEncoder(encoder_dir, provider=provider, threads=threads or None, model_file=model_file,
                                  max_batch_tokens=max_batch_tokens, quiet=quiet)
    n = len(texts)
    out = np.zeros((n, encoder.config.out_dims), dtype=np.float32)
    keys = text_keys(texts)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    source_row = first[inverse]  # for every row, the first row with the same text
    todo = np.sort(first)  # one row per distinct text, in text order
    if cache_dir:
        store = VectorStore(store_directory(cache_dir, document_model_fingerprint(encoder)), encoder.config.out_dims,
                            quiet=quiet)
        held = store.contains(keys[todo])
        store.read_into(keys[todo[held]], out, todo[held])
        todo = todo[~held]
        cached = f"{np.count_nonzero(held):,} already embedded ({len(store):,} in the cache)"
    else:
        store, cached = None, "no cache"
    if not quiet:
        print(f"[embed] {n:,} texts ({len(first):,} distinct): {cached}, {len(todo):,} to embed",
              file=sys.stderr, flush=True)
    if len(todo):
        save = None if store is None else (lambda rows, vecs: store.add(keys[rows], vecs))
        _embed_rows(encoder, texts, todo, out, chunk_size, batch_size, save=save, quiet=quiet)
    repeated = np.nonzero(source_row != np.arange(n))[0]
    out[repeated] = out[source_row[repeated]]
    return out


def _embed_rows(encoder: DocumentEncoder, texts: Sequence[str], rows: np.ndarray, out: np.ndarray,
                chunk_size: int, batch_size: int, *, save: Callable[[np.ndarray, np.ndarray], object] | None,
                quiet: bool) -> None:
    """Embed ``texts[rows]`` into ``out[rows]``, ``chunk_size`` texts at a time, each chunk handed to
    ``save`` when finished; the model line, a progress bar (its rate is docs/s) and a summary go to stderr."""
    from tqdm import tqdm

    if not quiet:
        print(f"[embed] {encoder.model_file} on {encoder.device} "
              f"(providers {', '.join(encoder.active_providers)}), IO binding", file=sys.stderr, flush=True)
        encoder.warn_int8_on_cuda()
    bar = tqdm(total=len(rows), desc="[embed]", unit="doc", file=sys.stderr, disable=quiet,
               smoothing=0.1, mininterval=1.0)
    t0 = time.perf_counter()
    for start in range(0, len(rows), chunk_size):
        part = rows[start:start + chunk_size]
        vecs = encoder.encode_documents([texts[i] for i in part], batch_size=batch_size, progress=bar.update)
        out[part] = vecs
        if save:
            save(part, vecs)
    bar.close()
    if not quiet:
        dt = time.perf_counter() - t0
        print(f"[embed] {len(rows):,} new documents in {dt:.1f} s ({len(rows) / dt:.1f} docs/s on {encoder.device})",
              file=sys.stderr)
