"""Sharded, resumable embedding and the merge that turns shards into one bundle.

How the corpus is cut: every shard reads the whole recipe (reading is cheap next to embedding) and
takes a contiguous range of the documents in bundle row order (the order of a single-process build).
The range is made of whole embedding chunks (``[options] chunk``, default ``embed.CHUNK`` = 2048):
with C chunks, shard ``i/n`` takes chunks ``[i*C//n, (i+1)*C//n)``. Because shard boundaries are
chunk boundaries, every batch a shard embeds is the batch a single-process build embeds, so the merged
bundle equals the single-process bundle. (A text that occurs twice is embedded once, so a corpus with
repeated texts shifts the later chunks of a single build against a shard's, and their vectors may differ
in the last bits, as any other batch neighbours make them; builds that share a cache share the vectors.)
Shards, Ray workers and single builds share the embedding cache (``textcache``: one vector per distinct
text), several processes writing into it at once.

A shard directory (``<root>/shard-00003-of-00008/``)::

    vectors.npy    float32 unit vectors of its documents, in row order
    ids.json       their document ids, in the same order
    shard.json     written last: format, shard/of, start/stop rows, count, corpus_count, fingerprints
                   (recipe, corpus, encoder), dims, model file, device, docs/s, and size + sha256
                   of vectors.npy and ids.json

A shard is *finished* when ``shard.json`` exists, every checksum matches and its fingerprints are those
of the current recipe, corpus and encoder; a rerun skips it. A directory without ``shard.json`` or with a
bad checksum is *torn* and is built again (the embedding cache makes that cheap). Fingerprints:

    recipe   sha256 of the recipe (canonical JSON of the TOML) and the mathlas version
    corpus   sha256 of every document id in row order, and the per-source counts and licenses
    encoder  ``embed.document_model_fingerprint``: encoder.json + the document model's sha256

``merge_shards`` reads the corpus again (for the metadata and BM25 text), checks that the shards agree
on all three fingerprints and cover the corpus exactly once (no shard missing or given twice, no id
missing, duplicated or foreign, ids in row order), and writes the bundle with the same writer call as
a single-process build.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from datetime import datetime, UTC
from pathlib import Path
from collections.abc import Iterable, Sequence

import numpy as np

from mathlas.errors import MathlasError

SHARD_FORMAT = 1
SHARD_MANIFEST = "shard.json"
VECTORS = "vectors.npy"
IDS = "ids.json"
MERGE_COPY_ROWS = 65_536  # rows copied at a time into the merge's memory-mapped vectors
_NAME = re.compile(r"^shard-(\d+)-of-(\d+)$")


class ShardError(MathlasError):
    """A shard is torn, stale, or a set of shards does not cover the corpus exactly once."""


def parse_shard(spec: str) -> tuple[int, int]:
    """``"i/n"`` -> ``(i, n)`` with ``0 <= i < n``."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", spec or "")
    if not m:
        raise ValueError(f"--shard wants I/N (e.g. 0/4), not {spec!r}")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 0 <= i < n:
        raise ValueError(f"--shard {spec}: need 0 <= I < N (shards are numbered 0..N-1)")
    return i, n


def shard_name(index: int, count: int) -> str:
    return f"shard-{index:05d}-of-{count:05d}"


def shard_rows(n_docs: int, index: int, count: int, chunk: int) -> tuple[int, int]:
    """Rows ``[start, stop)`` of shard ``index`` of ``count``: whole chunks, as evenly spread as possible."""
    chunks = -(-n_docs // chunk)
    first, last = index * chunks // count, (index + 1) * chunks // count
    return min(first * chunk, n_docs), min(last * chunk, n_docs)


def _sha256(path: Path) -> str:
    from mathlas.bundle import sha256_file

    return sha256_file(path)


def recipe_fingerprint(recipe) -> str:
    from mathlas import __version__

    text = json.dumps({"recipe": recipe.raw, "mathlas": __version__}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def corpus_fingerprint(ids: Sequence[str], sources: dict) -> str:
    h = hashlib.sha256(json.dumps(sources, sort_keys=True).encode())
    for i in ids:
        h.update(i.encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def document_encoder_fingerprint(recipe, provider: str) -> tuple[str, str]:
    """(fingerprint, model file) of the model that will embed the documents on ``provider``."""
    from mathlas_build.embed import DocumentEncoder, document_model_fingerprint

    enc = DocumentEncoder(recipe.encoder, provider=provider, model_file=recipe.document_model, quiet=True)
    return document_model_fingerprint(enc), enc.model_file


def read_shard(path: Path) -> dict:
    """The manifest of a finished shard; raises ``ShardError`` saying why a shard is torn."""
    path = Path(path)
    mpath = path / SHARD_MANIFEST
    if not mpath.is_file():
        raise ShardError(f"{path}: no {SHARD_MANIFEST} (torn: the shard never finished)")
    try:
        m = json.loads(mpath.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ShardError(f"{mpath}: unreadable ({e}); torn") from None
    if m.get("format") != SHARD_FORMAT:
        raise ShardError(f"{mpath}: shard format {m.get('format')!r}, this mathlas-build writes {SHARD_FORMAT}")
    for name, entry in m["files"].items():
        f = path / name
        if not f.is_file():
            raise ShardError(f"{path}: {name} is missing (torn)")
        if f.stat().st_size != entry["size"] or _sha256(f) != entry["sha256"]:
            raise ShardError(f"{path}: {name} does not match its checksum in {SHARD_MANIFEST} (torn)")
    return m


def _write_shard(dest: Path, manifest: dict, ids: list[str], vectors: np.ndarray) -> None:
    """Files into a temporary sibling, ``shard.json`` last, then one rename."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    from mathlas_build import scratch

    scratch.sweep(dest.parent, f".{dest.name}.tmp-", quiet=True)   # a killed run's, on this machine only
    tmp = scratch.make(dest.parent, f".{dest.name}.tmp-")
    try:
        np.save(tmp / VECTORS, np.ascontiguousarray(vectors, dtype=np.float32))
        (tmp / IDS).write_text(json.dumps(ids, ensure_ascii=False), encoding="utf-8")
        manifest["files"] = {n: {"size": (tmp / n).stat().st_size, "sha256": _sha256(tmp / n)} for n in (VECTORS, IDS)}
        (tmp / SHARD_MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def build_shard(recipe, root: Path, index: int, count: int, *, provider: str = "auto", threads: int | None = None,
                batch_size: int | None = None, max_batch_tokens: int | None = None,
                cache_dir: Path | None = None, quiet: bool = False) -> tuple[Path, bool]:
    """Embed shard ``index`` of ``count`` into ``root``; returns (shard directory, whether it was built now).

    A finished shard of the same recipe, corpus and encoder is left as it is; a torn or stale one is
    built again."""
    from mathlas_build.pipeline import chunk_size, embed_texts, read_corpus
    from mathlas_build.retrieval_text import retrieval_text

    def say(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    if not 0 <= index < count:
        raise ValueError(f"shard {index}/{count}: need 0 <= index < count")
    from mathlas_build.writer import check_folder

    check_folder(Path(root), "--shards-dir")  # before the corpus is read
    if cache_dir is not None:
        check_folder(Path(cache_dir), "--cache")
    docs, sources = read_corpus(recipe, quiet)
    ids = [d.id for d in docs]
    enc_fp, model_file = document_encoder_fingerprint(recipe, provider)
    fps = {"recipe": recipe_fingerprint(recipe), "corpus": corpus_fingerprint(ids, sources), "encoder": enc_fp}
    dest = Path(root) / shard_name(index, count)
    label = f"{index}/{count}"
    if dest.exists():
        try:
            old = read_shard(dest)
        except ShardError as e:
            say(f"[shard] {label}: {e}; building it again")
        else:
            if old["fingerprints"] == fps:
                say(f"[shard] {label}: finished already ({old['count']:,} documents), skipped")
                return dest, False
            changed = ", ".join(k for k in fps if old["fingerprints"].get(k) != fps[k])
            say(f"[shard] {label}: built from another {changed}; building it again")
    chunk = chunk_size(recipe)
    start, stop = shard_rows(len(docs), index, count, chunk)
    say(f"[shard] {label}: documents {start:,}..{stop:,} of {len(docs):,}")
    texts = [retrieval_text(d) for d in docs[start:stop]]
    t0 = time.perf_counter()
    if texts:
        vectors = embed_texts(recipe, texts, threads=threads, provider=provider, batch_size=batch_size,
                              max_batch_tokens=max_batch_tokens, cache_dir=cache_dir, quiet=quiet)
    else:
        from mathlas.encoder import EncoderConfig

        vectors = np.zeros((0, EncoderConfig.load(recipe.encoder / "encoder.json").out_dims), np.float32)
    seconds = time.perf_counter() - t0
    manifest = {
        "format": SHARD_FORMAT, "name": recipe.name, "version": recipe.version, "shard": index, "of": count,
        "start": start, "stop": stop, "count": stop - start, "corpus_count": len(docs), "chunk": chunk,
        "fingerprints": fps, "dims": int(vectors.shape[1]), "model_file": model_file, "provider": provider,
        "embed_seconds": round(seconds, 3), "docs_per_s": round((stop - start) / seconds, 2) if seconds else None,
        "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    _write_shard(dest, manifest, ids[start:stop], vectors)
    say(f"[shard] {label}: {stop - start:,} documents written to {dest}")
    return dest, True


def find_shards(paths: Iterable[Path]) -> list[Path]:
    """Shard directories among ``paths``: each one a shard directory or a directory holding ``shard-*`` ones."""
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.is_dir():
            raise ShardError(f"{p}: no such shard directory")
        if (p / SHARD_MANIFEST).exists() or _NAME.match(p.name):
            found.append(p)
            continue
        inner = sorted(q for q in p.iterdir() if q.is_dir() and _NAME.match(q.name))
        if not inner:
            raise ShardError(f"{p}: neither a shard nor a directory of shard-I-of-N directories")
        found.extend(inner)
    return found


def check_coverage(manifests: Sequence[dict], shard_ids: Sequence[list[str]], corpus_ids: Sequence[str]) -> None:
    """Raise ``ShardError`` unless the shards hold every corpus id exactly once, in row order."""
    owner: dict[str, int] = {}
    for m, ids in zip(manifests, shard_ids):
        if len(ids) != m["count"]:
            raise ShardError(f"shard {m['shard']}/{m['of']}: {len(ids)} ids for count {m['count']}")
        for i in ids:
            if i in owner:
                raise ShardError(f"document {i!r} is in shard {owner[i]}/{m['of']} and in shard {m['shard']}/{m['of']}")
            owner[i] = m["shard"]
    corpus = set(corpus_ids)
    missing = [i for i in corpus_ids if i not in owner]
    if missing:
        raise ShardError(f"{len(missing):,} corpus documents are in no shard (first: {missing[0]!r}); "
                         "build the missing shards")
    foreign = [i for i in owner if i not in corpus]
    if foreign:
        raise ShardError(f"{len(foreign):,} shard documents are not in the corpus (first: {foreign[0]!r}); "
                         "the shards were built from another corpus")
    merged = [i for ids in shard_ids for i in ids]
    if merged != list(corpus_ids):
        k = next(j for j, (a, b) in enumerate(zip(merged, corpus_ids)) if a != b)
        raise ShardError(f"shard ids are out of row order at row {k} ({merged[k]!r}, the corpus has "
                         f"{corpus_ids[k]!r}); rebuild the shards")


def load_shards(paths: Iterable[Path]) -> list[tuple[Path, dict]]:
    """Finished shards of one set, sorted by index: all torn, mixed-set, missing and doubled shards refused."""
    shards = [(p, read_shard(p)) for p in find_shards(paths)]
    if not shards:
        raise ShardError("no shards given")
    first = shards[0][1]
    for p, m in shards:
        if m["of"] != first["of"]:
            raise ShardError(f"{p} is shard {m['shard']}/{m['of']}, {shards[0][0]} is "
                             f"{first['shard']}/{first['of']}: shards of different splits")
        for key in ("recipe", "corpus", "encoder"):
            if m["fingerprints"][key] != first["fingerprints"][key]:
                raise ShardError(f"{p} and {shards[0][0]} were built with different {key}s "
                                 f"({m['fingerprints'][key]} vs {first['fingerprints'][key]})")
    seen: dict[int, Path] = {}
    for p, m in shards:
        if m["shard"] in seen:
            raise ShardError(f"shard {m['shard']}/{m['of']} given twice: {seen[m['shard']]} and {p}")
        seen[m["shard"]] = p
    n = first["of"]
    missing = [f"{i}/{n}" for i in range(n) if i not in seen]
    if missing:
        raise ShardError(f"missing shard(s) {', '.join(missing)}: build them with --shard I/{n}")
    return sorted(shards, key=lambda s: s[1]["shard"])


def merge_shards(recipe, paths: Iterable[Path], out: Path, *, force: bool = False, quiet: bool = False) -> Path:
    """Check a complete set of shards against the recipe's corpus and write the bundle."""
    from mathlas_build.pipeline import check_paths, read_corpus, write_recipe_bundle
    from mathlas_build.retrieval_text import name_field, retrieval_text

    check_paths(out, force=force)  # before the corpus is read again
    shards = load_shards(paths)
    fps = shards[0][1]["fingerprints"]
    if fps["recipe"] != recipe_fingerprint(recipe):
        raise ShardError(f"the shards were built from another recipe (or mathlas version) than {recipe.path}")
    docs, sources = read_corpus(recipe, quiet)
    ids = [d.id for d in docs]
    if fps["corpus"] != corpus_fingerprint(ids, sources):
        raise ShardError(f"the corpus of {recipe.path} changed since the shards were built; rebuild them")
    shard_ids = [json.loads((p / IDS).read_text(encoding="utf-8")) for p, _ in shards]
    check_coverage([m for _, m in shards], shard_ids, ids)
    dims = {m["dims"] for _, m in shards}
    if len(dims) != 1:
        raise ShardError(f"shards disagree on vector dims: {sorted(dims)}")
    if not quiet:
        print(f"[merge] {len(shards)} shards, {len(ids):,} documents, encoder {fps['encoder']}", file=sys.stderr)
    texts = [retrieval_text(d) for d in docs]
    names = [name_field(d) for d in docs]
    # the shards' vectors concatenated into a memory-mapped file beside the output, not into RAM
    # (9.2M x 1024 float32 is 38 GB): the writer reads it in chunks (write_vectors)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{Path(out).name}.vectors-", suffix=".npy", dir=Path(out).parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        vectors = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(len(ids), dims.pop()))
        row = 0
        for (p, _), part_ids in zip(shards, shard_ids):
            part = np.load(p / VECTORS, mmap_mode="r")
            if part.shape != (len(part_ids), vectors.shape[1]):
                raise ShardError(f"{p / VECTORS} holds {part.shape} vectors for {len(part_ids):,} documents")
            for a in range(0, len(part), MERGE_COPY_ROWS):
                block = part[a:a + MERGE_COPY_ROWS]
                vectors[row:row + len(block)] = block
                row += len(block)
        vectors.flush()
        return write_recipe_bundle(recipe, docs, sources, texts, names, vectors, out, force=force, quiet=quiet)
    finally:
        tmp.unlink(missing_ok=True)
