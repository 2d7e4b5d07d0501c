"""Document embedding with the bundle's own encoder, resumable through a chunk cache.

Texts are embedded in chunks; each finished chunk is saved under the cache directory, named by the
hash of the encoder model and the chunk's texts. A crashed or interrupted build loses at most the
chunk in flight, and an unchanged rebuild embeds nothing. The same code runs on CUDA
(``providers=["CUDAExecutionProvider", ...]``) or CPU; throughput is printed as it runs.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from mathlas.bundle import sha256_file
from mathlas.encoder import Encoder

CHUNK = 2048


def encoder_fingerprint(encoder: Encoder) -> str:
    cfg = (encoder.directory / "encoder.json").read_bytes()
    model = sha256_file(encoder.directory / encoder.model_file)
    return hashlib.sha256(cfg + model.encode()).hexdigest()[:16]


def embed_documents(texts: Sequence[str], encoder_dir: Path, *, cache_dir: Path | None = None,
                    threads: int | None = None, providers: Sequence[str] | None = None,
                    batch_size: int = 32, model_file: str | None = None, quiet: bool = False) -> np.ndarray:
    """Embed ``texts`` as documents; returns float32 unit vectors, one row per text.

    ``model_file`` picks another model of the encoder directory for documents (fp32/fp16: dynamic
    int8 quantisation makes a vector depend slightly on its batch neighbours)."""
    from tqdm import tqdm

    encoder = Encoder(encoder_dir, threads=threads or None, providers=providers, model_file=model_file)
    fp = encoder_fingerprint(encoder)
    if cache_dir:
        cache_dir = Path(cache_dir) / fp
        cache_dir.mkdir(parents=True, exist_ok=True)
    out = np.zeros((len(texts), encoder.config.out_dims), dtype=np.float32)
    bar = tqdm(total=len(texts), desc="[embed]", unit="doc", file=sys.stderr, disable=quiet,
               smoothing=0.1, mininterval=1.0)
    done_new, t0 = 0, time.perf_counter()
    for start in range(0, len(texts), CHUNK):
        chunk = list(texts[start:start + CHUNK])
        path = None
        if cache_dir:
            h = hashlib.sha256("\x1e".join(chunk).encode()).hexdigest()[:24]
            path = cache_dir / f"{h}.npy"
            if path.is_file():
                out[start:start + len(chunk)] = np.load(path)
                bar.update(len(chunk))
                continue
        vecs = encoder.encode_documents(chunk, batch_size=batch_size, progress=bar.update)
        out[start:start + len(chunk)] = vecs
        done_new += len(chunk)
        bar.set_postfix_str(f"{done_new / (time.perf_counter() - t0):.0f} docs/s")
        if path:
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, vecs)
            os.replace(tmp, path)
    bar.close()
    if not quiet and done_new:
        dt = time.perf_counter() - t0
        print(f"[embed] {done_new:,} new documents in {dt:.1f} s ({done_new / dt:.1f} docs/s, "
              f"providers {encoder.active_providers})", file=sys.stderr)
    return out
