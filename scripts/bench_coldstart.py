#!/usr/bin/env python3
"""Cold start of the CLI: wall time of `mathlas search QUERY --json` (new process, bundle
installed, OS page cache warm), the peak RSS of a process that opens the bundle and runs one
hybrid query, and as baselines in the same run: `python -c pass` and `python -c "import mathlas"`.

    python scripts/bench_coldstart.py [--bundle B] [--runs 7]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

QUERY = "a finitely generated module M over a local ring with M = mM is zero"
RSS_PROBE = """
import resource, sys, mathlas
b = mathlas.open_bundle(sys.argv[1] if len(sys.argv) > 1 else None)
b.search(%r, k=10)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""" % QUERY


def wall(cmd, runs):
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts), max(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bundle")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    extra = ["--bundle", args.bundle] if args.bundle else []
    subprocess.run([sys.executable, "-m", "mathlas", "search", QUERY, *extra], check=True,
                   stdout=subprocess.DEVNULL)  # installs the default bundle if needed, warms the page cache
    rows = {
        "python -c pass": wall([sys.executable, "-c", "pass"], args.runs),
        "python -c 'import mathlas'": wall([sys.executable, "-c", "import mathlas"], args.runs),
        "mathlas search --mode lexical": wall([sys.executable, "-m", "mathlas", "search", QUERY, "--mode",
                                               "lexical", "--json", *extra], args.runs),
        "mathlas search (hybrid)": wall([sys.executable, "-m", "mathlas", "search", QUERY, "--json", *extra],
                                        args.runs),
    }
    print(f"{'':<32}{'median s':>10}{'min':>8}{'max':>8}")
    for name, (med, lo, hi) in rows.items():
        print(f"{name:<32}{med:>10.3f}{lo:>8.3f}{hi:>8.3f}")
    rss = subprocess.run([sys.executable, "-c", RSS_PROBE, *([args.bundle] if args.bundle else [])],
                         check=True, capture_output=True, text=True).stdout.strip()
    print(f"peak RSS after open + one hybrid query: {int(rss) / 1024:.0f} MB")


if __name__ == "__main__":
    main()
