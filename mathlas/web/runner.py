"""Library calls of ``mathlas serve`` on worker threads, under the request timeout (``Runner``).

The library is synchronous and thread-safe; the event loop only parses, routes and writes. A
request's call is queued, first come first served, for ``threads`` worker threads (``--threads``:
at most that many library calls run at once per process), and its answer comes back to the loop
in one ``call_soon_threadsafe``. Past ``timeout`` (``--timeout``), counted from the queueing, the
request gets 504: a call still queued then never runs, and a call already running is abandoned
(its result, when it comes, is dropped) while its thread stays busy until it returns, so a call
that hangs holds one of the ``threads`` and never adds a thread.

Each request used to pass through anyio's ``to_thread.run_sync`` with a ``CapacityLimiter`` and a
``fail_after`` scope: a checkpoint (one more turn of the event loop), the limiter's acquire and
release, a cancel scope and a copied context, about a fifth of the event loop's time for a search
(docs/http.md, "Round 4"). This does the same with one queue, one future and one timer.
"""
from __future__ import annotations

import asyncio
import queue
import threading
from typing import Any
from collections.abc import Callable

from mathlas.errors import MathlasError
from mathlas.web.guard import ApiError


class TimedOut(Exception):
    """A library call ran past the request timeout (answered 504)."""


def _settle(future: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    """On the event loop: hand a worker's result to the request waiting for it (unless that
    request has gone: timed out or cancelled)."""
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


def _expire(future: asyncio.Future) -> None:
    if not future.done():
        future.set_exception(TimedOut())


class Runner:
    """Runs a library call on one of ``threads`` worker threads and waits for it on the event loop,
    at most ``timeout`` seconds (past it: ``ApiError`` 504). The library's own errors become the
    ``ApiError`` that ``library_error`` makes of them. Threads start with the first call and stop
    with ``close`` (the app's shutdown)."""

    def __init__(self, timeout: float, threads: int, library_error: Callable[[MathlasError], ApiError]):
        self.timeout = timeout
        self.threads = threads
        self.library_error = library_error
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._workers: list[threading.Thread] = []
        self._lock = threading.Lock()

    async def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if len(self._workers) < self.threads:
            self._start()
        self._queue.put((loop, future, fn, args))
        timer = loop.call_later(self.timeout, _expire, future)
        try:
            return await future
        except TimedOut:
            raise ApiError(504, f"the request took longer than {self.timeout:g} s (mathlas serve --timeout)") from None
        except MathlasError as e:
            raise self.library_error(e) from None
        finally:
            timer.cancel()

    def _start(self) -> None:
        with self._lock:
            while len(self._workers) < self.threads:
                t = threading.Thread(target=self._work, name=f"mathlas-worker-{len(self._workers) + 1}", daemon=True)
                t.start()
                self._workers.append(t)

    def _work(self) -> None:
        get = self._queue.get
        while (item := get()) is not None:
            loop, future, fn, args = item
            del item
            if future.done():  # timed out (or its request cancelled) while queued: nobody waits for it
                continue
            result, exc = None, None
            try:
                result = fn(*args)
            except BaseException as e:  # noqa: BLE001 - handed to the request, which re-raises it
                exc = RuntimeError("the library call raised StopIteration") if isinstance(e, StopIteration) else e
            try:
                loop.call_soon_threadsafe(_settle, future, result, exc)
            except RuntimeError:  # the loop has closed: the server is gone
                return
            del loop, future, fn, args, result, exc

    def close(self) -> None:
        """Stop the worker threads once the calls queued before have run (the app's shutdown)."""
        with self._lock:
            for _ in self._workers:
                self._queue.put(None)
            self._workers = []
