"""The embedding cache: a content-addressed store of document vectors, one per distinct retrieval text.

Every build given a cache directory (``--cache``, default ``work/embed-cache``; single builds, shards,
Ray workers) embeds only the texts the store lacks (``embed.embed_documents``). Keyed by the text
itself, it survives a corpus update: a new Mathlib commit or a reader change alters a few texts and
shifts every position, and only the altered texts are embedded again. Layout::

    <cache>/texts/<encoder fingerprint>/seg-<24 hex>.npz
        keys     (n, 16) uint8    the first 16 bytes of the sha256 of each text (UTF-8)
        vectors  (n, d)  float32  their vectors, row for row

The fingerprint (``embed.document_model_fingerprint``) covers ``encoder.json`` and the model file that embeds
the documents, so another model or another export never reads these vectors.

Writes are safe for several processes sharing one store (shards on one machine, Ray workers on a
shared filesystem): a segment is named by the sha256 of its keys, so two different segments cannot
get the same name, and two processes that embed the very same texts write segments that stand for
each other (replacing one with the other loses nothing). A segment is written whole under a unique
temporary name (``mkstemp``: ``.seg-*.tmp``, never read) and renamed into place, so a crash never
leaves a half segment that looks finished. Stores written before segments were named by their keys
(``seg-000000.npz``, ...) are read the same way.

Opening a store reads only the keys (16 bytes a text, in one sorted array, not a dict); vectors are
read when asked for, one segment at a time, so a shard of a large corpus reads only the segments that
hold its texts. A segment that cannot be read or has another shape is skipped with a message (its
texts are embedded again).
"""
from __future__ import annotations

import hashlib
import os
import sys
import zipfile
from pathlib import Path
from collections.abc import Iterable

import numpy as np

from mathlas.atomic import atomic_file
from mathlas.errors import MathlasError

STORE = "texts"
KEY = np.dtype("S16")  # a key as one fixed-width numpy scalar: sortable and searchable


def text_key(text: str) -> bytes:
    """The store key of a retrieval text: the first 16 bytes of its sha256."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def text_keys(texts: Iterable[str]) -> np.ndarray:
    """Keys of ``texts`` as a ``KEY`` array, one per text."""
    return np.frombuffer(b"".join(map(text_key, texts)), dtype=KEY)


def store_directory(cache_dir: str | os.PathLike, fingerprint: str) -> Path:
    """The store of one encoder under a cache directory: ``<cache>/texts/<fingerprint>``."""
    return Path(cache_dir) / STORE / fingerprint


def _header(zf: zipfile.ZipFile, name: str) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype of one array of an ``.npz`` without reading its data."""
    with zf.open(name) as f:
        major, _ = np.lib.format.read_magic(f)
        read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(f)
    return shape, dtype


def _read_keys(path: Path, dims: int) -> np.ndarray:
    """The keys of a segment, after checking that its vectors have ``dims`` columns, one row a key."""
    with zipfile.ZipFile(path) as zf:
        vshape, vdtype = _header(zf, "vectors.npy")
        with zf.open("keys.npy") as f:
            keys = np.lib.format.read_array(f)
    if keys.ndim != 2 or keys.shape[1] != 16 or keys.dtype != np.uint8:
        raise ValueError(f"keys of shape {keys.shape} {keys.dtype}, expected (n, 16) uint8")
    if vshape != (len(keys), dims) or vdtype != np.float32:
        raise ValueError(f"vectors of shape {vshape} {vdtype}, expected ({len(keys)}, {dims}) float32")
    return np.ascontiguousarray(keys).view(KEY).ravel()


class VectorStore:
    """The segments of one store directory: which texts it holds, and their vectors on demand."""

    def __init__(self, directory: str | os.PathLike, dims: int, *, quiet: bool = False):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dims = dims
        self._paths: list[Path] = []
        self._keys, self._seg, self._row = np.empty(0, KEY), np.empty(0, np.int32), np.empty(0, np.int32)
        self._pending: list[tuple[np.ndarray, int]] = []  # (keys, segment number) not in the index yet
        for path in sorted(self.dir.glob("seg-*.npz")):
            try:
                k = _read_keys(path, dims)
            except Exception as e:  # noqa: BLE001 - a damaged segment is embedded again, not fatal
                if not quiet:
                    print(f"[embed] ignoring cache segment {path.name}: {e}", file=sys.stderr)
                continue
            self._pending.append((k, len(self._paths)))
            self._paths.append(path)

    def _index(self) -> None:
        """Fold the segments not indexed yet into the sorted key index (lazily: a build that only
        adds segments after its lookups never pays for re-sorting)."""
        if not self._pending:
            return
        keys = [self._keys, *(k for k, _ in self._pending)]
        segs = [self._seg, *(np.full(len(k), s, np.int32) for k, s in self._pending)]
        rows = [self._row, *(np.arange(len(k), dtype=np.int32) for k, _ in self._pending)]
        self._pending = []
        all_keys = np.concatenate(keys)
        order = np.argsort(all_keys, kind="stable")
        self._keys, self._seg, self._row = all_keys[order], np.concatenate(segs)[order], np.concatenate(rows)[order]

    def __len__(self) -> int:
        """Distinct texts in the store."""
        self._index()
        return int(len(self._keys) - np.count_nonzero(self._keys[1:] == self._keys[:-1]))

    def _positions(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self._index()
        pos = np.searchsorted(self._keys, keys)
        inside = pos < len(self._keys)
        found = np.zeros(len(keys), dtype=bool)
        found[inside] = self._keys[pos[inside]] == keys[inside]
        return found, pos

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """For each key (a ``KEY`` array, see ``text_keys``): whether the store holds its vector."""
        return self._positions(keys)[0]

    def read_into(self, keys: np.ndarray, out: np.ndarray, rows: np.ndarray) -> None:
        """``out[rows[j]] = vector of keys[j]`` for every key (all must be held), one segment read at a time."""
        found, pos = self._positions(keys)
        if not found.all():
            raise KeyError(f"{np.count_nonzero(~found)} keys are not in the store {self.dir}")
        seg, srow = self._seg[pos], self._row[pos]
        for s in np.unique(seg):
            path = self._paths[s]
            take = np.nonzero(seg == s)[0]
            try:
                with np.load(path) as z:
                    out[rows[take]] = z["vectors"][srow[take]]
            except Exception as e:  # noqa: BLE001 - the keys were readable, the vectors are not
                raise MathlasError(f"cache segment {path} is damaged ({e}): delete it and build again") from None

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> Path:
        """Write one segment (temporary name, then rename) and index it; returns its path."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(keys), self.dims):
            raise ValueError(f"{len(keys)} keys need vectors of shape ({len(keys)}, {self.dims}), got {vectors.shape}")
        keys = np.ascontiguousarray(keys, dtype=KEY)
        path = self.dir / f"seg-{hashlib.sha256(keys.tobytes()).hexdigest()[:24]}.npz"
        with atomic_file(path, prefix=".seg-", suffix=".tmp") as f:
            os.fchmod(f.fileno(), 0o644)  # mkstemp makes 0600; the cache is shared like any build output
            np.savez(f, keys=keys.view(np.uint8).reshape(len(keys), 16), vectors=vectors)
        if path in self._paths:  # the same texts again (another process or run wrote them too)
            return path
        self._pending.append((keys, len(self._paths)))
        self._paths.append(path)
        return path
