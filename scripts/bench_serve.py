"""Load benchmark of ``mathlas serve``: hybrid k=10 searches over HTTP on loopback at several
concurrency levels, against the in-process ``Bundle.search`` measured in the same run.

    python scripts/bench_serve.py [--bundle B] [--levels 1,8,32] [--requests 10000] [--max-seconds 120]
                                  [--endpoint api|theoremsearch] [--workers 1] [--json]
    python scripts/bench_serve.py --sequential [--rounds 5] [--json]

It starts a real server (``python -m mathlas.web serve``) on a free port of 127.0.0.1, warms it up,
then for each level runs that many client threads (keep-alive connections, stdlib ``http.client``,
so the load generator costs little CPU) until ``--requests`` requests are done or ``--max-seconds``
pass, whichever comes first; the run stops by itself and stops the server. Reported per level:
requests, errors (non-200 or connection errors), throughput, p50/p99 latency, the server's RSS
before and after; and the in-process baseline (the same queries through ``Bundle.search`` on
1 and on N threads) with the overhead ratio of p50 latencies. Both run with ``$MATHLAS_ENCODER_THREADS``
(default 1, as ``mathlas serve`` sets it). Queries cycle through
``shared/eval/informal-dev.jsonl`` when it is there, else a built-in list. Loopback only.

``--sequential``: one keep-alive client, each query sent to every route back to back, round after
round, so every route meets the same queries under the same load: ``GET /health`` (a route that
does nothing: the middleware's cost), ``GET /api/search`` and TheoremSearch's ``POST /search`` with
the same query and k=10 (repeated queries: the bundle keeps their vectors), and the in-process
``mathlas.service.search`` of the same request. Reported: p50/p95 of each and the ratio of the two
search routes' p50.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
EVAL = Path(os.environ.get("MATHLAS_EVAL", REPO.parent / "shared" / "eval")) / "informal-dev.jsonl"
FALLBACK = ["Nakayama's lemma", "a finitely generated module over a local ring with mM = M is zero",
            "every compact metric space is complete", "Sylow theorems", "the fundamental group of the circle",
            "univalence axiom", "completeness theorem for first order logic", "Hilbert basis theorem",
            "a regular local ring is a domain", "Zorn's lemma implies the axiom of choice"]


def queries() -> list[str]:
    if EVAL.is_file():
        out = [json.loads(line)["query"] for line in EVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
        if out:
            return out
    return FALLBACK


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (worker processes), in MB."""
    total = 0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


class Server:
    def __init__(self, bundle: str | None, workers: int, threads: int | None = None):
        self.err = tempfile.NamedTemporaryFile(mode="w+", suffix=".log", delete=False)
        cmd = [sys.executable, "-m", "mathlas.web", "serve", "--port", "0", "-q", "--workers", str(workers)]
        if bundle:
            cmd += ["--bundle", bundle]
        if threads:
            cmd += ["--threads", str(threads)]
        env = {k: v for k, v in os.environ.items() if k != "MATHLAS_TOKEN"}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.err, env=env)
        deadline = time.monotonic() + 120
        while True:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", Path(self.err.name).read_text())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"server did not start:\n{Path(self.err.name).read_text()}")
            time.sleep(0.05)
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/health")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("server never answered /health")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def request_for(endpoint: str, q: str) -> tuple[str, str, bytes | None, dict]:
    if endpoint == "theoremsearch":
        body = json.dumps({"query": q, "n_results": 10}).encode()
        return "POST", "/search", body, {"Content-Type": "application/json"}
    return "GET", "/api/search?" + urlencode({"q": q, "k": 10}), None, {}


def load(port: int, endpoint: str, qs: list[str], concurrency: int, total: int, max_seconds: float) -> dict:
    lat: list[float] = []
    errors = [0]
    lock = threading.Lock()
    counter = [0]
    stop_at = time.monotonic() + max_seconds

    def take() -> int | None:
        with lock:
            if counter[0] >= total or time.monotonic() > stop_at:
                return None
            counter[0] += 1
            return counter[0]

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine: list[float] = []
        bad = 0
        while (n := take()) is not None:
            method, path, body, headers = request_for(endpoint, qs[n % len(qs)])
            t = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=headers)
                r = conn.getresponse()
                r.read()
                ok = r.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            mine.append(time.perf_counter() - t)
            bad += not ok
        conn.close()
        with lock:
            lat.extend(mine)
            errors[0] += bad

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {"requests": len(lat), "errors": errors[0], "seconds": round(wall, 2),
            "throughput": round(len(lat) / wall, 1), "p50_ms": round(pct(lat, 50) * 1000, 1),
            "p99_ms": round(pct(lat, 99) * 1000, 1)}


def in_process(bundle: str | None, qs: list[str], concurrency: int, total: int) -> dict:
    """The same searches through the library's ``Bundle.search`` in this process, ``concurrency`` threads."""
    import mathlas

    b = mathlas.open_bundle(bundle)
    for q in qs[:5]:
        b.search(q, k=10)

    def one(i: int) -> float:
        t = time.perf_counter()
        b.search(qs[i % len(qs)], k=10)
        return time.perf_counter() - t

    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as ex:
        lat = list(ex.map(one, range(total)))
    wall = time.perf_counter() - t0
    return {"requests": total, "throughput": round(total / wall, 1), "p50_ms": round(pct(lat, 50) * 1000, 2),
            "p99_ms": round(pct(lat, 99) * 1000, 2)}


def sequential(port: int, bundle: str | None, qs: list[str], rounds: int) -> dict:
    """Every query through every route back to back, one keep-alive client (``--sequential``)."""
    from mathlas import service
    from mathlas.request import SearchRequest

    b = __import__("mathlas").open_bundle(bundle)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> None:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            raise SystemExit(f"{method} {path}: HTTP {r.status}")

    routes = {
        "GET /health (does nothing)": lambda q: call("GET", "/health"),
        "GET /api/search": lambda q: call(*request_for("api", q)[:2]),
        "POST /search (TheoremSearch)": lambda q: call(*request_for("theoremsearch", q)),
        "in process: service.search": lambda q: service.search(SearchRequest.make(q, 10), b),
    }
    for q in qs[:10]:  # warm: every route once
        for fn in routes.values():
            fn(q)
    times: dict[str, list[float]] = {name: [] for name in routes}
    for _ in range(rounds):
        for q in qs:
            for name, fn in routes.items():
                t = time.perf_counter()
                fn(q)
                times[name].append(time.perf_counter() - t)
    conn.close()
    out = {name: {"p50_ms": round(pct(xs, 50) * 1000, 3), "p95_ms": round(pct(xs, 95) * 1000, 3)}
           for name, xs in times.items()}
    out["post_over_get_p50"] = round(out["POST /search (TheoremSearch)"]["p50_ms"] / out["GET /api/search"]["p50_ms"], 3)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bundle", help="bundle to serve (default: the default bundle)")
    p.add_argument("--levels", default="1,8,32", help="client concurrency levels (default 1,8,32)")
    p.add_argument("--requests", type=int, default=10_000, help="requests per level, at most (default 10000)")
    p.add_argument("--max-seconds", type=float, default=120.0, help="seconds per level, at most (default 120)")
    p.add_argument("--baseline-requests", type=int, default=1000, help="in-process searches per baseline run")
    p.add_argument("--endpoint", choices=("api", "theoremsearch"), default="api")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--threads", type=int, help="the server's --threads (default: its own)")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--sequential", action="store_true",
                   help="one client: /health, GET /api/search and POST /search on the same queries (see above)")
    p.add_argument("--rounds", type=int, default=5, help="--sequential: rounds over the queries (default 5)")
    args = p.parse_args(argv)
    levels = [int(x) for x in args.levels.split(",")]
    qs = queries()
    # the in-process baseline runs its searches the way the server does (mathlas serve's default:
    # one ONNX thread a search, no spinning); the server inherits the same value
    os.environ.setdefault("MATHLAS_ENCODER_THREADS", "1")
    encoder_threads = os.environ["MATHLAS_ENCODER_THREADS"]

    if args.sequential:
        server = Server(args.bundle, args.workers, args.threads)
        try:
            res = sequential(server.port, args.bundle, qs, args.rounds)
        finally:
            server.stop()
        res.update(queries=len(qs), rounds=args.rounds, cpus=os.cpu_count(), load_average=os.getloadavg())
        if args.json:
            print(json.dumps(res, indent=2))
            return 0
        print(f"{len(qs)} queries x {args.rounds} rounds, one client, {os.cpu_count()} CPUs, "
              f"load average after {res['load_average'][0]:.2f}")
        print("| route | p50 ms | p95 ms |")
        print("|---|---:|---:|")
        for name, v in res.items():
            if isinstance(v, dict):
                print(f"| {name} | {v['p50_ms']} | {v['p95_ms']} |")
        print(f"POST /search / GET /api/search (p50): {res['post_over_get_p50']}x")
        return 0
    base = {c: in_process(args.bundle, qs, c, args.baseline_requests) for c in sorted({1, max(levels)} | set(levels))}
    server = Server(args.bundle, args.workers, args.threads)
    results = []
    try:
        load(server.port, args.endpoint, qs, 2, args.warmup, 60)
        for c in levels:
            before = rss_mb(server.proc.pid)
            r = load(server.port, args.endpoint, qs, c, args.requests, args.max_seconds)
            r.update(concurrency=c, rss_before_mb=round(before, 1), rss_after_mb=round(rss_mb(server.proc.pid), 1),
                     in_process=base[c], overhead_p50=round(r["p50_ms"] / max(base[c]["p50_ms"], 1e-9), 2))
            results.append(r)
            print(f"c={c}: {r}", file=sys.stderr, flush=True)
    finally:
        server.stop()
    out = {"endpoint": args.endpoint, "workers": args.workers, "threads": args.threads, "encoder_threads": encoder_threads,
           "queries": len(qs), "cpus": os.cpu_count(),
           "load_average": os.getloadavg(), "levels": results}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"endpoint {args.endpoint}, {args.workers} worker(s), encoder threads {encoder_threads}, "
          f"{len(qs)} distinct queries, {os.cpu_count()} CPUs, "
          f"load average before {out['load_average'][0]:.2f}")
    print("| concurrency | requests | errors | req/s | p50 ms | p99 ms | RSS before → after MB | in-process req/s | "
          "in-process p50 ms | overhead (p50) |")
    print("|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    for r in results:
        b = r["in_process"]
        print(f"| {r['concurrency']} | {r['requests']:,} | {r['errors']} | {r['throughput']} | {r['p50_ms']} | {r['p99_ms']} | "
              f"{r['rss_before_mb']} → {r['rss_after_mb']} | {b['throughput']} | {b['p50_ms']} | {r['overhead_p50']}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
