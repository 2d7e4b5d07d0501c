"""Run heavy numeric work in a child process that is killed when its time is up.

mpmath and sympy can spend unbounded time (a slowly converging series, PSLQ on an unlucky input,
``gamma(10^10^10)``), and a Python thread cannot be stopped. So every numeric tool does its real work
in a child process, and the child is killed (SIGKILL) when the time bound runs out.

Children come from a small server process (``_zygote.py``) that imports mpmath and sympy once and
forks one child per job: a job starts in milliseconds, the caller's threads (an MCP server has several)
are never forked, and the caller's ``__main__`` is never re-imported (multiprocessing's spawn and
forkserver methods both do that). A child may send partial results before its answer, so a search
that runs out of time still reports what it confirmed. Nothing the children print reaches the caller's
stdout, which may be an MCP stdio stream.

POSIX only; elsewhere the job runs in a thread and a timeout abandons it rather than killing it.
"""
from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from collections.abc import Callable

from mathlas.checks import is_number, number
from mathlas.errors import MathlasError, UsageError
from mathlas.progress import TICK, tick

_CONCURRENCY = threading.BoundedSemaphore(max(2, 2 * (os.cpu_count() or 1)))
_lock = threading.Lock()
_server: subprocess.Popen | None = None
_control: socket.socket | None = None


@dataclass
class Outcome:
    """What a bounded run produced: the final value, or the partial values sent before a timeout."""

    value: Any = None
    partial: list = field(default_factory=list)
    timed_out: bool = False
    elapsed: float = 0.0
    crashed: str | None = None  # the worker died without answering (out of memory, a signal)


def _start_server() -> None:
    global _server, _control
    parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])  # so the server imports this very mathlas
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    child_fd = child_sock.fileno()
    _server = subprocess.Popen([sys.executable, "-m", "mathlas.tools.numeric._zygote", str(child_fd)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env,
                               pass_fds=(child_fd,), close_fds=True)
    child_sock.close()
    _control = parent_sock


def _stop_server() -> None:
    global _server, _control
    if _control is not None:
        _control.close()
        _control = None
    if _server is not None:
        try:
            _server.wait(2)
        except subprocess.TimeoutExpired:
            _server.kill()
        _server = None


atexit.register(_stop_server)


def warm_up() -> None:
    """Start the worker server now (it loads mpmath and sympy, about a second) instead of on first use."""
    if os.name != "posix":
        return
    with _lock:
        if _server is None or _server.poll() is not None:
            _start_server()


def _launch(fn: Callable, args: tuple, kwargs: dict, seconds: float) -> tuple[int, int]:
    """Send a job with its time bound to the server; return (child pid, read end of the child's pipe)."""
    payload = pickle.dumps((fn, args, kwargs, seconds), protocol=pickle.HIGHEST_PROTOCOL)
    with _lock:
        for attempt in (0, 1):
            if _server is None or _server.poll() is not None:
                _start_server()
            r, w = os.pipe()
            try:
                socket.send_fds(_control, [struct.pack("!Q", len(payload)) + payload], [w])
                data = b""
                while len(data) < 8:
                    chunk = _control.recv(8 - len(data))
                    if not chunk:
                        raise ConnectionError("numeric worker server closed")
                    data += chunk
                os.close(w)
                return struct.unpack("!Q", data)[0], r
            except OSError:
                os.close(r)
                try:
                    os.close(w)
                except OSError:
                    pass
                _stop_server()
                if attempt:
                    raise MathlasError("could not start the numeric worker process") from None
    raise AssertionError("unreachable")


def _read_messages(r: int, start: float, deadline: float, out: Outcome) -> tuple[str, Any] | None:
    """The child's final message, collecting its partial ones; None on timeout. Every ``TICK``
    seconds of silence it reports progress and raises ``Cancelled`` if the caller cancelled."""
    buf = b""
    while True:
        now = time.monotonic()
        remaining = deadline - now
        if remaining <= 0:
            out.timed_out = True
            return None
        tick(now - start, deadline - start, f"computing ({len(out.partial)} partial results)")
        ready, _, _ = select.select([r], [], [], min(remaining, TICK))
        if not ready:
            continue
        chunk = os.read(r, 1 << 20)
        if not chunk:
            out.crashed = "the worker process died without answering (killed, or out of memory)"
            return None
        buf += chunk
        while len(buf) >= 8:
            (n,) = struct.unpack("!Q", buf[:8])
            if len(buf) < 8 + n:
                break
            kind, payload = pickle.loads(buf[8:8 + n])
            buf = buf[8 + n:]
            if kind == "partial":
                out.partial.append(payload)
            else:
                return kind, payload


def run_bounded(fn: Callable, *args: Any, timeout: float, **kwargs: Any) -> Outcome:
    """Call ``fn(*args, send=..., **kwargs)`` in a child process; kill it after ``timeout`` seconds.

    ``fn`` must be a module-level function (it is pickled by name) and ``send(item)`` ships a partial
    result. A ``UsageError`` raised inside is raised again here; any other exception becomes
    ``MathlasError``. On timeout the child is killed and ``Outcome.timed_out`` is set, with whatever
    partial results arrived. While it waits it reports progress (``mathlas.progress``); when the
    caller cancels, the child is killed and ``Cancelled`` raised.
    """
    start = time.monotonic()
    deadline = start + timeout
    out = Outcome()
    if os.name != "posix":
        return _run_in_thread(fn, args, kwargs, deadline, out)
    if not _CONCURRENCY.acquire(timeout=timeout):
        out.timed_out = True
        out.elapsed = time.monotonic() - start
        return out
    try:
        pid, r = _launch(fn, args, kwargs, timeout)
        final = None
        try:
            final = _read_messages(r, start, deadline, out)
        finally:  # a timeout or a cancelled call: the child goes
            if final is None:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            os.close(r)
    finally:
        _CONCURRENCY.release()
    out.elapsed = time.monotonic() - start
    if final is not None:
        kind, payload = final
        if kind == "done":
            out.value = payload
        elif kind == "usage":
            raise UsageError(payload)
        elif kind == "crash":
            out.crashed = payload
        else:
            raise MathlasError(f"numeric worker failed: {payload}")
    return out


def _run_in_thread(fn, args, kwargs, deadline, out: Outcome) -> Outcome:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args, send=out.partial.append, **kwargs)
        except BaseException as exc:  # carried back to the caller below
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(max(0.0, deadline - time.monotonic()))
    if t.is_alive():
        out.timed_out = True
    elif "error" in box:
        if isinstance(box["error"], UsageError):
            raise box["error"]
        raise MathlasError(f"numeric worker failed: {box['error']}")
    else:
        out.value = box.get("value")
    return out


def check_timeout(timeout: float) -> float:
    """Validate a ``timeout`` argument (seconds)."""
    if is_number(timeout) and timeout <= 0:  # (0, 600]: zero seconds is no time at all
        raise UsageError(f"timeout must be a number of seconds in (0, 600], got {timeout!r}")
    return number(timeout, "timeout (seconds)", maximum=600)
