"""Write a bundle directory (format of ``mathlas.bundle``): everything into a temporary directory,
the manifest last, then one atomic rename. A crash leaves at most a ``.tmp-`` directory behind,
never a directory that looks like a finished bundle, and the next build beside it removes that
(``mathlas_build.scratch``: only the folders of a process of this machine that no longer runs).
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import asdict
from datetime import datetime, UTC
from pathlib import Path
from typing import Any
from collections.abc import Sequence

import numpy as np

from mathlas import bundle as fmt
from mathlas_build.document import Document
from mathlas_build.retrieval_text import alias_field, context_field, gloss_field, lexical_text


def _say(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


# From this many documents on, write_meta also writes META_ARROW: the runtime memory-maps it instead
# of decompressing the parquet into RAM (~2.4 KB of private memory per document), at 4x the disk.
META_ARROW_MIN_ROWS = 100_000
# Rows per Arrow record batch (a batch's string column must stay under 2 GB).
META_ARROW_BATCH_ROWS = 1 << 17


def write_meta(docs: Sequence[Document], texts: Sequence[str], path: Path, *, arrow: bool | None = None) -> None:
    """The metadata table as ``path`` (parquet) and, when ``arrow`` (default: from
    ``META_ARROW_MIN_ROWS`` documents on), as ``fmt.META_ARROW`` beside it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols: dict[str, list[Any]] = {c: [] for c in fmt.META_COLUMNS}
    for d, text in zip(docs, texts):
        row = asdict(d)
        row["text"] = text
        for c in fmt.META_COLUMNS:
            cols[c].append(row[c])
    optional = {c: [d.extra.get(c) for d in docs] for c in fmt.OPTIONAL_META_COLUMNS
                if any(c in d.extra for d in docs)}
    table = pa.table({**cols, **optional})
    del cols, optional
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, compression="zstd", compression_level=9, row_group_size=8192)
    if len(docs) >= META_ARROW_MIN_ROWS if arrow is None else arrow:
        arrow_path = path.parent / Path(fmt.META_ARROW).name
        with pa.OSFile(str(arrow_path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
            out.write_table(table, max_chunksize=META_ARROW_BATCH_ROWS)  # uncompressed: memory-mappable


def _check_priors(fusion: dict | None, meta: Path) -> None:
    """Every prior in ``fusion["priors"]`` must name a numeric metadata column of this bundle."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    priors = (fusion or {}).get("priors") or {}
    if not priors:
        return
    schema = pq.read_schema(meta)
    for name, p in priors.items():
        column = p.get("column") if isinstance(p, dict) else None
        if column not in schema.names:
            raise ValueError(f"fusion.priors.{name}: column {column!r} is not in the metadata "
                             f"(columns: {', '.join(schema.names)})")
        t = schema.field(column).type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_null(t)):
            raise ValueError(f"fusion.priors.{name}: column {column!r} is {t}, not a number")


# tantivy's indexing arena: one thread fills it and flushes a segment. 200 MB holds some 5 x 10^5
# TheoremSearch-sized documents, so the default bundle is one segment and 10^6+ documents are several.
BM25_HEAP_BYTES = 200_000_000


def write_bm25(docs: Sequence[Document], texts: Sequence[str], names: Sequence[str], path: Path, *,
               heap_bytes: int = BM25_HEAP_BYTES, identifiers: str = "split") -> None:
    """The tantivy index of ``fmt.BM25_DIR``. One thread adds the documents in key order; when they
    outgrow ``heap_bytes`` tantivy writes several segments (one writer thread cannot address more than
    4 GB, so 10^7 documents always do), and the runtime reads a hit's key from the ``key`` fast field
    instead of taking tantivy's doc id for it."""
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("key", stored=True, indexed=False, fast=True)
    for field in fmt.LEXICAL_FIELDS:  # all fields are indexed; the manifest says which a query uses
        sb.add_text_field(field, stored=False, tokenizer_name=fmt.LEXICAL_TOKENIZER)
    sb.add_text_field("source", stored=False, tokenizer_name="raw")
    sb.add_text_field("kind", stored=False, tokenizer_name="raw")
    schema = sb.build()
    path.mkdir(parents=True)
    index = tantivy.Index(schema, path=str(path))
    writer = index.writer(heap_size=heap_bytes, num_threads=1)
    for key, (d, text, name) in enumerate(zip(docs, texts, names)):
        writer.add_document(tantivy.Document(
            key=key, name=fmt.lexical_words(name, identifiers), title=fmt.lexical_words(d.title, identifiers),
            text=fmt.lexical_words(lexical_text(d, text), identifiers),
            alias=fmt.lexical_words(alias_field(d), identifiers),
            context=fmt.lexical_words(context_field(d), identifiers),
            gloss=fmt.lexical_words(gloss_field(d), identifiers), source=d.source, kind=d.kind))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    if searcher.num_docs != len(docs):
        raise RuntimeError(f"BM25 index has {searcher.num_docs} documents, expected {len(docs)}")
    for lock in path.glob(".tantivy-*.lock"):
        lock.unlink()


def quantize_i8(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise symmetric int8: ``vectors[i] ~= q[i] * scale[i]``."""
    peak = np.abs(vectors).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(vectors / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale


# Rows quantised at a time: a chunk's float32 temporaries are ~4 x 128 MB at 1024 dims, whatever N is.
VECTOR_CHUNK_ROWS = 32_768


def write_vectors(vectors: np.ndarray, root: Path, *, connectivity: int = 16, expansion_add: int = 128,
                  codes: str = "sign") -> dict:
    """The int8 vectors, their scales, the centre and the binary HNSW index of ``vectors``.

    ``codes`` picks the binary codes (``fmt.BINARY_CODES``): "sign" bits, or "thermometer3" with the
    per-dimension thresholds written to ``fmt.VECTOR_THRESHOLDS``. Works through the rows in chunks,
    so ``vectors`` may be a memory map larger than RAM: besides the HNSW index the writer holds one
    chunk's float32 temporaries and the packed codes (dims / 8 bytes a row for signs, 3x that for
    thermometer codes), never a full-size float32 copy (15 GB at 1M x 1024 before it chunked).
    """
    from mathlas.bundle import usearch_index_class

    Index = usearch_index_class()
    (root / "vectors").mkdir(parents=True, exist_ok=True)
    n, dims = vectors.shape
    chunks = [(a, min(n, a + VECTOR_CHUNK_ROWS)) for a in range(0, n, VECTOR_CHUNK_ROWS)]
    bits = fmt.code_bits(dims, codes)
    total, total_sq = np.zeros(dims, np.float64), np.zeros(dims, np.float64)
    for a, b in chunks:  # one pass for the centre and (thermometer codes) each dimension's spread
        block = np.asarray(vectors[a:b], dtype=np.float32)  # float32 rows, float64 sums: memory as before
        total += block.sum(axis=0, dtype=np.float64)
        if codes == "thermometer3":
            total_sq += np.square(block).sum(axis=0, dtype=np.float64)
    mean = total / n if n else np.zeros(dims)
    center = mean.astype(np.float32)
    np.save(root / fmt.VECTOR_CENTER, center)
    thresholds = None
    if codes == "thermometer3":
        sd = np.sqrt(np.maximum(total_sq / n - np.square(mean), 0.0)) if n else np.zeros(dims)
        thresholds = (fmt.THERMOMETER_SD * sd).astype(np.float32)
        np.save(root / fmt.VECTOR_THRESHOLDS, thresholds)
    # written in place (a memory map cannot be empty: an empty bundle's file is written whole)
    q = (np.lib.format.open_memmap(root / fmt.FLOAT_VECTORS, mode="w+", dtype=np.int8, shape=(n, dims)) if n
         else np.zeros((0, dims), np.int8))
    scale = np.empty(n, np.float32)
    packed = np.empty((n, (bits + 7) // 8), np.uint8)
    for a, b in chunks:
        block = np.asarray(vectors[a:b], dtype=np.float32)
        q[a:b], scale[a:b] = quantize_i8(block)
        packed[a:b] = fmt.binary_codes(block, center, thresholds)
    if n:
        q.flush()
    else:
        np.save(root / fmt.FLOAT_VECTORS, q)
    del q
    np.save(root / fmt.FLOAT_SCALES, scale)
    index = Index(ndim=bits, metric="hamming", dtype="b1", connectivity=connectivity, expansion_add=expansion_add)
    if n:
        index.add(np.arange(n, dtype=np.uint64), packed)
    index.save(str(root / fmt.BINARY_INDEX))
    return {"dims": dims, "float_dtype": "i8", "binary_metric": "hamming",
            "hnsw_connectivity": connectivity, "hnsw_expansion_add": expansion_add,
            **({"binary_codes": codes} if codes != "sign" else {})}


def copy_encoder(encoder_dir: Path, dest: Path) -> dict:
    import json

    dest.mkdir(parents=True)
    config = json.loads((encoder_dir / "encoder.json").read_text(encoding="utf-8"))
    model_file = config.get("model_file", "model.onnx")
    for name in ("encoder.json", "tokenizer.json", model_file, model_file + "_data"):
        if (encoder_dir / name).is_file():
            shutil.copyfile(encoder_dir / name, dest / name)
    return config


def copy_reranker(reranker_dir: Path, dest: Path, *, top_n: int = fmt.DEFAULT_RERANK_TOP_N,
                  default: bool = False) -> dict:
    """Copy a reranker directory (``mathlas-build train-reranker``'s export) into ``dest``; returns the
    manifest's ``reranker`` block."""
    import json

    reranker_dir = Path(reranker_dir)
    missing = [f for f in fmt.RERANKER_FILES if not (reranker_dir / f).is_file()]
    if missing:
        raise ValueError(f"{reranker_dir} is not a reranker directory: no {', '.join(missing)}")
    meta = json.loads((reranker_dir / "reranker.json").read_text(encoding="utf-8"))
    if not isinstance(meta.get("max_tokens"), int):
        raise ValueError(f"{reranker_dir / 'reranker.json'}: max_tokens must be an integer")
    if isinstance(top_n, bool) or not isinstance(top_n, int) or not 1 <= top_n <= 1000:  # mathlas.request.MAX_K
        raise ValueError(f"reranker top_n must be an integer in 1..1000, not {top_n!r}")
    if not isinstance(default, bool):
        raise ValueError(f"reranker default must be true or false, not {default!r}")
    dest.mkdir(parents=True)
    for name in fmt.RERANKER_FILES:
        shutil.copyfile(reranker_dir / name, dest / name)
        os.chmod(dest / name, 0o644)
    os.chmod(dest, 0o755)
    return {"name": meta.get("name", ""), "license": meta.get("license", ""), "max_tokens": meta["max_tokens"],
            "top_n": top_n, "default": default}


def add_reranker(bundle_dir: Path, reranker_dir: Path, *, top_n: int = fmt.DEFAULT_RERANK_TOP_N,
                 default: bool = False, force: bool = False, quiet: bool = False) -> dict:
    """Add a trained reranker to a built bundle directory: its files go into ``reranker/`` (written
    beside it, then renamed), then the manifest is replaced atomically with their sizes and sha256
    in ``files`` and the ``reranker`` block, so until that last step the bundle is the old one.
    Returns the block."""
    root = Path(bundle_dir)
    manifest = fmt.verify(root, checksums=False)
    dest = root / fmt.RERANKER_DIR
    if (dest.exists() or manifest.reranker) and not force:
        raise FileExistsError(f"{root} already has a reranker; pass --force to replace it")
    tmp = root / f".{fmt.RERANKER_DIR}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    old = root / f".{fmt.RERANKER_DIR}.old-{os.getpid()}"
    try:
        block = copy_reranker(reranker_dir, tmp, top_n=top_n, default=default)
        if dest.exists():
            os.rename(dest, old)
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    prefix = fmt.RERANKER_DIR + "/"
    files = {rel: e for rel, e in manifest.files.items() if not rel.startswith(prefix)}
    files.update({prefix + rel: e for rel, e in fmt.file_entries(dest).items()})
    manifest.files = dict(sorted(files.items()))
    manifest.reranker = block
    fmt.write_manifest(root, manifest)
    shutil.rmtree(old, ignore_errors=True)
    _say(f"[write] reranker {block['name']} added to {root} (top_n {top_n}, default {'on' if default else 'off'})",
         quiet)
    return block


def add_ranker(bundle_dir: Path, model: Path, *, version: str | None = None, force: bool = False,
               quiet: bool = False) -> dict:
    """Attach a learned ranking model (``scripts/train_ranker.py``'s file) to a built bundle directory
    (``training.ltr.attach``: ``ranker/model.json``, its per-document arrays and the manifest's
    ``ranker`` block, with sizes and sha256 in ``files``). ``version``: the bundle becomes that version
    (a patch release of the same documents, vectors and indexes: the manifest records which release
    it was made from and the model's sha256 in ``recipe.patched``). Returns the ``ranker`` block."""
    from mathlas.bundle import sha256_file

    from mathlas_build.training.ltr import attach

    root = Path(bundle_dir)
    manifest = fmt.verify(root, checksums=True)
    if manifest.ranker and not force:
        raise FileExistsError(f"{root} already has a ranking model; pass --force to replace it")
    if version is not None and (not _VERSION.fullmatch(version) or version == manifest.version):
        raise ValueError(f"--version {version!r}: a version like 1.5.1 (digits and dots, an optional "
                         f"-suffix), other than the bundle's own {manifest.version}")
    was = f"{manifest.name}-{manifest.version}"

    def amend(m) -> None:
        if version:
            m.version = version
            if isinstance(m.recipe, dict):
                m.recipe = {**m.recipe, "version": version,
                            "patched": {"from": was, "ranker": Path(model).name, "sha256": sha256_file(Path(model))}}

    block = attach(root, model, amend=amend)   # one manifest write: the version with the model
    _say(f"[write] ranker {Path(model).name} attached to {root}" + (f" (now version {version})" if version else ""),
         quiet)
    return block


_VERSION = re.compile(r"\d+(?:\.\d+){1,3}(?:-[0-9A-Za-z.]+)?")


def lexical_manifest(options: dict) -> dict:
    """The manifest's ``lexical`` block from a recipe's options ``lexical_boosts``, ``lexical_symbols``
    and ``lexical_identifiers`` (the last two written only when set)."""
    identifiers = options.get("lexical_identifiers")
    if identifiers is not None and identifiers not in fmt.LEXICAL_IDENTIFIERS:
        raise ValueError(f"options.lexical_identifiers must be one of {fmt.LEXICAL_IDENTIFIERS}, not {identifiers!r}")
    symbols = options.get("lexical_symbols")
    if symbols is not None and symbols not in fmt.LEXICAL_SYMBOLS:
        raise ValueError(f"options.lexical_symbols must be \"lean\" or absent, not {symbols!r}")
    return {"boosts": dict(options.get("lexical_boosts") or fmt.DEFAULT_LEXICAL_BOOSTS),
            **({"symbols": symbols} if symbols else {}),
            **({"identifiers": identifiers} if identifiers else {})}


def check_folder(path: Path, what: str, given: Path | None = None) -> None:
    """Refuse, before any work, a folder the build could not write: the nearest part of ``path`` that
    exists must be a folder this process may create entries in. ``what`` names the option (``--out``),
    ``given`` the path as the user gave it (default ``path``)."""
    path = Path(path)
    shown = path if given is None else Path(given)
    probe = path
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        where = "" if probe == shown else f": {probe} is a file"
        raise NotADirectoryError(f"{what} {shown} cannot be made{where}, not a folder; choose another {what}"
                                 if given is not None else
                                 f"{what} {shown} is not a folder{where}; choose another {what}")
    try:  # a real try: access() says yes to root, and knows nothing of read-only file systems
        os.rmdir(tempfile.mkdtemp(prefix=".mathlas-write-check-", dir=probe))
    except OSError as e:
        raise PermissionError(f"{what} {shown}: cannot write in {probe} ({(e.strerror or str(e)).lower()}); "
                              f"choose another {what}") from None


def check_out(out: Path, *, force: bool = False, what: str = "--out") -> None:
    """Refuse, before any work, a bundle path ``write_bundle`` must not write: one that exists without
    ``force``, or anything but a bundle folder (one holding ``manifest.json``) or an empty folder even
    with it (``--force`` replaces a bundle, never a thesis folder or a file), or one it cannot write."""
    out = Path(out)
    if os.path.lexists(out):
        empty = out.is_dir() and not out.is_symlink() and not any(out.iterdir())
        is_bundle = out.is_dir() and not out.is_symlink() and (out / fmt.MANIFEST).is_file()
        if not (empty or is_bundle):
            kind = "a link" if out.is_symlink() else "a file" if not out.is_dir() else f"a folder without {fmt.MANIFEST}"
            raise FileExistsError(f"{what} {out} is {kind}, not a bundle: it is left alone (--force replaces only "
                                  f"a bundle); choose another {what}")
        if not force:
            raise FileExistsError(f"{out} exists; pass --force to replace it")
    check_folder(out.parent, what, given=out)


def write_bundle(docs: Sequence[Document], texts: Sequence[str], names: Sequence[str], vectors: np.ndarray,
                 encoder_dir: Path, out: Path, *, name: str, version: str, sources: dict[str, dict],
                 description: str = "", recipe: dict | None = None, builder: str = "",
                 lexical: dict | None = None, fusion: dict | None = None, binary_codes: str = "sign",
                 reranker: dict | None = None, ranker: Path | None = None, force: bool = False,
                 quiet: bool = False) -> Path:
    """Write the bundle to ``out`` atomically; returns ``out``. ``lexical`` is the manifest's
    ``lexical`` block (``lexical_manifest`` of a recipe's options); ``binary_codes`` the codes of
    the binary index (``fmt.BINARY_CODES``, a recipe's ``[options] binary_codes``); ``reranker``
    a recipe's ``[reranker]`` table (``path``, optional ``top_n`` and ``default``); ``ranker`` a learned
    ranking model's JSON (a recipe's ``[ranker] model``), attached (``ltr.attach``) in the temporary
    folder before the rename, so a build killed while attaching leaves no half-finished bundle."""
    out = Path(out)
    lexical = lexical or lexical_manifest({})
    if binary_codes not in fmt.BINARY_CODES:
        raise ValueError(f"options.binary_codes must be one of {fmt.BINARY_CODES}, not {binary_codes!r}")
    if len(docs) != len(texts) or len(docs) != len(vectors):
        raise ValueError("documents, texts and vectors differ in length")
    seen: set[str] = set()
    for d in docs:
        if d.id in seen:
            raise ValueError(f"duplicate document id {d.id!r}")
        seen.add(d.id)
    check_out(out, force=force)
    out.parent.mkdir(parents=True, exist_ok=True)
    from mathlas_build import scratch

    scratch.sweep(out.parent, f".{out.name}.tmp-", quiet=quiet)   # what a killed build of it left
    tmp = scratch.make(out.parent, f".{out.name}.tmp-")
    try:
        from mathlas_build.graph import attach_graph

        graph = attach_graph(docs, tmp, quiet=quiet)  # before the metadata: it adds its columns
        _say(f"[write] metadata for {len(docs):,} documents", quiet)
        write_meta(docs, texts, tmp / fmt.META)
        _check_priors(fusion, tmp / fmt.META)
        _say("[write] BM25 index", quiet)
        write_bm25(docs, texts, names, tmp / fmt.BM25_DIR, identifiers=lexical.get("identifiers", "split"))
        _say(f"[write] binary HNSW ({binary_codes} codes) + int8 vectors", quiet)
        vec_info = write_vectors(vectors, tmp, codes=binary_codes)
        encoder = copy_encoder(Path(encoder_dir), tmp / fmt.ENCODER_DIR)
        rerank = {} if not reranker else copy_reranker(
            reranker["path"], tmp / fmt.RERANKER_DIR, top_n=reranker.get("top_n", fmt.DEFAULT_RERANK_TOP_N),
            default=reranker.get("default", False))
        manifest = fmt.Manifest(
            format_version=fmt.needed_format(vec_info), name=name, version=version,
            created=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            builder=builder, count=len(docs), sources=sources, encoder=encoder, vectors=vec_info,
            files=fmt.file_entries(tmp), description=description, recipe=recipe or {},
            lexical=lexical,
            fusion={**fmt.DEFAULT_FUSION, **(fusion or {})}, graph=graph or {}, reranker=rerank)
        fmt.write_manifest(tmp, manifest)
        if ranker is not None:
            from mathlas_build.training.ltr import attach

            block = attach(tmp, ranker)
            _say(f"[write] ranker {Path(ranker).name} ({block['kind']}) attached to {out}", quiet)
        for dirpath, dirnames, filenames in os.walk(tmp):  # tantivy writes some files 0600; once, all written
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
            for f in filenames:
                os.chmod(os.path.join(dirpath, f), 0o644)
        os.chmod(tmp, 0o755)
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.rename(out, old)
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _say(f"[write] bundle {name}-{version} at {out}", quiet)
    return out
