"""Load benchmark of ``mathlas serve``: hybrid k=10 searches over HTTP on loopback at several
concurrency levels, against the in-process library measured in the same run.

    python scripts/bench_serve.py [--bundle B] [--levels 1,8,32] [--requests 10000] [--max-seconds 120]
                                  [--endpoint api|theoremsearch] [--workers 1] [--repeat 1]
                                  [--compare DIR] [--json]
    python scripts/bench_serve.py --sequential [--rounds 5] [--compare DIR] [--json]

It starts a real server (``python -m mathlas.web serve``) on a free port of 127.0.0.1, warms it up,
then for each level runs that many client threads (keep-alive connections, stdlib ``http.client``,
so the load generator costs little CPU) until ``--requests`` requests are done or ``--max-seconds``
pass, whichever comes first; the run stops by itself and stops the server. Reported per level:
requests, errors (non-200 or connection errors), throughput, p50/p99 latency, the server's CPU
time per request (user and system, all its threads) beside the CPU time of one in-process
``mathlas.service.search`` (this process, one thread), its RSS before and after; the in-process
baseline (the same queries through ``Bundle.search`` on that many threads) with the overhead ratio
of p50 latencies; and the server's throughput over that of one
in-process thread calling ``mathlas.service.search`` (the call every surface makes: what the
server adds to the service) and one calling ``Bundle.search`` (the bare ranking, without the
service's findings and match note). Each baseline is measured right before its level (``--repeat R`` runs the
levels R times over and reports medians, so a machine whose load changes meets both sides alike),
with the load average at the time. Both run with ``$MATHLAS_ENCODER_THREADS`` (default 1, as
``mathlas serve`` sets it). Queries cycle through ``shared/eval/informal-dev.jsonl`` when it is
there, else a built-in list. Loopback only.

``--sequential``: one keep-alive client, each query sent to every route back to back, round after
round, so every route meets the same queries under the same load: ``GET /health`` (a route that
does nothing: the middleware's cost), once after the client's own in-process search (the server
idle for as long) and then again at once, ``GET /api/search`` and TheoremSearch's ``POST /search``
with the same query and k=10 (repeated queries: the bundle keeps their vectors), and the in-process
``mathlas.service.search`` of the same request; and the floor: ``/health`` of a bare ASGI app
answering ``{}`` under the same uvicorn settings, protocol and limits (what the HTTP server and the
machine cost before any middleware). Reported: p50/p95 of each and the ratio of the two search
routes' p50.

``--compare DIR``: a second server run from the source tree ``DIR`` (a checkout of another
version: ``git worktree add /tmp/before HEAD~1``), measured in the same run, its steps alternated
with this tree's, so that a change is compared with what it replaced under the same load.
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
from collections.abc import Callable
from typing import Any
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


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) of a process and its children (worker processes), in seconds."""
    total = 0.0
    pids = [pid]
    try:
        pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


# The floor of --sequential: an ASGI app that answers every request 200 "{}" at once, under the same
# uvicorn settings, protocol and per-connection limits as mathlas serve: what the HTTP server and the
# machine cost before any middleware or route.
FLOOR = """
import sys, uvicorn
from mathlas.cli.serve import UVICORN_OPTIONS, _bind
from mathlas.web.app import ServeConfig
from mathlas.web.limits import configure

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})

sock = _bind("127.0.0.1", 0)
print(f"floor: http://127.0.0.1:{sock.getsockname()[1]}/", file=sys.stderr, flush=True)
uvicorn.Server(configure(uvicorn.Config(app, **UVICORN_OPTIONS), ServeConfig().limits)).run(sockets=[sock])
"""


class Server:
    def __init__(self, bundle: str | None, workers: int, threads: int | None = None, tree: str | None = None,
                 floor: bool = False):
        self.err = tempfile.NamedTemporaryFile(mode="w+", suffix=".log", delete=False)
        cmd = [sys.executable, "-m", "mathlas.web", "serve", "--port", "0", "-q", "--workers", str(workers)]
        if floor:
            cmd = [sys.executable, "-c", FLOOR]
        if bundle and not floor:
            cmd += ["--bundle", bundle]
        if threads and not floor:
            cmd += ["--threads", str(threads)]
        env = {k: v for k, v in os.environ.items() if k != "MATHLAS_TOKEN"}
        if tree:  # another version's source tree: its package shadows this checkout's
            env["PYTHONPATH"] = os.pathsep.join(x for x in (str(Path(tree).resolve()), env.get("PYTHONPATH")) if x)
        # ``python -m`` puts the working directory first on sys.path: run where the package to serve is
        cwd = Path(tree).resolve() if tree else REPO
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.err, env=env, cwd=cwd)
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


def in_process(bundle: str | None, qs: list[str], concurrency: int, total: int, call: str = "bundle") -> dict:
    """The same searches in this process on ``concurrency`` threads: through the library's
    ``Bundle.search`` (``call="bundle"``), or through ``mathlas.service.search``, the call every
    surface makes (the CLI, MCP and both HTTP routes; ``call="service"``: findings and the match
    note included)."""
    import mathlas
    from mathlas import service
    from mathlas.request import SearchRequest

    b = mathlas.open_bundle(bundle)

    def search(q: str) -> None:
        if call == "service":
            service.search(SearchRequest.make(q, 10), b)
        else:
            b.search(q, k=10)

    for q in qs[:5]:
        search(q)

    def one(i: int) -> float:
        t = time.perf_counter()
        search(qs[i % len(qs)])
        return time.perf_counter() - t

    load_before = os.getloadavg()[0]
    t0, cpu0 = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(concurrency) as ex:
        lat = list(ex.map(one, range(total)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return {"requests": total, "throughput": round(total / wall, 1), "p50_ms": round(pct(lat, 50) * 1000, 2),
            "p99_ms": round(pct(lat, 99) * 1000, 2), "cpu_ms": round(cpu * 1000 / total, 2),
            "load_average": round(load_before, 2)}


def sequential(servers: dict[str, int], bundle: str | None, qs: list[str], rounds: int,
               floor: int | None = None) -> dict:
    """Every query through every route of every server back to back, one keep-alive client per
    server (``--sequential``); ``floor``: the port of the bare app (``FLOOR``), asked for /health
    the same two ways."""
    from mathlas import service
    from mathlas.request import SearchRequest

    b = __import__("mathlas").open_bundle(bundle)
    ports = {**servers, **({"floor": floor} if floor else {})}
    conns = {label: http.client.HTTPConnection("127.0.0.1", port, timeout=60) for label, port in ports.items()}

    def call(label: str, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> None:
        conn = conns[label]
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # the server closed a keep-alive connection left idle past its limit (5 s: a loaded
            # machine's first in-process search can take that long): connect again, once
            conn.close()
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
        r.read()
        if r.status != 200:
            raise SystemExit(f"{label}: {method} {path}: HTTP {r.status}")

    names = {label: "" if len(servers) == 1 else f" [{label}]" for label in servers}
    search = "in process: service.search"

    def steps(order: list[str]) -> list[tuple[str, Callable[[str], None]]]:
        """One query's steps: per server, the client's own search (the server idle meanwhile) then
        /health twice; then each search route on each server, the servers in ``order``."""
        out: list[tuple[str, Callable[[str], None]]] = []
        if floor:
            out.append((search, lambda q: service.search(SearchRequest.make(q, 10), b)))
            out.append(("GET /health of a bare ASGI app (the floor), after idle", lambda q: call("floor", "GET", "/health")))
            out.append(("GET /health of a bare ASGI app (the floor), at once", lambda q: call("floor", "GET", "/health")))
        for label in order:
            out.append((search, lambda q: service.search(SearchRequest.make(q, 10), b)))
            out.append((f"GET /health (does nothing), after idle{names[label]}", lambda q, lb=label: call(lb, "GET", "/health")))
            out.append((f"GET /health (does nothing), at once{names[label]}", lambda q, lb=label: call(lb, "GET", "/health")))
        for label in order:
            out.append((f"GET /api/search{names[label]}", lambda q, lb=label: call(lb, *request_for("api", q)[:2])))
        for label in order:
            out.append((f"POST /search (TheoremSearch){names[label]}",
                        lambda q, lb=label: call(lb, *request_for("theoremsearch", q))))
        return out

    order = list(servers)
    service.search(SearchRequest.make(qs[0], 10), b)  # the in-process bundle and encoder open before any step
    for q in qs[:10]:  # warm: every route once
        for _, fn in steps(order):
            fn(q)
    times: dict[str, list[float]] = {name: [] for name, _ in steps(order)}
    for _ in range(rounds):
        plan = steps(order)
        for q in qs:
            for name, fn in plan:
                t = time.perf_counter()
                fn(q)
                times[name].append(time.perf_counter() - t)
        order.reverse()  # with --compare, which server comes first alternates round by round
    for conn in conns.values():
        conn.close()
    out: dict[str, Any] = {name: {"p50_ms": round(pct(xs, 50) * 1000, 3), "p95_ms": round(pct(xs, 95) * 1000, 3)}
                           for name, xs in times.items()}
    out["post_over_get_p50"] = {
        label: round(out[f"POST /search (TheoremSearch){names[label]}"]["p50_ms"]
                     / out[f"GET /api/search{names[label]}"]["p50_ms"], 3) for label in servers}
    return out


def median(xs: list[float]) -> float:
    s = sorted(xs)
    return round(s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2, 3)


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
    p.add_argument("--repeat", type=int, default=1, help="run the levels this many times over; medians reported")
    p.add_argument("--compare", metavar="DIR", help="also serve from the source tree DIR (another version), "
                                                    "its steps alternated with this tree's")
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
    trees = {"this tree": None} | ({"compared": args.compare} if args.compare else {})
    load_start = os.getloadavg()

    servers: dict[str, Server] = {}
    try:
        for label, tree in trees.items():
            servers[label] = Server(args.bundle, args.workers, args.threads, tree)
        if args.sequential:
            floor = Server(None, 1, floor=True)
            try:
                res = sequential({label: s.port for label, s in servers.items()}, args.bundle, qs, args.rounds,
                                 floor=floor.port)
            finally:
                floor.stop()
            res.update(queries=len(qs), rounds=args.rounds, cpus=os.cpu_count(),
                       load_average_before=load_start, load_average_after=os.getloadavg(), compare=args.compare)
            if args.json:
                print(json.dumps(res, indent=2))
                return 0
            print(f"{len(qs)} queries x {args.rounds} rounds, one client, {os.cpu_count()} CPUs, load average "
                  f"{load_start[0]:.2f} before, {res['load_average_after'][0]:.2f} after"
                  + (f"; compared: {args.compare}" if args.compare else ""))
            print("| route | p50 ms | p95 ms |")
            print("|---|---:|---:|")
            for name, v in res.items():
                if isinstance(v, dict) and "p50_ms" in v:
                    print(f"| {name} | {v['p50_ms']} | {v['p95_ms']} |")
            for label, ratio in res["post_over_get_p50"].items():
                print(f"POST /search / GET /api/search (p50), {label}: {ratio}x")
            return 0
        for s in servers.values():
            load(s.port, args.endpoint, qs, 2, args.warmup, 60)
        runs: list[dict] = []
        for rep in range(args.repeat):
            for li, c in enumerate(levels):
                # which tree goes first alternates level by level and repeat by repeat, so that each
                # level has each tree first as often (reversing once a level gave an even number of
                # levels the same order at every repeat)
                order = list(servers) if (rep + li) % 2 == 0 else list(servers)[::-1]
                base1 = in_process(args.bundle, qs, 1, args.baseline_requests)
                service1 = in_process(args.bundle, qs, 1, args.baseline_requests, call="service")
                base = base1 if c == 1 else in_process(args.bundle, qs, c, args.baseline_requests)
                for label in order:
                    server = servers[label]
                    before = rss_mb(server.proc.pid)
                    load_before = os.getloadavg()[0]
                    cpu_before = cpu_seconds(server.proc.pid)
                    r = load(server.port, args.endpoint, qs, c, args.requests, args.max_seconds)
                    r.update(server_cpu_ms=round((cpu_seconds(server.proc.pid) - cpu_before) * 1000
                                                 / max(r["requests"], 1), 2))
                    r.update(server=label, repeat=rep, concurrency=c, rss_before_mb=round(before, 1),
                             rss_after_mb=round(rss_mb(server.proc.pid), 1), load_average=round(load_before, 2),
                             in_process=base, in_process_1=base1, service_1=service1,
                             overhead_p50=round(r["p50_ms"] / max(base["p50_ms"], 1e-9), 2),
                             over_one_thread=round(r["throughput"] / max(base1["throughput"], 1e-9), 2),
                             over_one_service_thread=round(r["throughput"] / max(service1["throughput"], 1e-9), 2))
                    runs.append(r)
                    print(f"{label} c={c}: {r}", file=sys.stderr, flush=True)
    finally:
        for s in servers.values():
            s.stop()
    summary = []
    for label in servers:
        for c in levels:
            mine = [r for r in runs if r["server"] == label and r["concurrency"] == c]
            summary.append({
                "server": label, "concurrency": c, "repeats": len(mine), "requests": sum(r["requests"] for r in mine),
                "errors": sum(r["errors"] for r in mine), "throughput": median([r["throughput"] for r in mine]),
                "p50_ms": median([r["p50_ms"] for r in mine]), "p99_ms": median([r["p99_ms"] for r in mine]),
                "server_cpu_ms": median([r["server_cpu_ms"] for r in mine]),
                "rss_before_mb": mine[0]["rss_before_mb"], "rss_after_mb": mine[-1]["rss_after_mb"],
                "in_process_throughput": median([r["in_process"]["throughput"] for r in mine]),
                "in_process_p50_ms": median([r["in_process"]["p50_ms"] for r in mine]),
                "in_process_1_throughput": median([r["in_process_1"]["throughput"] for r in mine]),
                "overhead_p50": median([r["overhead_p50"] for r in mine]),
                "service_1_throughput": median([r["service_1"]["throughput"] for r in mine]),
                "service_1_cpu_ms": median([r["service_1"]["cpu_ms"] for r in mine]),
                "over_one_thread": median([r["over_one_thread"] for r in mine]),
                "over_one_thread_each": [r["over_one_thread"] for r in mine],
                "over_one_service_thread": median([r["over_one_service_thread"] for r in mine]),
                "over_one_service_thread_each": [r["over_one_service_thread"] for r in mine],
                "load_average": [r["load_average"] for r in mine]})
    out = {"endpoint": args.endpoint, "workers": args.workers, "threads": args.threads, "encoder_threads": encoder_threads,
           "queries": len(qs), "cpus": os.cpu_count(), "compare": args.compare,
           "load_average": load_start, "load_average_after": os.getloadavg(), "levels": summary, "runs": runs}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"endpoint {args.endpoint}, {args.workers} worker(s), encoder threads {encoder_threads}, "
          f"{len(qs)} distinct queries, {os.cpu_count()} CPUs, {args.repeat} repeat(s) (medians), "
          f"load average {load_start[0]:.2f} before, {out['load_average_after'][0]:.2f} after"
          + (f"; compared: {args.compare}" if args.compare else ""))
    print("| server | concurrency | requests | errors | req/s | p50 ms | p99 ms | server CPU ms a request | "
          "CPU ms of one service.search in process | RSS before → after MB | "
          "in-process Bundle.search req/s, same threads | p50 ms | overhead (p50) | "
          "req/s over one thread of service.search | over one thread of Bundle.search | load average |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for r in summary:
        service_each = ", ".join(f"{x}" for x in r["over_one_service_thread_each"])
        each = ", ".join(f"{x}" for x in r["over_one_thread_each"])
        print(f"| {r['server']} | {r['concurrency']} | {r['requests']:,} | {r['errors']} | {r['throughput']} | "
              f"{r['p50_ms']} | {r['p99_ms']} | {r['server_cpu_ms']} | {r['service_1_cpu_ms']} | "
              f"{r['rss_before_mb']} → {r['rss_after_mb']} | "
              f"{r['in_process_throughput']} | {r['in_process_p50_ms']} | {r['overhead_p50']}× | "
              f"{r['over_one_service_thread']}× ({service_each}) | {r['over_one_thread']}× ({each}) | "
              f"{', '.join(str(x) for x in r['load_average'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
