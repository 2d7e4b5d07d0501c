"""Benchmark the OEIS index on a synthetic stripped.gz / names.gz of realistic size.

    python scripts/bench_oeis.py                      # 380,000 sequences, mean 40 terms
    python scripts/bench_oeis.py --rows 50000 --dir DIR

Writes the files in the official formats (sequences of several growth kinds: bounded noise,
polynomials, exponentials reaching 40+ digits, alternating signs; lengths clipped so each
stripped line stays within the OEIS's ~260 characters), then measures: index build time and size
on disk, peak RSS of the build, first lookup of a fresh process on the built index (import + open
+ query), and per-lookup latency for queries cut from random sequences at random offsets (hits),
for short and very common queries, and for misses that run every transform. Prints JSON on
stdout; talk goes to stderr. Point ``--oeis-dir`` at a real download to measure that instead.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAX_LINE = 260


def synth_sequence(rng: random.Random, n: int) -> list[int]:
    kind = rng.random()
    if kind < 0.25:  # bounded noise: digits, counts, small values
        hi = rng.choice((2, 5, 10, 100, 1000))
        return [rng.randrange(hi) for _ in range(n)]
    if kind < 0.55:  # polynomials a n^k + b n + c
        a, k, b, c = rng.randint(1, 9), rng.randint(1, 4), rng.randint(-5, 5), rng.randint(-3, 9)
        return [a * i**k + b * i + c for i in range(n)]
    if kind < 0.80:  # exponential growth, soon dozens of digits
        r, c = rng.randint(2, 12), rng.randint(1, 5)
        return [c * r**i + rng.randint(-1, 1) for i in range(n)]
    if kind < 0.90:  # alternating signs
        a = rng.randint(1, 30)
        return [(-1) ** i * (a * i + rng.randint(0, 3)) for i in range(n)]
    x, out = rng.randint(0, 3), []  # random recurrences (Fibonacci-like)
    y = rng.randint(1, 3)
    for _ in range(n):
        out.append(x)
        x, y = y, rng.randint(1, 3) * y + x
    return out


def write_synthetic(d: Path, rows: int, mean_terms: int, seed: int) -> dict:
    d.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    terms_total = 0
    t0 = time.perf_counter()
    with gzip.open(d / "stripped.gz.part", "wt", compresslevel=6) as s, \
            gzip.open(d / "names.gz.part", "wt", compresslevel=6) as nm:
        s.write("# Greetings from The On-Line Encyclopedia of Integer Sequences! http://oeis.org/\n"
                "# Synthetic file for scripts/bench_oeis.py\n")
        nm.write("# Greetings from The On-Line Encyclopedia of Integer Sequences! http://oeis.org/\n")
        for i in range(1, rows + 1):
            n = max(1, min(int(rng.expovariate(1 / mean_terms)) + 3, 120))
            seq = synth_sequence(rng, n)
            line, k = ",", 0
            for t in seq:
                piece = f"{t},"
                if len(line) + len(piece) > MAX_LINE and k:
                    break
                line += piece
                k += 1
            terms_total += k
            s.write(f"A{i:06d} {line}\n")
            nm.write(f"A{i:06d} Synthetic sequence number {i} of kind {rng.randrange(50)}, "
                     f"with a name about as long as a typical OEIS name.\n")
    os.replace(d / "stripped.gz.part", d / "stripped.gz")
    os.replace(d / "names.gz.part", d / "names.gz")
    raw = 0
    with gzip.open(d / "stripped.gz", "rb") as f:
        while b := f.read(1 << 20):
            raw += len(b)
    return {"rows": rows, "terms": terms_total, "stripped_gz_mb": round((d / "stripped.gz").stat().st_size / 1e6, 1),
            "stripped_raw_mb": round(raw / 1e6, 1),
            "names_gz_mb": round((d / "names.gz").stat().st_size / 1e6, 1),
            "generate_seconds": round(time.perf_counter() - t0, 1)}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1e3, 3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=380_000)
    ap.add_argument("--mean-terms", type=int, default=40)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "mathlas-oeis-bench")
    ap.add_argument("--oeis-dir", type=Path, help="benchmark these (real) files instead of synthetic ones")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    report: dict = {}
    if args.oeis_dir:
        d = args.oeis_dir
    else:
        d = args.dir
        if not (d / "stripped.gz").is_file():
            print(f"[bench] writing {args.rows:,} synthetic sequences into {d} ...", file=sys.stderr)
            report["data"] = write_synthetic(d, args.rows, args.mean_terms, args.seed)
    os.environ["MATHLAS_OEIS_DIR"] = str(d)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from mathlas.tools.oeis import identify_sequence, index_home, open_index
    from mathlas.tools.oeis import index as ix

    home = index_home(d)
    import shutil
    shutil.rmtree(home / ix.INDEX_DIR, ignore_errors=True)
    t0 = time.perf_counter()
    idx = open_index(d)
    build = time.perf_counter() - t0
    files = {p.name: p.stat().st_size for p in (home / ix.INDEX_DIR).iterdir()}
    report["build"] = {"seconds": round(build, 1), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                       "sequences": idx.stamp["sequences"], "terms": idx.stamp["terms"], "pairs": idx.stamp["pairs"],
                       "index_mb": round(sum(files.values()) / 1e6, 1),
                       "files_mb": {k: round(v / 1e6, 2) for k, v in sorted(files.items())}}

    code = ("import time; t=time.perf_counter(); from mathlas.tools.oeis import identify_sequence; "
            "r=identify_sequence([1,2,3,5,8,13]); print(time.perf_counter()-t)")
    cold = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                 env={**os.environ}).stdout) for _ in range(3)]
    report["fresh_process_first_lookup_ms"] = round(min(cold) * 1e3, 1)

    rng = random.Random(args.seed + 1)
    n = len(idx)
    hit_times, found = [], 0
    for _ in range(args.queries):
        s = rng.randrange(n)
        terms = idx.terms(s)
        if len(terms) < 4:
            continue
        k = rng.randint(3, min(8, len(terms)))
        off = rng.randrange(len(terms) - k + 1)
        q = [int(t) for t in terms[off:off + k]]
        t0 = time.perf_counter()
        r = identify_sequence(q, transforms=False)
        hit_times.append(time.perf_counter() - t0)
        found += any(m.a_number == f"A{int(idx.anum[s]):06d}" for m in r.matches) or r.more
    report["lookup_hits"] = {"n": len(hit_times), "p50_ms": pct(hit_times, 0.5), "p95_ms": pct(hit_times, 0.95),
                             "max_ms": pct(hit_times, 1.0), "source_found_or_more": found}
    common = {}
    for q in ([1, 2], [0, 0], [1, 1], [1, 2, 3], [0, 1, 2, 3, 4], [2, 4, 6, 8]):
        t0 = time.perf_counter()
        r = identify_sequence(q, transforms=False)
        common[",".join(map(str, q))] = {"ms": round((time.perf_counter() - t0) * 1e3, 2), "matches": len(r.matches),
                                         "more": r.more}
    report["lookup_common"] = common
    miss_times = []
    for _ in range(50):
        q = [rng.randrange(10**6) for _ in range(rng.randint(4, 8))]
        t0 = time.perf_counter()
        identify_sequence(q)
        miss_times.append(time.perf_counter() - t0)
    report["lookup_miss_all_transforms"] = {"n": len(miss_times), "p50_ms": pct(miss_times, 0.5),
                                            "p95_ms": pct(miss_times, 0.95)}
    json.dump(report, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
