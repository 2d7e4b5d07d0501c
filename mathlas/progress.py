"""Progress and cancellation for the long tools, without knowing who listens.

A tool that can run for minutes (``verify_formal``, ``funsearch``, the numeric tools) waits on a
child process: Lean, the FunSearch sandbox, the numeric worker. While it waits it calls
``tick(done, total, message)`` every ``TICK`` seconds. ``tick`` reports progress to whoever started
the call (the MCP server sends ``notifications/progress``; the library and the CLI listen to
nothing) and raises ``Cancelled`` once the caller has cancelled, so the waiting code kills its
child and leaves: a cancelled call leaves no process behind.

The caller runs the tool inside ``running(call)``, on the thread that runs the tool::

    call = Call(on_progress=lambda done, total, message: ...)
    with running(call):
        verify_formal(...)          # another thread may call call.cancel()

Without ``running``, ``current()`` is a call nobody listens to and nobody cancels.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator

from mathlas.errors import Cancelled

TICK = 0.25          # seconds between two looks at the cancel flag while a child runs
REPORT_EVERY = 1.0   # seconds between two progress reports of the same kind

ProgressFn = Callable[[float, "float | None", "str | None"], None]


class Call:
    """One running tool call: where its progress goes and whether it was cancelled."""

    def __init__(self, on_progress: ProgressFn | None = None):
        self.on_progress = on_progress
        self._cancelled = threading.Event()
        self._last = 0.0
        self._message: str | None = None

    def cancel(self) -> None:
        """Ask the call to stop (thread-safe); its next ``tick`` raises ``Cancelled``."""
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def tick(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Raise ``Cancelled`` if the call was cancelled, else report progress: at once when the
        message changes, otherwise at most every ``REPORT_EVERY`` seconds."""
        if self._cancelled.is_set():
            raise Cancelled("the call was cancelled")
        if self.on_progress is None:
            return
        now = time.monotonic()
        if message == self._message and now - self._last < REPORT_EVERY:
            return
        self._last, self._message = now, message
        try:
            self.on_progress(float(done), None if total is None else float(total), message)
        except Exception:  # noqa: BLE001 - a listener that fails must not fail the tool
            self.on_progress = None


_CURRENT: contextvars.ContextVar[Call | None] = contextvars.ContextVar("mathlas_call", default=None)
_NOBODY = Call()


def current() -> Call:
    """The call running on this thread (a silent, never cancelled one outside ``running``)."""
    return _CURRENT.get() or _NOBODY


@contextlib.contextmanager
def running(call: Call) -> Iterator[Call]:
    """Make ``call`` the current call for the code run inside (on this thread)."""
    token = _CURRENT.set(call)
    try:
        yield call
    finally:
        _CURRENT.reset(token)


def tick(done: float, total: float | None = None, message: str | None = None) -> None:
    """``current().tick(...)``: report progress, or raise ``Cancelled``."""
    current().tick(done, total, message)
