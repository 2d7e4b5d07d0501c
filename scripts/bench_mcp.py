#!/usr/bin/env python3
"""Start-up and call latency of the MCP server (``python -m mathlas.mcp``) over real stdio pipes.

For each run a fresh server process is spawned and driven with raw JSON-RPC lines:

* ``tools/list``: wall time from spawning the process to the ``tools/list`` answer (after
  ``initialize``): what an MCP client waits before it can show mathlas' tools;
* ``first search``: the first ``search_existing_math`` call (opens the bundle, loads the BM25
  index and the ONNX query encoder);
* ``warm search``: median of later searches with other queries, and a warm ``get_by_id``.

Baselines in the same run: ``python -c pass`` and ``python -c "import mcp"`` (the SDK's own import
time is the floor under any server built on it). Medians over ``--runs``; OS page cache warm.

    python scripts/bench_mcp.py [--bundle B] [--runs 5] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

QUERIES = [
    "a finitely generated module M over a local ring with M = mM is zero",
    "every compact metric space is separable",
    "a type with decidable equality is a set",
    "Hilbert basis theorem",
    "the compactness theorem for first-order logic",
    "a group of prime order is cyclic",
]
PROTOCOL = "2025-11-25"


class RawServer:
    """A server process spoken to in newline-delimited JSON-RPC."""

    def __init__(self, env: dict[str, str]):
        self.proc = subprocess.Popen([sys.executable, "-m", "mathlas.mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
                                     bufsize=1)
        self.next_id = 0

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed stdout during {method}")
            reply = json.loads(line)  # any non-JSON line on stdout fails here
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def notify(self, method: str) -> None:
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def call(self, tool: str, **arguments) -> dict:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{tool}: {result['content'][0]['text']}")
        return result["structuredContent"]

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def one_run(env: dict[str, str], bundle: str | None) -> dict[str, float]:
    extra = {"bundle": bundle} if bundle else {}
    t0 = time.perf_counter()
    s = RawServer(env)
    try:
        s.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                 "clientInfo": {"name": "bench_mcp", "version": "0"}})
        t_init = time.perf_counter() - t0
        s.notify("notifications/initialized")
        tools = s.request("tools/list")["tools"]
        t_list = time.perf_counter() - t0
        t = time.perf_counter()
        first = s.call("search_existing_math", query=QUERIES[0], k=10, **extra)
        t_first = time.perf_counter() - t
        warm = []
        for q in QUERIES[1:]:
            t = time.perf_counter()
            s.call("search_existing_math", query=q, k=10, **extra)
            warm.append(time.perf_counter() - t)
        t = time.perf_counter()
        s.call("get_by_id", id=first["hits"][0]["id"], **extra)
        t_get = time.perf_counter() - t
    finally:
        s.close()
    return {"initialize": t_init, "tools_list": t_list, "n_tools": len(tools), "first_search": t_first,
            "warm_search": statistics.median(warm), "warm_get_by_id": t_get, "bundle": first["bundle"]}


def until_ready(code: str) -> float:
    """Spawn ``python -c code`` and time until it prints its first line (not until it exits: the
    teardown of a big module graph is not something a client waits for)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code + "; print('ready', flush=True)"],
                            stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    t = time.perf_counter() - t0
    proc.wait()
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", help="bundle for the searches (default: $MATHLAS_BUNDLE or the default bundle)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    env = dict(os.environ)

    print("warming up (first use may install the default bundle)...", file=sys.stderr)
    one_run(env, args.bundle)
    # Interleaved, so a busy machine slows baselines and server alike.
    runs, passes, imports = [], [], []
    for i in range(args.runs):
        passes.append(until_ready("pass"))
        imports.append(until_ready("import mcp"))
        runs.append(one_run(env, args.bundle))
        print(f"run {i + 1}/{args.runs}: import mcp {imports[-1]:.3f} s, tools/list {runs[-1]['tools_list']:.3f} s",
              file=sys.stderr)
    base_pass, base_mcp = statistics.median(passes), statistics.median(imports)
    keys = ("initialize", "tools_list", "first_search", "warm_search", "warm_get_by_id")
    med = {k: statistics.median(r[k] for r in runs) for k in keys}
    out = {"runs": args.runs, "cpus": os.cpu_count(), "bundle": runs[0]["bundle"], "n_tools": runs[0]["n_tools"],
           "python_pass": base_pass, "import_mcp": base_mcp, **med,
           "tools_list_min": min(r["tools_list"] for r in runs), "tools_list_max": max(r["tools_list"] for r in runs)}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"bundle {out['bundle']}, {out['n_tools']} tools, {args.runs} runs (medians), {out['cpus']} CPUs")
    print(f"  python -c pass                 {base_pass * 1000:8.0f} ms")
    print(f"  python -c 'import mcp'         {base_mcp * 1000:8.0f} ms")
    print(f"  spawn -> initialize answer     {med['initialize'] * 1000:8.0f} ms")
    print(f"  spawn -> tools/list answer     {med['tools_list'] * 1000:8.0f} ms"
          f"   (min {out['tools_list_min'] * 1000:.0f}, max {out['tools_list_max'] * 1000:.0f};"
          f" {(med['tools_list'] - base_mcp) * 1000:+.0f} ms over import mcp)")
    print(f"  first search_existing_math     {med['first_search'] * 1000:8.0f} ms   (opens bundle, loads encoder)")
    print(f"  warm search_existing_math      {med['warm_search'] * 1000:8.0f} ms")
    print(f"  warm get_by_id                 {med['warm_get_by_id'] * 1000:8.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
