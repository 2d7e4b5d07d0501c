"""What every request of ``mathlas serve`` passes through before an endpoint sees it, and how errors
look: one log line per request (``RequestLog``); the loopback Host check (one ``Host`` header: a
second, as a chunked trailer could add, is 400; mathlas.web.limits keeps trailers out of the
headers), the Bearer token, a request target that is UTF-8 once percent-decoded (else 422, as the
CLI refuses such text) and the body limit (``Guard``); JSON errors ``{"error": "<one line>",
"status": N}`` (``error``, ``ApiError``), and on ``/mcp`` the same line as a JSON-RPC error (an MCP
client passes on a refusal's text only in that shape). An exception no endpoint expected is logged
here, once, with its traceback, and the client gets a 500 saying only that.
"""
from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
import time
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

try:
    import orjson
except ImportError:  # an install of the serve extra from before it brought orjson: the stdlib writes
    orjson = None

log = logging.getLogger("mathlas.serve")

PUBLIC_PATHS = ("/health", "/", "/favicon.ico")
PUBLIC_PREFIXES = ("/static/", "/doc/")
_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._-]+))(?::(?P<port>[0-9]{1,5}))?")


def is_loopback(host: str) -> bool:
    """Whether ``host``, an address or name without port (``--host``), is this machine's loopback:
    ``localhost``, an IPv4 address in 127.0.0.0/8 or ``::1``. Nothing else: ``127.attacker.example``
    is a name anyone can point anywhere."""
    host = host.strip().lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_allowed(header: str, allowed: tuple[str, ...] = ()) -> bool:
    """Whether a request's ``Host`` header names this loopback server: ``localhost``, an IPv4
    address in 127.0.0.0/8 or ``[::1]``, each with or without a port, or one of the ``allowed``
    names (``--allow-host``: ``NAME`` with any port, ``NAME:PORT`` with that one). The one
    definition the REST routes, the page and ``/mcp`` share (DNS rebinding: a page on a name that
    resolves to 127.0.0.1 sends that name)."""
    header = header.strip().lower()
    m = _HOST.fullmatch(header)
    if m is None or (m["port"] is not None and int(m["port"]) > 65535):
        return False
    name = m["name"] or f"[{m['v6']}]"
    if name in allowed or header in allowed:
        return True
    if m["v6"] is not None:
        try:
            return ipaddress.IPv6Address(m["v6"]) == ipaddress.IPv6Address("::1")
        except ValueError:
            return False
    if name == "localhost":
        return True
    try:
        return ipaddress.IPv4Address(name) in ipaddress.IPv4Network("127.0.0.0/8")
    except ValueError:  # a name, or digits that are not a dotted quad (127.1, 0x7f.1)
        return False


def origin_allowed(origin: str, allowed: tuple[str, ...] = (), cors: tuple[str, ...] = ()) -> bool:
    """Whether a browser ``Origin`` may call ``/mcp`` on a loopback server: a page served from a
    loopback name (``host_allowed``) over http, or one of the ``--cors`` origins."""
    origin = origin.strip()
    if origin in cors:
        return True
    scheme, sep, rest = origin.lower().partition("://")
    return bool(sep) and scheme in ("http", "https") and "/" not in rest and host_allowed(rest, allowed)


class Json(JSONResponse):
    """Compact UTF-8 JSON, written by orjson (the serve extra brings it): a search's answer in a
    tenth of the stdlib's time, which the event loop spends for every response while no other
    request advances. What orjson refuses (a lone surrogate echoed from the client, an integer
    past 64 bits, a key that is not a string) is written by the stdlib as before. A NaN, which
    the library never produces, is written null by orjson and refused by the stdlib: never
    invalid JSON either way."""

    def render(self, content: Any) -> bytes:
        if orjson is not None:
            try:
                return orjson.dumps(content)
            except TypeError:  # orjson.JSONEncodeError: the stdlib below writes or refuses it
                pass
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate echoed from the client: escaped, still JSON
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


# JSON-RPC 2.0's codes for a request refused before any method ran (the MCP SDK's own HTTP refusals
# use the first) and for a failure of the server
INVALID_REQUEST, INTERNAL_ERROR = -32600, -32603


def is_mcp(path: str) -> bool:
    """Whether ``path`` is the MCP endpoint, whose refusals are JSON-RPC errors (``error``)."""
    return path.rstrip("/") == "/mcp"


def error(status: int, message: str, headers: dict[str, str] | None = None, *, mcp: bool = False) -> Json:
    """A refusal with HTTP status ``status`` and one line: ``{"error": line, "status": status}``; with
    ``mcp`` (the ``/mcp`` route) a JSON-RPC error, ``{"jsonrpc": "2.0", "id": null, "error": {"code":
    -32600, "message": line, "data": {"status": status}}}`` (-32603 for a 5xx): the MCP SDK's client
    shows an agent the message of a non-2xx answer only when its body is a JSON-RPC error, and else
    says "Server returned an error response" (a 401's "this server needs a token" never arrived)."""
    return Json(error_body(status, message, mcp=mcp), status_code=status, headers=headers)


def error_body(status: int, message: str, *, mcp: bool = False) -> dict[str, Any]:
    """The body of ``error``'s answer (also written by the connection's own refusals, limits.py)."""
    message = without_server_paths(" ".join(str(message).split())) or "error"
    if mcp:
        code = INTERNAL_ERROR if status >= 500 else INVALID_REQUEST
        return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message, "data": {"status": status}}}
    return {"error": message, "status": status}


def without_server_paths(text: str) -> str:
    """``text`` with the server's data directory and home directory written as ``$MATHLAS_DATA_DIR``
    and ``~``: a library message meant for the local user (``no bundle at /home/...``) must not
    show a client the layout of the server's disk (``mathlas.paths.without_local_paths``, which the
    MCP tools over HTTP use too)."""
    from mathlas.paths import without_local_paths

    return without_local_paths(text)


# The 401's lines (the page shows its own, for a person with its token box: app.js)
NO_TOKEN = "this server needs a token: send the header Authorization: Bearer <token>"
WRONG_TOKEN = ("wrong token: it is not the one this server was started with (mathlas serve --token or $MATHLAS_TOKEN); "
               "ask whoever runs it")


class ApiError(HTTPException):
    """An error with a status and a one-line message for the client."""



class TrackedSend:
    """An ASGI ``send`` that remembers whether the response has started: until it has, a failure
    can still be answered with an error of its own; after, the client already has a status line."""

    __slots__ = ("send", "started")

    def __init__(self, send: Send):
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)


class RequestLog:
    """One line per request on stderr: client, method, path, status, milliseconds (499: the client
    left before an answer was sent). With ``-q`` (the logger above INFO) it adds nothing to a request."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not log.isEnabledFor(logging.INFO):
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        status = [499]

        async def send_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        except BaseException:
            if status[0] == 499:
                status[0] = 500
            raise
        finally:
            client = (scope.get("client") or ("-", 0))[0]
            path = scope.get("path", "")
            qs = scope.get("query_string", b"").decode("latin-1")
            target = path + ("?" + qs if qs else "")
            if len(target) > 300:
                target = target[:300] + "…"
            log.info('%s "%s %s" %d %.1f ms', client, scope.get("method", "-"), target, status[0],
                     (time.perf_counter() - start) * 1000)


class Guard:
    """Host check on loopback (DNS rebinding), Bearer token, request body limit; answers in JSON.

    Every request passes here, so it reads the four header fields it checks in one pass over the
    raw list and remembers the verdict on each ``Host`` value it has seen (a few hundred at most):
    the checks are the same on every request, only their repeated cost is gone."""

    HOST_VERDICTS = 256   # Host values whose verdict is remembered; others are checked every time

    def __init__(self, app: ASGIApp, config: Any):
        self.app = app
        self.token = config.token.encode() if config.token else None
        self.loopback = config.loopback
        self.allowed = tuple(h.strip().lower() for h in config.allow_hosts)
        self.cors = tuple(config.cors)
        self.max_body = config.max_body
        self._hosts: dict[bytes, bool] = {}

    def _host_ok(self, host: bytes) -> bool:
        ok = self._hosts.get(host)
        if ok is None:
            ok = host_allowed(host.decode("latin-1"), self.allowed)
            if len(self._hosts) < self.HOST_VERDICTS:
                self._hosts[host] = ok
        return ok

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        hosts, host, origin, auth, length = 0, b"", None, None, None
        for k, v in scope.get("headers", ()):  # the last of a repeated field counts, as in a dict
            k = k.lower()
            if k == b"host":
                hosts += 1
                host = v
            elif k == b"content-length":
                length = v
            elif k == b"authorization":
                auth = v
            elif k == b"origin":
                origin = v
        path = scope.get("path", "")
        mcp = is_mcp(path)
        if hosts > 1:  # RFC 9112 3.2: which one names the server?
            return await error(400, "more than one Host header; send one", mcp=mcp)(scope, receive, send)
        if self.loopback and not self._host_ok(host):
            return await error(421, f"host {host.decode('latin-1')[:100]!r} is not this loopback server (it "
                                    "answers to 127.0.0.1, localhost or [::1]; mathlas serve --allow-host NAME "
                                    "adds a name)", mcp=mcp)(scope, receive, send)
        if self.loopback and origin and mcp:
            shown = origin.decode("latin-1")
            if not origin_allowed(shown, self.allowed, self.cors):
                return await error(403, f"origin {shown[:100]!r} may not call /mcp on this loopback server "
                                        "(mathlas serve --cors ORIGIN allows one)", mcp=True)(scope, receive, send)
        if self.token is not None and scope.get("method") != "OPTIONS" and not _public(path):
            given_auth = auth.decode("latin-1") if auth is not None else ""
            scheme, _, given = given_auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token):
                msg = NO_TOKEN if not given_auth else WRONG_TOKEN
                return await error(401, msg, {"WWW-Authenticate": 'Bearer realm="mathlas"'}, mcp=mcp)(scope, receive, send)
        bad = _not_utf8(scope)
        if bad:  # decoded with replacement characters, it would search for "\ufffd" (the CLI refuses it too)
            return await error(422, f"the request's {bad} is not valid UTF-8 once percent-decoded; "
                                    "percent-encode the text's UTF-8 bytes", mcp=mcp)(scope, receive, send)
        if length is not None and length.isdigit() and int(length) > self.max_body:
            return await error(413, f"request body of {int(length)} bytes; at most {self.max_body}",
                               mcp=mcp)(scope, receive, send)
        size = 0

        async def limited() -> Message:
            nonlocal size
            message = await receive()
            if message["type"] == "http.request":
                size += len(message.get("body", b""))
                if size > self.max_body:
                    raise ApiError(413, f"request body over {self.max_body} bytes")
            return message

        tracked = TrackedSend(send)
        try:
            await self.app(scope, limited, tracked)
        except ClientDisconnect:  # the client left (or was cut off, limits.py) mid-body: nobody to answer
            return
        except Exception as e:  # a bug: logged once here, never shown to the client
            log.error("mathlas serve: internal error on %s %s", scope.get("method"), path, exc_info=e)
            if not tracked.started:
                await error(500, "internal error; the server log has the details", mcp=mcp)(scope, receive, send)


def _not_utf8(scope: Scope) -> str:
    """"path" or "query string" when that part of the request target is not UTF-8 once
    percent-decoded (``%ED%A0%80``, ``%FF``), else ""."""
    for what, raw in (("path", scope.get("raw_path") or b""), ("query string", scope.get("query_string") or b"")):
        if raw.isascii() and b"%" not in raw:  # nothing to decode: ASCII is UTF-8
            continue
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return what
    return ""


def _public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)

