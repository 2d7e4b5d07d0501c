"""The build's document embedder on a GPU: throughput of ``mathlas_build.embed`` on CUDA, against the
same machine's CPU in the same run, and how far its vectors are from the CPU's.

In steps, because a GPU machine here is lent bare and for minutes (docs/building.md, "The document
embedder on a GPU"):

```bash
python scripts/bench_embed_gpu.py prepare --bundle DIR --out .gpu-embed     # here: texts + encoder
python scripts/bench_embed_gpu.py fp16 --encoder .gpu-embed/encoder         # + fp16.onnx (torch, here)
# on the GPU machine, with onnxruntime-gpu installed (no other mathlas dependency is needed there):
PYTHONPATH=.:build python3 scripts/bench_embed_gpu.py run --data .gpu-embed --out OUT [--model fp16.onnx --no-cpu]
# back here: the GPU's vectors against the build's CPU vectors (the embedding cache)
python scripts/bench_embed_gpu.py compare --result OUT --data .gpu-embed --cache work/embed-cache
# the whole bundle's vectors from the GPU, in two calls (a call brings back 64 MiB), then a bundle of them here
python3 scripts/bench_embed_gpu.py vectors --data .gpu-embed --out OUT0 --model fp16.onnx --part 0
python3 scripts/bench_embed_gpu.py vectors --data .gpu-embed --out OUT1 --part 1
python scripts/bench_embed_gpu.py bundle --bundle DIR --parts OUT0 OUT1 --out DIR-gpu
```

``prepare`` writes every retrieval text of a bundle (its ``text`` column: exactly what the build
embedded) and the bundle's encoder. ``run`` embeds a seeded sample with several batch settings on
CUDA and on the CPU (all cores), then the whole set once through ``embed_documents`` with an
embedding cache, as ``mathlas-build RECIPE --provider cuda`` does, and writes ``result.json`` and the
vectors of the first ``--keep`` texts of each device (``vectors-cuda.npy``, ``vectors-cpu.npy``).
``fp16`` writes an fp16 document model beside an encoder's int8 ``model.onnx``: the int8 weights
dequantised into a BERT checkpoint (``training.from_onnx``), exported to ONNX and converted to fp16
(onnxruntime's ``float16`` converter, inputs and output kept in their types). Its vectors are another
model's (cosine .9935 on average with the int8 model's), so a recipe that embeds with it
(``document_model``) builds new document vectors. ``compare`` prints the table and the cosines of
those vectors with the cached CPU vectors of the build. ``vectors`` embeds the whole set on the GPU
machine and hands its int8 rows back in two calls; ``bundle`` makes a copy of the bundle with them
(the build's own ``write_vectors``), to search and evaluate here.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SEED = 20261128


def prepare(bundle: Path, out: Path) -> None:
    import pyarrow.parquet as pq

    out.mkdir(parents=True, exist_ok=True)
    texts = pq.read_table(bundle / "meta" / "documents.parquet", columns=["text"]).column("text").to_pylist()
    with gzip.open(out / "texts.json.gz", "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(texts, f, ensure_ascii=False)
    enc = out / "encoder"
    enc.mkdir(exist_ok=True)
    for name in ("encoder.json", "model.onnx", "tokenizer.json"):
        shutil.copyfile(bundle / "encoder" / name, enc / name)
    manifest = json.loads((bundle / "manifest.json").read_text())
    (out / "about.json").write_text(json.dumps({"bundle": manifest.get("name"), "version": manifest.get("version"),
                                                "texts": len(texts)}, indent=1))
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"{len(texts):,} texts and the encoder in {out} ({size / 1e6:.1f} MB)")


def fp16(encoder_dir: Path, name: str) -> Path:
    from mathlas_build.export_encoder import export_onnx_fp32
    from mathlas_build.training.from_onnx import checkpoint_from_int8_onnx

    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    with tempfile.TemporaryDirectory() as tmp:
        ck = checkpoint_from_int8_onnx(encoder_dir, Path(tmp) / "hf")
        fp32, _ = export_onnx_fp32(ck, Path(tmp) / "fp32", method="torch")
        model = convert_float_to_float16(onnx.load(str(fp32)), keep_io_types=True)
    out = encoder_dir / name
    onnx.save(model, str(out))
    print(f"{out} ({out.stat().st_size / 1e6:.1f} MB)")
    return out


def _timed(encoder, texts: list[str], batch_size: int) -> tuple[float, np.ndarray]:
    encoder.encode_documents(texts[:256], batch_size=batch_size)  # warm-up: kernels, arenas
    t0 = time.perf_counter()
    vecs = encoder.encode_documents(texts, batch_size=batch_size)
    return time.perf_counter() - t0, vecs


def run(data: Path, out: Path, sample: int, keep: int, cpu_sample: int, whole: int | None = None,
        budget: float = 400.0, model: str | None = None, cpu: bool = True) -> None:
    import onnxruntime as ort

    start = time.perf_counter()
    if hasattr(ort, "preload_dlls"):  # CUDA and cuDNN from the nvidia-* wheels, where they are installed so
        try:
            ort.preload_dlls()
        except Exception as e:  # noqa: BLE001 - a machine without them says so below, in the providers used
            print(f"preload_dlls: {e}", file=sys.stderr)

    from mathlas_build.embed import DocumentEncoder, embed_documents

    out.mkdir(parents=True, exist_ok=True)
    texts = json.loads(gzip.open(data / "texts.json.gz", "rt", encoding="utf-8").read())[:whole]
    enc_dir = data / "encoder"
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(texts))
    part = [texts[i] for i in order[:sample]]
    np.save(out / "rows.npy", order[:keep])
    result: dict = {"texts": len(texts), "sample": len(part), "onnxruntime": ort.__version__,
                    "providers": ort.get_available_providers(), "cpu_count": os.cpu_count(), "runs": []}
    try:
        import torch

        result["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except ImportError:
        result["gpu"] = None

    def save():
        (out / "result.json").write_text(json.dumps(result, indent=1))

    settings = [(32, None), (128, None), (256, 32768), (1024, 65536), (2048, 131072)]
    best = None
    for batch, tokens in settings:
        enc = DocumentEncoder(enc_dir, provider="cuda", max_batch_tokens=tokens, model_file=model)
        dt, vecs = _timed(enc, part, batch)
        if batch == 32 and dt > budget / 20:  # a slow device: the other settings on a smaller sample
            part = part[:max(keep, int(len(part) * budget / 20 / dt))]
        row = {"device": enc.device, "model": enc.model_file, "active": enc.active_providers, "batch_size": batch, "max_batch_tokens": tokens,
               "texts": len(part), "seconds": round(dt, 2), "docs_per_s": round(len(part) / dt, 1)}
        result["runs"].append(row)
        print(json.dumps(row), flush=True)
        save()
        if best is None or row["docs_per_s"] > best[2]:
            best = (batch, tokens, row["docs_per_s"])
        if batch == 32:
            np.save(out / "vectors-cuda.npy", vecs[:keep].astype(np.float32))
    if cpu:
        cpu_part = part[:cpu_sample]
        enc = DocumentEncoder(enc_dir, provider="cpu")
        dt, vecs = _timed(enc, cpu_part, 32)
        np.save(out / "vectors-cpu.npy", vecs[:keep].astype(np.float32))
        row = {"device": "cpu", "model": enc.model_file, "threads": "all", "batch_size": 32, "max_batch_tokens": None,
               "texts": len(cpu_part), "seconds": round(dt, 2), "docs_per_s": round(len(cpu_part) / dt, 1)}
        result["runs"].append(row)
        print(json.dumps(row), flush=True)
        save()
    # the whole bundle once, as a build does it: embed_documents with an embedding cache, chunk by chunk
    batch, tokens, rate = best
    left = budget - (time.perf_counter() - start)
    if len(texts) > rate * left * 0.6:  # what is left of the budget cannot embed them all: a prefix, said so
        texts = texts[:max(keep, int(rate * left * 0.6))]
    with tempfile.TemporaryDirectory() as cache:
        t0 = time.perf_counter()
        vecs = embed_documents(texts, enc_dir, cache_dir=Path(cache), provider="cuda", batch_size=batch,
                               max_batch_tokens=tokens, model_file=model)
        dt = time.perf_counter() - t0
        t1 = time.perf_counter()
        again = embed_documents(texts, enc_dir, cache_dir=Path(cache), provider="cuda", batch_size=batch,
                                max_batch_tokens=tokens, model_file=model, quiet=True)
        dt_cached = time.perf_counter() - t1
    result["whole"] = {"texts": len(texts), "batch_size": batch, "max_batch_tokens": tokens,
                       "seconds": round(dt, 1), "docs_per_s": round(len(texts) / dt, 1),
                       "rerun_from_cache_s": round(dt_cached, 1), "rerun_equal": bool(np.array_equal(vecs, again))}
    if (order[:keep] < len(vecs)).all():
        np.save(out / "vectors-whole-cuda.npy", vecs[order[:keep]].astype(np.float32))
    print(json.dumps(result["whole"]), flush=True)
    save()


VECTOR_PARTS = 8  # a bundle's int8 vectors come back in this many files, half of them a call (16 MiB a file)


def vectors(data: Path, out: Path, model: str | None, part: int, batch: int = 128, work: Path | None = None) -> None:
    """On the GPU machine: every text embedded as a build would (``embed_documents``, CUDA), quantised
    as the writer does (int8 rows and their scales), kept under /tmp and handed back in two calls: part 0
    writes the scales and the first half of the rows' files to ``out``, part 1 the second half."""
    keep = work or Path(tempfile.gettempdir()) / "bench-embed-vectors"
    if part == 0:
        from mathlas_build.embed import embed_documents
        from mathlas_build.writer import quantize_i8

        texts = json.loads(gzip.open(data / "texts.json.gz", "rt", encoding="utf-8").read())
        t0 = time.perf_counter()
        vecs = embed_documents(texts, data / "encoder", provider="cuda", batch_size=batch, model_file=model)
        seconds = time.perf_counter() - t0
        q, scale = quantize_i8(vecs)
        keep.mkdir(parents=True, exist_ok=True)
        for i, rows in enumerate(np.array_split(np.arange(len(q)), VECTOR_PARTS)):
            np.save(keep / f"rows-{i}.npy", q[rows])
        out.mkdir(parents=True, exist_ok=True)
        np.save(out / "scales.npy", scale)
        (out / "vectors.json").write_text(json.dumps({"texts": len(texts), "model": model, "seconds": round(seconds, 1)}))
    out.mkdir(parents=True, exist_ok=True)
    half = VECTOR_PARTS // 2
    for i in range(part * half, (part + 1) * half):
        shutil.copyfile(keep / f"rows-{i}.npy", out / f"rows-{i}.npy")


def bundle_with(bundle: Path, parts: list[Path], out: Path) -> None:
    """Here: a copy of ``bundle`` (hard links) whose vectors are the GPU's (``vectors`` parts 0 and 1),
    written by the build's own ``write_vectors`` with the bundle's binary codes; the manifest's
    entries for the vector files are made again."""
    import hashlib as _h

    from mathlas_build.writer import write_vectors

    files = {p.name: p for d in parts for p in d.iterdir()}
    scale = np.load(files["scales.npy"])
    q = np.concatenate([np.load(files[f"rows-{i}.npy"]) for i in range(VECTOR_PARTS)])
    if len(q) != len(scale):
        raise SystemExit(f"{len(q)} rows against {len(scale)} scales")
    manifest = json.loads((bundle / "manifest.json").read_text())
    if out.exists():
        raise SystemExit(f"{out} exists")
    shutil.copytree(bundle, out, copy_function=os.link, ignore=shutil.ignore_patterns("vectors"))
    codes = manifest.get("vectors", {}).get("binary_codes", "sign")
    write_vectors(q.astype(np.float32) * scale[:, None], out, codes=codes)
    for name, entry in manifest["files"].items():
        if name.startswith("vectors/"):
            data = (out / name).read_bytes()
            entry.update({"size": len(data), "sha256": _h.sha256(data).hexdigest()})
    (out / "manifest.json").unlink()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    print(f"{out}: {len(q):,} vectors from the GPU, {codes} codes")


def _cached_vectors(cache: Path, texts: list[str]) -> np.ndarray | None:
    """The build's CPU vectors of ``texts`` from an embedding cache (any fingerprint folder holding them all)."""
    keys = [hashlib.sha256(t.encode()).digest()[:16] for t in texts]
    want = {k: i for i, k in enumerate(keys)}
    for folder in sorted((cache / "texts").glob("*")):
        found = {}
        for seg in folder.glob("seg-*.npz"):
            z = np.load(seg)
            for k, v in zip(z["keys"], z["vectors"]):
                i = want.get(bytes(k))
                if i is not None:
                    found[i] = v
        if len(found) == len(texts):
            return np.stack([found[i] for i in range(len(texts))])
    return None


def compare(result_dir: Path, data: Path, cache: Path | None) -> None:
    result = json.loads((result_dir / "result.json").read_text())
    print(f"{result.get('gpu')}, onnxruntime {result['onnxruntime']}, {result['cpu_count']} CPU cores; "
          f"{result['texts']:,} texts, sample {result['sample']:,}")
    print("| device | batch | max tokens | texts | s | docs/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in result["runs"]:
        print(f"| {r['device']} | {r['batch_size']} | {r['max_batch_tokens'] or '-'} | {r['texts']:,} | "
              f"{r['seconds']} | {r['docs_per_s']:,} |")
    if "whole" in result:
        w = result["whole"]
        print(f"whole set through embed_documents: {w['texts']:,} texts in {w['seconds']} s ({w['docs_per_s']:,} docs/s), "
              f"again from the cache {w['rerun_from_cache_s']} s, equal: {w['rerun_equal']}")
    gpu = np.load(result_dir / "vectors-cuda.npy")
    cpu = np.load(result_dir / "vectors-cpu.npy")
    n = min(len(gpu), len(cpu))

    def cos(a, b):
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        b = b / np.linalg.norm(b, axis=1, keepdims=True)
        c = (a * b).sum(1)
        return f"min {c.min():.4f}, median {np.median(c):.4f}, mean {c.mean():.4f}"

    print(f"cosine, CUDA vs the same machine's CPU ({n:,} texts): {cos(gpu[:n], cpu[:n])}")
    if cache is not None:
        texts = json.loads(gzip.open(data / "texts.json.gz", "rt", encoding="utf-8").read())
        rows = np.load(result_dir / "rows.npy")[:n]
        ref = _cached_vectors(cache, [texts[i] for i in rows])
        if ref is None:
            print("the cache does not hold these texts' vectors", file=sys.stderr)
        else:
            print(f"cosine, CUDA vs the build's CPU vectors (cache): {cos(gpu[:n], ref)}")
            print(f"cosine, this CPU run vs the build's CPU vectors: {cos(cpu[:n], ref)}")
            if (result_dir / "vectors-whole-cuda.npy").is_file():
                whole = np.load(result_dir / "vectors-whole-cuda.npy")[:n]
                print(f"cosine, the whole CUDA run (as a build batches) vs the build's CPU vectors: {cos(whole, ref)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--bundle", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("fp16")
    f.add_argument("--encoder", type=Path, required=True, help="an encoder directory with an int8 model.onnx")
    f.add_argument("--name", default="fp16.onnx")
    r = sub.add_parser("run")
    r.add_argument("--data", type=Path, required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--sample", type=int, default=40000)
    r.add_argument("--cpu-sample", type=int, default=8000)
    r.add_argument("--keep", type=int, default=4096)
    r.add_argument("--model", help="another model file of the encoder directory for CUDA (fp16.onnx)")
    r.add_argument("--no-cpu", action="store_true", help="no CPU baseline (the encoder directory lacks model.onnx)")
    r.add_argument("--budget", type=float, default=400.0, help="seconds the run should take at most (about)")
    r.add_argument("--whole", type=int, help="embed only the first N texts as the whole set (a dry run)")
    v = sub.add_parser("vectors", help="on the GPU machine: the whole set's int8 vectors, in two calls")
    v.add_argument("--data", type=Path, required=True)
    v.add_argument("--out", type=Path, required=True)
    v.add_argument("--model")
    v.add_argument("--part", type=int, choices=(0, 1), required=True)
    v.add_argument("--work", type=Path, help="where part 0 keeps the rows for part 1 (default: the temp folder)")
    w = sub.add_parser("bundle", help="here: a copy of a bundle with the GPU's vectors")
    w.add_argument("--bundle", type=Path, required=True)
    w.add_argument("--parts", type=Path, nargs=2, required=True)
    w.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare")
    c.add_argument("--result", type=Path, required=True)
    c.add_argument("--data", type=Path, required=True)
    c.add_argument("--cache", type=Path)
    a = ap.parse_args(argv)
    try:
        _dispatch(a)
    except (OSError, KeyError, ValueError) as e:  # a missing or foreign folder: one line, not a traceback
        raise SystemExit(f"bench_embed_gpu.py {a.cmd}: {type(e).__name__}: {e} "
                         "(the folders come from `prepare`, `run` and `vectors`: see the module docstring)") from None
    return 0


def _dispatch(a) -> None:
    if a.cmd == "prepare":
        prepare(a.bundle, a.out)
    elif a.cmd == "vectors":
        vectors(a.data, a.out, a.model, a.part, work=a.work)
    elif a.cmd == "bundle":
        bundle_with(a.bundle, a.parts, a.out)
    elif a.cmd == "fp16":
        fp16(a.encoder, a.name)
    elif a.cmd == "run":
        run(a.data, a.out, a.sample, a.keep, a.cpu_sample, a.whole, a.budget, a.model, not a.no_cpu)
    else:
        compare(a.result, a.data, a.cache)


if __name__ == "__main__":
    sys.exit(main())
