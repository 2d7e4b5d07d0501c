"""What one connection to ``mathlas serve`` may cost: bounds on time, bytes and numbers that the
HTTP parser itself does not enforce, applied where the bytes arrive (uvicorn's protocol, before any
request reaches the app).

uvicorn with httptools (the fast parser the server uses) bounds none of these: a request line or a
header may grow without end, headers may arrive one byte a minute, a body may trickle forever
(each byte re-arms nothing and cancels the keep-alive timer), and every such connection holds a
file descriptor. ``LimitedHttpTools`` is uvicorn's httptools protocol with the bounds below. h11
bounds only the size of the head (``h11_max_incomplete_event_size``, answered 400), not its time,
its number of fields, nor a body's time (docs/http.md has the measurement), so the parser stays
httptools.

=====================  ===========================================================================
bound                  what happens past it
=====================  ===========================================================================
``MAX_URL``            request line's target over 64 KiB: 414, connection closed (a GET query
                       of 10,000 characters fits percent-encoded)
``MAX_HEADER_BYTES``   header fields over 16 KiB in all: 431, connection closed
``MAX_HEADERS``        more than 100 header fields: 431, connection closed
``read_timeout``       the head of a request not complete within it (counted from the connection's
                       opening, or from the previous response): 408, connection closed; a body not
                       complete within it of the head: connection closed; a client that reads no
                       response bytes for that long: connection closed
``keep_alive``         an idle keep-alive connection: closed (uvicorn's ``timeout_keep_alive``)
``max_connections``    connections open at once; one more is answered 503 and closed at once, so
                       descriptors stay free; never above the process's descriptor limit less
                       ``FD_RESERVE`` (bundle files, logs, worker pipes). One log line when the
                       limit is first reached and one when it is no longer (not one per refusal)
=====================  ===========================================================================

Chunked trailers: httptools reports the fields after a chunked body's last chunk through the same
callback as the head's, and uvicorn appends them to the request's headers, the very list the app
reads when the whole request arrived in one read. So a trailer ``Host`` could stand in for the
head's in the loopback check (a browser cannot send trailers; a local process can). Here a trailer
field never joins the headers, and a request with a trailer ``Host`` is refused (400, closed).
"""
from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from mathlas.web.guard import error_body, is_mcp

log = logging.getLogger("mathlas.serve")

MAX_URL = 64 * 1024
MAX_HEADER_BYTES = 16 * 1024
MAX_HEADERS = 100
READ_TIMEOUT = 10.0
KEEP_ALIVE = 5
MAX_CONNECTIONS = 1000
FD_RESERVE = 64


@dataclass(frozen=True)
class Limits:
    """The per-connection bounds one server applies (module docstring)."""

    read_timeout: float = READ_TIMEOUT
    keep_alive: float = KEEP_ALIVE
    max_connections: int = MAX_CONNECTIONS
    max_url: int = MAX_URL
    max_header_bytes: int = MAX_HEADER_BYTES
    max_headers: int = MAX_HEADERS


def connection_cap(wanted: int) -> int:
    """``wanted``, lowered so that the open connections never take the descriptors the process
    needs for everything else (its soft ``RLIMIT_NOFILE`` less ``FD_RESERVE``)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # no resource module (Windows): trust the number
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - FD_RESERVE))


def _answer(status: int, reason: str, message: str, *, mcp: bool = False) -> bytes:
    """A whole refusal, written before the app sees the request: ``{error, status}``, or on the
    ``/mcp`` route (``mcp``) the same line as a JSON-RPC error (``mathlas.web.guard.error_body``)."""
    body = json.dumps(error_body(status, message, mcp=mcp)).encode()
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n").encode() + body


URL_HEAD = 64  # bytes of a request target kept to tell whether a refusal is /mcp's


class _Refused(Exception):
    """Raised inside a parser callback: the request is over a bound; answer ``status`` and close."""


def configure(config: Any, limits: Limits) -> Any:
    """Make the uvicorn ``config`` serve with ``limits``: the protocol class and the numbers ride
    on the config object, which uvicorn pickles into its worker processes (``--workers``)."""
    config.http = LimitedHttpTools
    config.timeout_keep_alive = limits.keep_alive
    config.mathlas_limits = limits
    return config


class _Saturation:
    """Whether the connection limit refuses clients now: logged once when it starts and once when
    it ends (1,100 trickling clients are 100 refusals a second, not 100 log lines)."""

    def __init__(self) -> None:
        self.count = 0

    def refused(self, cap: int) -> None:
        if self.count == 0:
            log.warning("mathlas serve: %d connections open, the limit (--max-connections): new ones are "
                        "answered 503 until some close (a client holding many, or too low a limit)", cap)
        self.count += 1

    def admitted(self, cap: int) -> None:
        if self.count:
            log.warning("mathlas serve: below the connection limit again; %d connection%s answered 503 meanwhile",
                        self.count, "" if self.count == 1 else "s")
            self.count = 0


_saturation = _Saturation()  # one per process: uvicorn's protocol objects share its connection set


class LimitedHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol with the ``Limits`` that ``configure`` put on its config."""

    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.limits: Limits = getattr(config, "mathlas_limits", None) or Limits()
        self.timeout_keep_alive = self.limits.keep_alive
        # The read deadline (head or body: one at a time matters): when it falls due (loop time) and
        # what for; None: none armed. One timer serves it, moved only when it fires early (below).
        self._deadline: float | None = None
        self._deadline_for = "head"
        self._timer: asyncio.TimerHandle | None = None
        self._write_deadline: asyncio.TimerHandle | None = None
        self._in_head = True          # bytes being parsed belong to a request's head
        self._head_bytes = 0          # raw bytes fed while the head was incomplete
        self._url_bytes = 0
        self._url_head = b""          # the request target's first URL_HEAD bytes: whether it is /mcp
        self._header_bytes = 0
        self._refusal: tuple[int, str, str] | None = None
        self._trailers = False        # the fields being parsed follow a chunked body

    # -- timers
    # A request arms the deadline three times (its body once its head is in, the next head once it
    # is answered) and disarms it once: a new timer each time was a quarter of what this protocol
    # added to a request. Now arming sets the time and what for, and one timer per connection
    # stays scheduled: when it fires before the deadline (armed again since) it is set for the
    # rest; when it finds none armed it stops. The bounds are the same, to the loop's clock.
    def _arm(self, what: str) -> None:
        self._deadline = self.loop.time() + self.limits.read_timeout
        self._deadline_for = what
        if self._timer is None:
            self._timer = self.loop.call_at(self._deadline, self._due)

    def _disarm(self) -> None:
        self._deadline = None

    def _due(self) -> None:
        self._timer = None
        if self._deadline is None:
            return
        if self.loop.time() < self._deadline:  # armed again since this timer was set
            self._timer = self.loop.call_at(self._deadline, self._due)
            return
        self._deadline = None
        self._expired(self._deadline_for)

    def _expired(self, what: str) -> None:
        if self.transport.is_closing():
            return
        idle = self.cycle is None or self.cycle.response_complete
        if what == "head" and idle:
            self._close_with(408, "Request Timeout",
                             f"the request's headers took longer than {self.limits.read_timeout:g} s")
        else:  # a body that never completes: the app sees a disconnect
            self.transport.abort()

    # -- connection
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        cap = connection_cap(self.limits.max_connections)
        if len(self.connections) > cap:
            _saturation.refused(cap)
            self._close_with(503, "Service Unavailable", f"the server has {cap} connections open, its limit "
                             "(mathlas serve --max-connections); try again shortly")
            return
        _saturation.admitted(cap)
        self._arm("head")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._unset_keepalive_if_required()
        if self.parser is None or self.transport.is_closing():
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
            return
        except httptools.HttpParserError:
            if self._refusal is not None:
                self._close_with(*self._refusal)
                return
            msg = "Invalid HTTP request received."
            self.logger.warning(msg)
            self.send_400_response(msg)
            return
        if self._in_head:  # a head that never ends: counted as it arrives, not when it is whole
            self._head_bytes += len(data)
            if self._head_bytes > self.limits.max_url + self.limits.max_header_bytes:
                self._close_with(431, "Request Header Fields Too Large",
                                 f"the request's head is over {self._head_bytes} bytes")

    def _close_with(self, status: int, reason: str, message: str) -> None:
        """Answer a refusal (a JSON-RPC error on ``/mcp``, ``_for_mcp``) and close the connection."""
        self.transport.write(_answer(status, reason, message, mcp=self._for_mcp()))
        self.transport.close()

    def _for_mcp(self) -> bool:
        """Whether the request being read targets ``/mcp`` (a refusal then answers as JSON-RPC): its
        path read whole, up to a ``?`` within the first URL_HEAD bytes or the whole target."""
        path, question, _ = self._url_head.partition(b"?")
        whole = bool(question) or self._url_bytes == len(self._url_head)
        if not whole or not path:
            return False
        text = unquote(path.decode("latin-1"))   # as the app routes it: /mc%70 is /mcp
        if "://" in text:   # the absolute form, http://host/mcp
            text = "/" + text.split("://", 1)[1].partition("/")[2]
        return is_mcp(text)

    # -- parser callbacks
    def _refuse(self, status: int, reason: str, message: str) -> None:
        self._refusal = (status, reason, message)
        raise _Refused(message)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._trailers = False
        self._head_bytes = self._url_bytes = self._header_bytes = 0
        self._url_head = b""
        if self._deadline is None:  # a pipelined request begins while the previous one runs
            self._arm("head")

    def on_url(self, url: bytes) -> None:
        if len(self._url_head) < URL_HEAD:
            self._url_head = (self._url_head + url)[:URL_HEAD]
        self._url_bytes += len(url)
        if self._url_bytes > self.limits.max_url:
            self._refuse(414, "URI Too Long", f"the request target is over {self.limits.max_url} bytes")
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._trailers:  # after a chunked body: not a header of the request (module docstring)
            if name.strip().lower() == b"host":
                if self.cycle is not None:  # the app, if it starts, sees a client that left
                    self.cycle.disconnected = True
                self._refuse(400, "Bad Request", "a Host field in a chunked trailer; send Host in the head only")
            self._header_bytes += len(name) + len(value) + 4
            if self._header_bytes > self.limits.max_header_bytes:
                self._refuse(431, "Request Header Fields Too Large",
                             f"the header fields are over {self.limits.max_header_bytes} bytes in all")
            return
        self._header_bytes += len(name) + len(value) + 4
        if len(self.headers) >= self.limits.max_headers:
            self._refuse(431, "Request Header Fields Too Large",
                         f"more than {self.limits.max_headers} header fields")
        if self._header_bytes > self.limits.max_header_bytes:
            self._refuse(431, "Request Header Fields Too Large",
                         f"the header fields are over {self.limits.max_header_bytes} bytes in all")
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._trailers = True  # any field from now on is a trailer
        self._arm("body")
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._url_head, self._url_bytes = b"", 0  # a refusal from now on is the next request's
        if self.cycle is not None and self.cycle.response_complete:  # answered before the body ended
            self._arm("head")
        super().on_message_complete()

    def on_response_complete(self) -> None:
        idle = not self.pipeline
        super().on_response_complete()
        if idle and not self.transport.is_closing() and self._deadline is None:
            self._arm("head")  # the next request's head, if any, within the same bound

    # -- a client that reads nothing
    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_deadline is None:
            self._write_deadline = self.loop.call_later(self.limits.read_timeout, self.transport.abort)

    def resume_writing(self) -> None:
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None
        super().resume_writing()
