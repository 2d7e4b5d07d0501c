"""Library calls of ``mathlas serve`` on worker threads, under the request timeout (``Runner``).

The library is synchronous and thread-safe; the event loop only parses, routes and writes. A
request's call goes to an idle worker thread, or waits, first come first served, for one of
``threads`` (``--threads``: at most that many library calls run at once per process), and its
answer comes back to the loop in one ``call_soon_threadsafe``. Past ``timeout`` (``--timeout``), counted from the queueing, the
request gets 504: a call still queued then never runs, and a call already running is abandoned
(its result, when it comes, is dropped) while its thread stays busy until it returns, so a call
that hangs holds one of the ``threads`` and never adds a thread.

Each request used to pass through anyio's ``to_thread.run_sync`` with a ``CapacityLimiter`` and a
``fail_after`` scope: a checkpoint (one more turn of the event loop), the limiter's acquire and
release, a cancel scope and a copied context, about a fifth of the event loop's time for a search
(docs/http.md, "Round 4"). This does the same with a stack of idle threads, one future and one timer.
"""
from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
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
    ``ApiError`` that ``library_error`` makes of them. A thread starts when a call finds none idle
    (at most ``threads``); threads stop with ``close`` (the app's shutdown).

    The idle thread that finished last takes the next call (a stack, as anyio's pool has it): at
    one client one thread serves every request, its caches warm, where a shared queue hands each
    call to the thread idle longest. Calls that find every thread busy wait in order."""

    def __init__(self, timeout: float, threads: int, library_error: Callable[[MathlasError], ApiError]):
        self.timeout = timeout
        self.threads = threads
        self.library_error = library_error
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue] = []   # each idle thread's inbox, the last to finish on top
        self._waiting: deque[tuple] = deque()      # calls that found every thread busy
        self._inboxes: list[queue.SimpleQueue] = []

    async def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        call = (loop, future, fn, args)
        with self._lock:
            if self._idle:
                inbox = self._idle.pop()
            elif len(self._inboxes) < self.threads:
                inbox = self._start()
            else:
                inbox = None
                self._waiting.append(call)
        if inbox is not None:
            inbox.put(call)
        timer = loop.call_later(self.timeout, _expire, future)
        try:
            return await future
        except TimedOut:
            raise ApiError(504, f"the request took longer than {self.timeout:g} s (mathlas serve --timeout)") from None
        except MathlasError as e:
            raise self.library_error(e) from None
        finally:
            timer.cancel()

    def _start(self) -> queue.SimpleQueue:
        """A new worker thread's inbox (under the lock)."""
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._inboxes.append(inbox)
        threading.Thread(target=self._work, args=(inbox,), name=f"mathlas-worker-{len(self._inboxes)}",
                         daemon=True).start()
        return inbox

    def _work(self, inbox: queue.SimpleQueue) -> None:
        while (call := inbox.get()) is not None:
            while call is not None:
                self._run(*call)
                with self._lock:
                    call = self._waiting.popleft() if self._waiting else None
                    if call is None:
                        self._idle.append(inbox)

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop, future: asyncio.Future, fn: Callable[..., Any], args: tuple) -> None:
        if future.done():  # timed out (or its request cancelled) while it waited: nobody waits for it
            return
        result, exc = None, None
        try:
            result = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed to the request, which re-raises it
            exc = RuntimeError("the library call raised StopIteration") if isinstance(e, StopIteration) else e
        try:
            loop.call_soon_threadsafe(_settle, future, result, exc)
        except RuntimeError:  # the loop has closed: the server is gone
            pass

    def close(self) -> None:
        """Stop the worker threads, each once its call (if any) has run (the app's shutdown)."""
        with self._lock:
            inboxes, self._inboxes, self._idle = self._inboxes, [], []
        for inbox in inboxes:
            inbox.put(None)
