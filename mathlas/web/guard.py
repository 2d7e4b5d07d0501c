"""What every request of ``mathlas serve`` passes through before an endpoint sees it, and how errors
look: one log line per request (``RequestLog``); the loopback Host check, the Bearer token and the
body limit (``Guard``); JSON errors ``{"error": "<one line>", "status": N}`` (``error``,
``ApiError``). An exception no endpoint expected is logged here, once, with its traceback, and the
client gets a 500 saying only that.
"""
from __future__ import annotations

import hmac
import json
import logging
import time
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("mathlas.serve")

LOOPBACK = ("127.0.0.1", "localhost", "::1")
PUBLIC_PATHS = ("/health", "/", "/favicon.ico")
PUBLIC_PREFIXES = ("/static/", "/doc/")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


class Json(JSONResponse):
    """Compact UTF-8 JSON; NaN refused (the library never produces one)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Json:
    message = " ".join(str(message).split()) or "error"
    return Json({"error": message, "status": status}, status_code=status, headers=headers)


class ApiError(HTTPException):
    """An error with a status and a one-line message for the client."""



class RequestLog:
    """One line per request on stderr: client, method, path, status, milliseconds."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        status = [500]

        async def send_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
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
    """Host check on loopback (DNS rebinding), Bearer token, request body limit; answers in JSON."""

    def __init__(self, app: ASGIApp, config: Any):
        self.app = app
        self.token = config.token.encode() if config.token else None
        self.loopback = config.loopback
        self.max_body = config.max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.loopback and not _host_is_loopback(headers.get("host", "")):
            return await error(421, f"host {headers.get('host', '')!r} is not this loopback server "
                                    "(mathlas serve on 127.0.0.1 answers only to 127.0.0.1, localhost or [::1])")(scope, receive, send)
        path = scope.get("path", "")
        if self.token is not None and scope.get("method") != "OPTIONS" and not _public(path):
            auth = headers.get("authorization", "")
            scheme, _, given = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token):
                msg = "this server needs a token: send the header Authorization: Bearer <token>" if not auth \
                    else "wrong token"
                return await error(401, msg, {"WWW-Authenticate": 'Bearer realm="mathlas"'})(scope, receive, send)
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            return await error(413, f"request body of {int(length)} bytes; at most {self.max_body}")(scope, receive, send)
        size = 0

        async def limited() -> Message:
            nonlocal size
            message = await receive()
            if message["type"] == "http.request":
                size += len(message.get("body", b""))
                if size > self.max_body:
                    raise ApiError(413, f"request body over {self.max_body} bytes")
            return message

        started = False

        async def send_tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, send_tracking)
        except Exception as e:  # a bug: logged once here, never shown to the client
            log.error("mathlas serve: internal error on %s %s", scope.get("method"), path, exc_info=e)
            if not started:
                await error(500, "internal error; the server log has the details")(scope, receive, send)


def _public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)


def _host_is_loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host[1:].split("]", 1)[0]
    return is_loopback(name.lower())
