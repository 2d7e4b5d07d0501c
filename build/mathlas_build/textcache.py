"""A content-addressed store of document vectors: one vector per distinct retrieval text.

Rebuilding a bundle after a corpus update (a new Mathlib commit, a reader that now emits structure
fields) changes a few texts and shifts every position; a store keyed by the text itself embeds only
the texts it has not seen. Layout, under ``<store>/<encoder fingerprint>/``::

    seg-000000.npz   keys: (n, 16) uint8 (sha256 of the text, first 16 bytes), vectors: (n, d) float32

Segments are written whole to a temporary name and renamed, one per embedded chunk, so an interrupted
run keeps every finished chunk and never leaves a half-written segment that looks finished.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

CHUNK = 4096


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


class VectorStore:
    def __init__(self, directory: Path, dims: int):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dims = dims
        self._index: dict[bytes, tuple[int, int]] = {}
        self._segments: list[np.ndarray] = []
        for path in sorted(self.dir.glob("seg-*.npz")):
            try:
                with np.load(path) as z:
                    keys, vecs = z["keys"], z["vectors"]
            except Exception as e:  # noqa: BLE001 - a damaged segment is re-embedded, not fatal
                print(f"[embed] ignoring unreadable cache segment {path.name}: {e}", file=sys.stderr)
                continue
            if vecs.ndim != 2 or vecs.shape[1] != dims or len(keys) != len(vecs):
                print(f"[embed] ignoring cache segment {path.name} of another shape", file=sys.stderr)
                continue
            seg = len(self._segments)
            self._segments.append(vecs)
            for row, k in enumerate(keys):
                self._index[k.tobytes()] = (seg, row)

    def __len__(self) -> int:
        return len(self._index)

    def get(self, key: bytes) -> np.ndarray | None:
        hit = self._index.get(key)
        return None if hit is None else self._segments[hit[0]][hit[1]]

    def add(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        n = len(list(self.dir.glob("seg-*.npz")))
        while (self.dir / f"seg-{n:06d}.npz").exists():
            n += 1
        path = self.dir / f"seg-{n:06d}.npz"
        tmp = self.dir / f".seg-{n:06d}.{os.getpid()}.tmp.npz"
        karr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 16)
        np.savez(tmp, keys=karr, vectors=np.asarray(vectors, dtype=np.float32))
        os.replace(tmp, path)
        seg = len(self._segments)
        self._segments.append(np.asarray(vectors, dtype=np.float32))
        for row, k in enumerate(keys):
            self._index[k] = (seg, row)


def embed_with_store(texts: Sequence[str], dims: int, store_dir: Path,
                     embed: Callable[[list[str]], np.ndarray], *, quiet: bool = False) -> np.ndarray:
    """Vectors for ``texts`` (one row each); only texts absent from the store go through ``embed``."""
    store = VectorStore(store_dir, dims)
    keys = [text_key(t) for t in texts]
    todo: dict[bytes, str] = {}
    for k, t in zip(keys, texts):
        if store.get(k) is None and k not in todo:
            todo[k] = t
    if not quiet:
        print(f"[embed] {len(texts):,} texts, {len(texts) - len(todo):,} already embedded "
              f"({len(store):,} in the store), {len(todo):,} to embed", file=sys.stderr, flush=True)
    pending = list(todo.items())
    # shortest first inside each chunk keeps padding low; chunks themselves go in text order
    t0, done = time.perf_counter(), 0
    for start in range(0, len(pending), CHUNK):
        part = pending[start:start + CHUNK]
        vecs = embed([t for _, t in part])
        store.add([k for k, _ in part], vecs)
        done += len(part)
        if not quiet:
            dt = time.perf_counter() - t0
            print(f"[embed] stored {done:,}/{len(pending):,} ({done / dt:.0f} docs/s)", file=sys.stderr, flush=True)
    out = np.empty((len(texts), dims), dtype=np.float32)
    for i, k in enumerate(keys):
        v = store.get(k)
        if v is None:  # cannot happen unless the store directory was changed underneath us
            raise RuntimeError("vector store lost an entry during the build; rerun")
        out[i] = v
    return out
