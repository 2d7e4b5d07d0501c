#!/usr/bin/env python3
"""Compare encoder directories side by side, all measured in one run: sizes, one-query latency and
the trainer's dense proxy scores.

    python scripts/bench_encoders.py --pairs-dir work/pairs/NAME \\
        --encoder work/encoders/minilm-base --encoder work/encoders/e5-small-base \\
        --encoder "$MATHLAS_DATA_DIR/bundles/informal-1.4.0/encoder" [--latency-queries 30] [--json out.json]

An ``--encoder`` is a mathlas encoder directory (``encoder.json``, ``model.onnx``, ``tokenizer.json``),
optionally ``LABEL=DIR``; a directory named ``encoder`` (a bundle's) is labelled by its parent.

* **Sizes**: ``model.onnx`` (+ external data) as shipped, ``fp32/model.onnx`` when the exporter kept
  one, ``tokenizer.json``, the tokenizer's vocabulary, the share of ``model.onnx`` that is the token
  embedding matrix (the initializer the graph gathers ``input_ids`` from), and the zstd size of the
  files a bundle ships (``model.onnx``, ``tokenizer.json``, ``encoder.json``) at ``--zstd-level``
  (the release packer's 19 by default; 0 skips it).
* **Latency**: the first ``--latency-queries`` queries of ``--queries``, one ``encode_queries([q])``
  call each (tokenisation, prompt, pooling included: what a search pays), with ``--threads``
  onnxruntime threads; a warm-up pass, then ``--rounds`` rounds in which every query is encoded by
  every encoder in turn (the encoder order rotating per query), so load on the machine falls on all
  of them alike. p50 / p90 / min of the timed calls (min: the cost without waiting for a CPU).
* **Proxy quality**: ``mathlas_build.training.evalset.proxy_eval`` over the eval corpora that
  ``mathlas-build pairs`` wrote into ``--pairs-dir`` (``eval-sets.json``, ``eval-<group>.jsonl``),
  with the runtime's ``Encoder`` (``encode_queries`` / ``encode_documents``, the directory's own
  prompts and pooling, its ``model.onnx``) as the callable, documents cut at ``--document-tokens``
  and queries at ``--query-tokens`` (prompt included), as the trainer's evaluation does (128 / 64).
  P@1 and Hit@10 come with Wilson 95% intervals, MRR@20 with proxy_eval's bootstrap interval.
  Zero-shot bases and trained encoders are scored the same way, so the numbers compare; they are a
  proxy (random distractors, dense only), not a bundle's ``mathlas eval``.
"""
from __future__ import annotations

import argparse
import io
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
try:
    import mathlas_build  # noqa: F401
except ImportError:  # not installed: run from the checkout
    sys.path.insert(0, str(REPO / "build"))

from mathlas.encoder import Encoder  # noqa: E402

SHIPPED = ("model.onnx", "model.onnx_data", "tokenizer.json", "encoder.json")


def parse_encoder(arg: str) -> tuple[str, Path]:
    label, sep, path = arg.partition("=")
    if not sep:
        path, label = arg, ""
    p = Path(path)
    if not (p / "encoder.json").is_file():
        raise SystemExit(f"{p}: not an encoder directory (no encoder.json)")
    if not label:
        label = p.resolve().parent.name if p.resolve().name == "encoder" else p.resolve().name
    return label, p


def _bytes(p: Path) -> int:
    return p.stat().st_size if p.is_file() else 0


def model_bytes(p: Path) -> int:
    return _bytes(p) + _bytes(p.with_name(p.name + "_data"))


def embedding_share(model: Path) -> tuple[int, int]:
    """(bytes of the token embedding initializer, bytes of all initializers) of an ONNX model: the
    initializer a Gather indexes with ``input_ids`` (after int8 quantization, the quantized one)."""
    import onnx

    g = onnx.load(str(model), load_external_data=False).graph

    def nbytes(t) -> int:
        if t.raw_data:
            return len(t.raw_data)
        if t.data_location == onnx.TensorProto.EXTERNAL:
            return int({e.key: e.value for e in t.external_data}.get("length", 0))
        return int(np.prod(t.dims)) * onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize

    inits = {t.name: nbytes(t) for t in g.initializer}
    emb = [n.input[0] for n in g.node if n.op_type == "Gather" and len(n.input) > 1
           and n.input[1] == "input_ids" and n.input[0] in inits]
    if not emb:
        emb = [k for k in inits if "word_embeddings" in k or "embed_tokens" in k][:1]
    return (max(inits[k] for k in emb) if emb else 0), sum(inits.values())


def zstd_bytes(files: list[Path], level: int) -> int:
    import zstandard

    cctx = zstandard.ZstdCompressor(level=level, threads=1)
    out = io.BytesIO()
    with cctx.stream_writer(out, closefd=False) as w:
        for f in files:
            with open(f, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    w.write(chunk)
    return out.tell()


def sizes(d: Path, zstd_level: int) -> dict:
    from tokenizers import Tokenizer

    cfg = json.loads((d / "encoder.json").read_text(encoding="utf-8"))
    model = d / (cfg.get("model_file") or "model.onnx")
    emb, _ = embedding_share(model)
    row = {
        "model_bytes": model_bytes(model),
        "fp32_bytes": model_bytes(d / "fp32" / "model.onnx") or None,
        "tokenizer_bytes": _bytes(d / "tokenizer.json"),
        "vocab": Tokenizer.from_file(str(d / "tokenizer.json")).get_vocab_size(),
        "embedding_bytes": emb,
        "embedding_share": emb / model_bytes(model) if model_bytes(model) else None,
        "quantization": cfg.get("quantization", ""),
        "query_prompt": cfg.get("query_prompt", ""),
        "document_prompt": cfg.get("document_prompt", ""),
    }
    shipped = [d / f for f in SHIPPED if (d / f).is_file()]
    row["shipped_bytes"] = sum(_bytes(f) for f in shipped)
    row["shipped_zstd_bytes"] = zstd_bytes(shipped, zstd_level) if zstd_level else None
    return row


def load_queries(path: Path, n: int) -> list[str]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [r["query"] for r in rows[:n]]


def latency(encoders: dict[str, Encoder], queries: list[str], rounds: int) -> dict[str, dict]:
    names = list(encoders)
    for q in queries:  # warm-up: sessions created, first-run allocations done
        for n in names:
            encoders[n].encode_queries([q])
    times: dict[str, list[float]] = {n: [] for n in names}
    k = 0
    for _ in range(rounds):
        for q in queries:
            for j in range(len(names)):
                n = names[(j + k) % len(names)]
                t0 = time.perf_counter()
                encoders[n].encode_queries([q])
                times[n].append((time.perf_counter() - t0) * 1000)
            k += 1
    out = {}
    for n, ts in times.items():
        enc = encoders[n]
        toks = [len(t) for t in enc.tokenize(queries, enc.config.query_prompt)]
        out[n] = {"p50_ms": statistics.median(ts), "p90_ms": float(np.percentile(ts, 90)), "min_ms": min(ts),
                  "mean_ms": statistics.fmean(ts), "calls": len(ts), "median_tokens": statistics.median(toks)}
    return out


def wilson(p: float, n: int, z: float = 1.96) -> list[float]:
    k = round(p * n)
    if n == 0:
        return [0.0, 0.0]
    ph = k / n
    den = 1 + z * z / n
    c = (ph + z * z / (2 * n)) / den
    h = z * math.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return [round(max(0.0, c - h), 4), round(min(1.0, c + h), 4)]


def proxy(enc: Encoder, pairs_dir: Path, query_tokens: int, document_tokens: int, limit: int) -> dict:
    from mathlas_build.training.evalset import proxy_eval

    full = enc.config.max_tokens

    def encode(texts: list[str], side: str) -> np.ndarray:
        enc.config.max_tokens = document_tokens if side == "document" else query_tokens
        try:
            return enc.encode_documents(texts) if side == "document" else enc.encode_queries(texts)
        finally:
            enc.config.max_tokens = full

    t0 = time.perf_counter()
    res = proxy_eval(encode, pairs_dir, limit=limit)
    for v in res.values():
        v["p@1_ci95"] = wilson(v["p@1"], v["queries"])
        v["hit@10_ci95"] = wilson(v["hit@10"], v["queries"])
    res["_seconds"] = round(time.perf_counter() - t0, 1)
    return res


def mb(n) -> str:
    return "-" if not n else f"{n / 1e6:.1f}"


def ci(v: list[float]) -> str:
    return f"[{v[0]:.2f}, {v[1]:.2f}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", action="append", required=True, metavar="[LABEL=]DIR",
                    help="encoder directory (repeatable)")
    ap.add_argument("--pairs-dir", type=Path, default=None,
                    help="a `mathlas-build pairs` output with eval-sets.json (omitted: no proxy scores)")
    ap.add_argument("--latency-queries", type=int, default=30, help="queries timed one at a time (0: none)")
    ap.add_argument("--queries", type=Path, default=REPO.parent / "shared" / "eval" / "formal-qr-dev.jsonl",
                    help="JSONL with a 'query' field: the latency queries")
    ap.add_argument("--rounds", type=int, default=5, help="timed passes over the latency queries")
    ap.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads (latency)")
    ap.add_argument("--eval-threads", type=int, default=None, help="threads for the proxy (default --threads)")
    ap.add_argument("--query-tokens", type=int, default=64)
    ap.add_argument("--document-tokens", type=int, default=128)
    ap.add_argument("--eval-limit", type=int, default=0, help="proxy corpus rows per set (0: all)")
    ap.add_argument("--zstd-level", type=int, default=19, help="0 skips the compressed size")
    ap.add_argument("--json", type=Path, default=None, help="also write every number here")
    a = ap.parse_args(argv)

    encs = dict(parse_encoder(e) for e in a.encoder)
    if len(encs) != len(a.encoder):
        raise SystemExit("two --encoder share a label: use LABEL=DIR")
    if a.pairs_dir and not (a.pairs_dir / "eval-sets.json").is_file():
        raise SystemExit(f"{a.pairs_dir}: no eval-sets.json (run `mathlas-build pairs` first)")
    report: dict = {"encoders": {k: str(v) for k, v in encs.items()}, "threads": a.threads,
                    "load_average_start": os.getloadavg()[0]}

    print(f"sizes (zstd level {a.zstd_level or 'skipped'}) ...", file=sys.stderr, flush=True)
    report["sizes"] = {k: sizes(d, a.zstd_level) for k, d in encs.items()}

    if a.latency_queries:
        qs = load_queries(a.queries, a.latency_queries)
        print(f"latency: {len(qs)} queries x {a.rounds} rounds x {len(encs)} encoders, {a.threads} thread(s) ...",
              file=sys.stderr, flush=True)
        runtime = {k: Encoder(d, threads=a.threads) for k, d in encs.items()}
        report["latency"] = latency(runtime, qs, a.rounds)
        report["latency_queries"] = {"file": a.queries.name, "n": len(qs), "rounds": a.rounds}
        del runtime

    if a.pairs_dir:
        report["proxy"] = {}
        for k, d in encs.items():
            print(f"proxy eval {k} ...", file=sys.stderr, flush=True)
            enc = Encoder(d, threads=a.eval_threads or a.threads)
            report["proxy"][k] = proxy(enc, a.pairs_dir, a.query_tokens, a.document_tokens, a.eval_limit)
            del enc
            print(f"  {report['proxy'][k]['_seconds']} s", file=sys.stderr, flush=True)
    report["load_average_end"] = os.getloadavg()[0]

    # ---- table
    print(f"\n| encoder | vocab | int8 model.onnx MB | fp32 MB | token-embedding share | shipped MB "
          f"| shipped zstd-{a.zstd_level} MB | query p50 ms | p90 ms | min ms | median tokens |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in encs:
        s, lat = report["sizes"][k], report.get("latency", {}).get(k, {})
        share = f"{100 * s['embedding_share']:.1f}%" if s["embedding_share"] is not None else "-"
        print(f"| {k} | {s['vocab']:,} | {mb(s['model_bytes'])} | {mb(s['fp32_bytes'])} | {share} "
              f"| {mb(s['shipped_bytes'])} | {mb(s['shipped_zstd_bytes'])} "
              f"| {lat.get('p50_ms', float('nan')):.2f} | {lat.get('p90_ms', float('nan')):.2f} "
              f"| {lat.get('min_ms', float('nan')):.2f} "
              f"| {lat.get('median_tokens', '-')} |")
    if a.latency_queries:
        lq = report["latency_queries"]
        print(f"\nlatency: {lq['n']} queries of {lq['file']}, {lq['rounds']} interleaved rounds, {a.threads} "
              f"onnxruntime thread(s), warm; load average {report['load_average_start']:.2f} -> "
              f"{report['load_average_end']:.2f}")
    if a.pairs_dir:
        sets = sorted({s for r in report["proxy"].values() for s in r if not s.startswith("_")})
        print(f"\nproxy ({a.pairs_dir.name}, dense only, documents {a.document_tokens} / queries {a.query_tokens} "
              f"tokens): P@1 / Hit@10 / MRR@20 [95% CI]")
        print("| encoder | " + " | ".join(f"{s} (n={next(r[s]['queries'] for r in report['proxy'].values() if s in r)})"
                                          for s in sets) + " | s |")
        print("|---|" + "---|" * len(sets) + "---|")
        for k, r in report["proxy"].items():
            cells = []
            for s in sets:
                v = r.get(s)
                cells.append("-" if not v else
                             f"{v['p@1']:.3f} {ci(v['p@1_ci95'])} / {v['hit@10']:.3f} {ci(v['hit@10_ci95'])} / "
                             f"{v['mrr@20']:.3f} {ci(v['mrr@20_ci95'])}")
            print(f"| {k} | " + " | ".join(cells) + f" | {r['_seconds']:.0f} |")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
