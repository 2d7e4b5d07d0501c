"""The ASGI app of ``mathlas serve`` (starlette), built by ``create_app(ServeConfig)``.

Endpoints (docs/http.md; ``GET /openapi.json`` describes each):

    POST /search                 TheoremSearch-compatible search (theoremsearch.py)
    GET  /api/search             = mathlas search --json       GET /api/doc/{id}   = mathlas show --json
    GET  /api/lean/search        = mathlas lean search --json  GET /api/lean/deps/{id} = mathlas lean deps --json
                                 (both searches add each ``next`` step's GET as ``href``: api.with_hrefs)
    GET  /api/bundles            what is served and installed  GET /health         liveness, no auth
    /mcp                         the MCP tools over streamable HTTP (stateless, JSON responses)
    GET  /, /doc/{id}, /static/  the search page (no auth: it asks for the token when one is set)

Library work runs on worker threads (the library is synchronous and thread-safe) under a per-request
timeout; the event loop only parses, routes and writes. Creating the app opens no bundle and
imports nothing heavy: the first request that needs a bundle opens it.

Errors are JSON ``{"error": "<one line>", "status": N}``: 400 unreadable body, 401 missing or wrong
token, 404 unknown document or endpoint or no formal bundle, 413 body over the limit, 422 a bad
parameter (the library's own ``UsageError`` message), 504 past the timeout, 500 anything else
(the traceback goes to the server's stderr, never to the client).
"""
from __future__ import annotations

import contextlib
import json
import logging
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from mathlas.request import MAX_K, SURFACE_MAX_K, query_too_long
from mathlas.web import api, theoremsearch
from mathlas.web.guard import (ApiError, Guard, Json, RequestLog, TrackedSend, error, is_loopback, is_mcp,
                               without_server_paths)
from mathlas.web.limits import KEEP_ALIVE, MAX_CONNECTIONS, READ_TIMEOUT, Limits
from mathlas.web.openapi import openapi_document
from mathlas.web.policy import HttpBundlePolicy
from mathlas.web.runner import Runner

log = logging.getLogger("mathlas.serve")

STATIC = Path(__file__).parent / "static"
MAX_BODY = 64 * 1024          # request bodies over this get 413
DEFAULT_TIMEOUT = 30.0        # seconds a request may take before it gets 504
WORKER_THREADS = 4            # library calls running at once per process (--threads); the rest wait in order
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "font-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
                               "base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


@dataclass
class ServeConfig:
    """Everything ``mathlas serve`` was told. ``bundles``: specs (first = default; empty = the
    default bundle); ``token``: the Bearer token (None: no auth, only allowed on loopback or with
    ``no_auth``); ``cors``: allowed origins (empty: CORS off)."""

    host: str = "127.0.0.1"
    port: int = 8765
    bundles: list[str] = field(default_factory=list)
    formal_bundle: str | None = None
    token: str | None = None
    no_auth: bool = False
    cors: list[str] = field(default_factory=list)
    workers: int = 1
    timeout: float = DEFAULT_TIMEOUT
    max_body: int = MAX_BODY
    threads: int = WORKER_THREADS
    allow_hosts: list[str] = field(default_factory=list)
    read_timeout: float = READ_TIMEOUT
    max_connections: int = MAX_CONNECTIONS

    @property
    def limits(self) -> Limits:
        """The per-connection bounds (``mathlas.web.limits``) of this server."""
        return Limits(read_timeout=self.read_timeout, keep_alive=min(KEEP_ALIVE, self.read_timeout),
                      max_connections=self.max_connections)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServeConfig:
        return cls(**json.loads(text))

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


# ------------------------------------------------------------------------------ responses and errors

def _mathlas_error(e: Exception) -> ApiError:
    if isinstance(e, api.BundleNotFoundError):
        return ApiError(404, str(e))
    if isinstance(e, api.UsageError):
        return ApiError(404 if str(e).startswith(("no document with id", "no finding with id")) else 422, str(e))
    return ApiError(500, f"{type(e).__name__}: {e}")


# What to do instead of a method a route does not take, where its Allow header alone would not say it
WRONG_METHOD_STEPS = {
    "/search": 'POST a JSON body {"query": "..."} here, or GET /api/search?q=...',
    "/api/search": 'use GET /api/search?q=..., or POST a JSON body {"query": "..."} to /search',
}


async def _http_exception(request: Request, exc: HTTPException) -> Response:
    headers = dict(exc.headers or {})
    if exc.status_code == 404 and not isinstance(exc, ApiError):
        return error(404, f"no endpoint {request.url.path}; see /openapi.json", headers)
    if exc.status_code == 405:
        path = request.url.path
        # Starlette's Allow header lists a route's methods in no fixed order, HEAD beside GET
        allowed = sorted(m for m in (headers.get("Allow") or "").split(", ") if m and m != "HEAD")
        step = WRONG_METHOD_STEPS.get(path) or (f"use {' or '.join(allowed)}" if allowed else "see /openapi.json")
        return error(405, f"{request.method} is not allowed on {path}; {step}", headers)
    return error(exc.status_code, str(exc.detail), headers, mcp=is_mcp(request.url.path))  # /mcp: 413 mid-body


async def _library_error(request: Request, exc: Exception) -> Response:
    e = _mathlas_error(exc)
    return error(e.status_code, str(e.detail))


# ------------------------------------------------------------------------------ query parameters

class Params:
    """A GET endpoint's query parameters, checked: unknown names, types and ranges give 422."""

    def __init__(self, request: Request, allowed: tuple[str, ...]):
        self.q = request.query_params
        unknown = sorted(set(self.q.keys()) - set(allowed))
        if unknown:
            raise ApiError(422, f"unknown parameter {', '.join(map(repr, unknown))}; this endpoint takes: "
                                f"{', '.join(allowed)}")

    def text(self, *names: str) -> str | None:
        """The first of ``names`` given (aliases: ``q`` / ``query``), else None."""
        for n in names:
            if n in self.q:
                return self.q[n]
        return None

    def texts(self, name: str) -> list[str] | None:
        """Every non-blank value of a repeated parameter (``source=a&source=b``), else None."""
        values = [v for v in self.q.getlist(name) if v.strip()]
        return values or None

    def integer(self, name: str, default: int | None = None, lo: int | None = None, hi: int | None = None) -> int | None:
        raw = self.q.get(name)
        if raw is None:
            return default
        try:
            v = int(raw)
        except ValueError:
            v = None
        if v is None or (lo is not None and v < lo) or (hi is not None and v > hi):
            span = (f" from {lo} to {hi}" if lo is not None and hi is not None else f" of at least {lo}"
                    if lo is not None else f" of at most {hi}" if hi is not None else "")
            raise ApiError(422, f"{name} must be an integer{span}, got {raw!r}")
        return v

    def number(self, name: str) -> float | None:
        raw = self.q.get(name)
        if raw is None:
            return None
        try:
            v = float(raw)
        except ValueError:
            v = math.nan
        if not math.isfinite(v):
            raise ApiError(422, f"{name} must be a finite number, got {raw!r}")
        return v

    def boolean(self, name: str, default: bool | None, meaning: str = "") -> bool | None:
        """``true``/``false`` (also ``1``/``0``, ``yes``/``no``), ``default`` when not given;
        ``meaning`` says in the error what the value does."""
        raw = self.text(name)
        if raw is None:
            return default
        if raw.lower() not in BOOLEANS:
            raise ApiError(422, f"{name} must be true or false{f' ({meaning})' if meaning else ''}, got {raw!r}")
        return BOOLEANS[raw.lower()]


SEARCH_PARAMS = ("q", "query", "k", "offset", "mode", "source", "exclude_source", "kind", "author", "category",
                 "year_min", "year_max", "citations_min", "citations_max", "journal", "prior", "kind_weight",
                 "rerank", "all_copies", "bundle")
BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
LEAN_SEARCH_PARAMS = ("q", "query", "k", "mode", "module", "kind", "prior_weight", "deprecated", "all_copies", "bundle")
DEPS_PARAMS = ("direction", "depth", "limit", "bundle")


def _search_args(p: Params) -> dict[str, Any]:
    """The /api/search parameters as ``api.search`` arguments: the CLI's options, one for one."""
    journal = p.text("journal")
    if journal not in (None, "yes", "no"):
        raise ApiError(422, f"journal must be yes or no, got {journal!r}")
    pf = {"authors": p.texts("author"), "categories": p.texts("category"), "year_min": p.integer("year_min"),
          "year_max": p.integer("year_max"), "citations_min": p.integer("citations_min"),
          "citations_max": p.integer("citations_max"), "journal_published": None if journal is None else journal == "yes"}
    rerank = p.boolean("rerank", None)
    all_copies = p.boolean("all_copies", False, "true shows every copy of a theorem")
    k = p.integer("k", 10, 1, SURFACE_MAX_K)
    return {"query": p.text("q", "query") or "", "k": k,
            # the deepest hit a request reaches is offset + k <= MAX_K (mathlas.request), said here with its range
            "offset": p.integer("offset", 0, 0, MAX_K - k), "mode": p.text("mode") or "hybrid",
            "sources": p.texts("source"), "exclude": p.texts("exclude_source"), "kinds": p.texts("kind"),
            "paper_filter": {key: v for key, v in pf.items() if v is not None} or None,
            "priors": _name_weights(p, "prior", "citations=0.002"),
            "kind_weights": _name_weights(p, "kind_weight", "proof=0.5"),
            "rerank": rerank, "all_copies": all_copies}


def _lean_search_args(p: Params) -> dict[str, Any]:
    """The /api/lean/search parameters (but the query and bundle) as ``api.lean_search`` arguments."""
    deprecated = p.boolean("deprecated", True, "false leaves deprecated declarations out")
    all_copies = p.boolean("all_copies", False, "true shows a Lean alias and the declaration it stands for apart")
    return {"k": p.integer("k", 10, 1, SURFACE_MAX_K), "modules": p.texts("module"), "kinds": p.texts("kind"),
            "mode": p.text("mode") or "hybrid", "prior_weight": p.number("prior_weight"), "deprecated": deprecated,
            "all_copies": all_copies}


def _name_weights(p: Params, name: str, example: str) -> dict[str, float] | None:
    """Repeated ``name=NAME=WEIGHT`` parameters as a dict (the CLI's ``--prior`` / ``--kind-weight``)."""
    return api.name_weights(p.texts(name), name, example)


def _without_paths(listing: dict) -> dict:
    """``/api/bundles`` without the directories the server was started with: a bundle given by
    path is shown by its label (``name-version``, which requests may use as well)."""
    for entry in [*listing.get("served", []), listing.get("formal") or {}]:
        spec = entry.get("spec")
        if _is_path(spec):
            shown = entry.get("label") or entry.get("name") or "(a bundle given by path)"
            entry["spec"] = shown
            if isinstance(entry.get("error"), str):
                entry["error"] = entry["error"].replace(spec, shown)
        for key in ("error", "how_to_build"):
            if isinstance(entry.get(key), str):
                entry[key] = without_server_paths(entry[key])
    default = listing.get("default_bundle")
    if _is_path(default):
        listing["default_bundle"] = (listing.get("served") or [{}])[0].get("label") or "(a bundle given by path)"
    return listing


def _is_path(spec: object) -> bool:
    return isinstance(spec, str) and ("/" in spec or "\\" in spec or spec.startswith(("~", ".")))


def _check_query(q: str) -> None:
    """The one limit of a query and its words (``mathlas.request``), said before a worker thread is taken."""
    if (too_long := query_too_long(q)) is not None:
        raise ApiError(422, too_long)


def _document_of(served: api.Served, doc_id: str, requested: str | None) -> dict:
    """``/api/doc/{id}``'s answer: a Lean declaration from the formal bundle, anything else from the
    served bundle asked for (the document page asks the same, to answer 404 for an unknown id)."""
    if doc_id.startswith("lean:"):  # Lean declarations live in the formal bundle
        return api.document(doc_id, bundle=served.pick_formal(requested))
    return api.document(doc_id, bundle=served.pick(requested))


# ------------------------------------------------------------------------------ the endpoints
# Each reads what the server shares from ``request.app.state`` (``create_app`` puts it there):
# ``config`` (ServeConfig), ``served`` (api.Served: the bundles), ``run`` (Runner), ``started``.

async def page(request: Request) -> Response:
    """``GET /``: the search page."""
    return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)


async def doc_page(request: Request) -> Response:
    """``GET /doc/{id}``: a document's page. A document that is not there answers 404 (the page then
    shows the API's one-line message). Not asked for a finding while a token guards the server:
    whether one exists is the token's."""
    state = request.app.state
    doc_id = request.path_params["id"]
    status = 200
    if not (state.config.token and doc_id.startswith("finding:")):
        try:
            await state.run(_document_of, state.served, doc_id, request.query_params.get("bundle"))
        except ApiError as e:
            status = 404 if e.status_code == 404 else 200
    return FileResponse(STATIC / "doc.html", status_code=status, headers=PAGE_HEADERS)


async def health(request: Request) -> Response:
    """``GET /health``: liveness, no auth."""
    return Json({"status": "ok", "version": api.VERSION, "bundles_open": api.loaded(),
                 "uptime_s": round(time.time() - request.app.state.started, 1)})


async def bundles(request: Request) -> Response:
    """``GET /api/bundles``: what is served and installed."""
    Params(request, ())
    state = request.app.state
    return Json(_without_paths(await state.run(api.bundles, state.served)))


async def openapi(request: Request) -> Response:
    """``GET /openapi.json``."""
    return Json(openapi_document(request.app.state.config))


async def api_search(request: Request) -> Response:
    """``GET /api/search`` = ``mathlas search --json``."""
    state = request.app.state
    p = Params(request, SEARCH_PARAMS)
    args = _search_args(p)
    _check_query(args["query"])
    requested = p.text("bundle")
    return Json(api.with_hrefs(await state.run(lambda: api.search(bundle=state.served.pick(requested), **args)),
                               requested))


async def api_doc(request: Request) -> Response:
    """``GET /api/doc/{id}`` = ``mathlas show --json``."""
    state = request.app.state
    p = Params(request, ("bundle",))
    return Json(await state.run(_document_of, state.served, request.path_params["id"], p.text("bundle")))


async def lean_search(request: Request) -> Response:
    """``GET /api/lean/search`` = ``mathlas lean search --json``."""
    state = request.app.state
    p = Params(request, LEAN_SEARCH_PARAMS)
    q = p.text("q", "query") or ""
    _check_query(q)
    args = _lean_search_args(p)
    requested = p.text("bundle")
    return Json(api.with_hrefs(await state.run(lambda: api.lean_search(q, bundle=state.served.pick_formal(requested),
                                                                        **args))))


async def lean_deps(request: Request) -> Response:
    """``GET /api/lean/deps/{id}`` = ``mathlas lean deps --json``."""
    state = request.app.state
    p = Params(request, DEPS_PARAMS)
    args = {"direction": p.text("direction") or "uses", "depth": p.integer("depth", 1),
            "limit": p.integer("limit", 100)}
    requested, doc_id = p.text("bundle"), request.path_params["id"]
    return Json(await state.run(lambda: api.lean_deps(doc_id, bundle=state.served.pick_formal(requested), **args)))


async def ts_search(request: Request) -> Response:
    """``POST /search``: TheoremSearch's search (``theoremsearch.py``)."""
    state = request.app.state
    raw = await request.body()
    try:
        body = json.loads(raw or b"null")
    except (ValueError, UnicodeDecodeError) as e:
        raise ApiError(400, f"the request body is not JSON ({e})") from None
    except RecursionError:
        raise ApiError(400, "the request body is JSON nested too deeply; a search request is a flat object") from None
    req = theoremsearch.parse(body)

    def work() -> dict:
        b = api.open_bundle(state.served.pick(req.bundle))
        facts = api.bundle_facts(b)
        plan = theoremsearch.plan(req, facts)
        found = None if plan.nothing else api.search_hits(b, req.query, **plan.kwargs)
        return theoremsearch.response(found, facts, req, plan)

    out = await state.run(work)
    headers = {"X-Mathlas-Bundle": out["mathlas"]["bundle"]}
    if out["mathlas"]["ignored"]:
        headers["X-Mathlas-Ignored"] = theoremsearch.ignored_header(out["mathlas"]["ignored"])
    return Json(out, headers=headers)


class McpEndpoint:  # an ASGI app, not a function: starlette then passes every method through
    """``/mcp``: the MCP SDK's stateless session manager under the same ``--timeout`` as every route:
    past it the call is cancelled (a long tool's worker process is stopped by the server's
    cancellation, mathlas.mcp.server's ``_run_long``) and the client gets 504."""

    def __init__(self, sessions: Any, timeout: float):
        self.sessions = sessions
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "GET":  # the spec's answer when there is no server-sent stream
            return await error(405, "GET /mcp: this server opens no event stream (stateless, JSON responses); "
                                    "POST JSON-RPC messages to /mcp", {"Allow": "POST"}, mcp=True)(scope, receive, send)
        # The body is read here first: a client that leaves mid-body is then nobody to answer,
        # where the SDK would log it as its own error with a traceback and answer 500.
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        tracked = TrackedSend(send)
        try:
            with anyio.fail_after(self.timeout):
                await self.sessions.handle_request(scope, replay, tracked)
        except TimeoutError:
            if not tracked.started:
                await error(504, f"the request took longer than {self.timeout:g} s (mathlas serve --timeout)",
                            mcp=True)(scope, receive, send)


# ------------------------------------------------------------------------------ the busiest routes

# The routes that take nearly every request of a busy server: the router's first routes
# (``create_app``) and what ``HotRoutes`` answers before Starlette's layers, from this one table.
HOT = (("/search", ts_search, ("POST",)), ("/api/search", api_search, ("GET",)),
       ("/health", health, ("GET", "HEAD")))


class HotRoutes:
    """The routes that take nearly every request of a busy server (``POST /search``, ``GET
    /api/search``, ``GET /health``), called from here, after ``Guard``: the same endpoint, the same
    error handlers (``_http_exception``, ``_library_error``), the same bytes, without the layers
    Starlette puts around every route (its exception middleware, the router's pass over the routes,
    the route's own exception wrapper); any other request goes on to them. Both are made from
    ``HOT``: the three exact paths with the methods their routes take, so nothing else can match
    here that the router would have answered otherwise."""

    ROUTES = {(method, path): endpoint for path, endpoint, methods in HOT for method in methods}

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self.ROUTES.get((scope.get("method"), scope.get("path"))) if scope["type"] == "http" else None
        if endpoint is None:
            return await self.app(scope, receive, send)
        request = Request(scope, receive, send)
        try:
            response = await endpoint(request)
        except HTTPException as exc:
            response = await _http_exception(request, exc)
        except api.MathlasError as exc:
            response = await _library_error(request, exc)
        await response(scope, receive, send)


# ------------------------------------------------------------------------------ the app

def _mcp_sessions(config: ServeConfig, served: api.Served) -> Any:
    """The MCP server's session manager for ``/mcp`` (tool schemas built, no bundle opened)."""
    from mcp.server.transport_security import TransportSecuritySettings

    mcp_server = api.mcp_server(allow_write=bool(config.token), bundle_policy=HttpBundlePolicy(served))
    # Host and Origin of /mcp are checked by Guard, with the same definition as every other route
    # (guard.host_allowed); the SDK's own check matches name prefixes and cannot say "127.0.0.0/8".
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    mcp_server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True,
                                   transport_security=security, max_request_body_size=config.max_body,
                                   host=config.host)
    return mcp_server.session_manager


def _middleware(config: ServeConfig) -> list:
    """One log line per request, CORS when asked, then ``Guard`` (host, token, body limit), then
    the busiest routes (``HotRoutes``) before Starlette's own layers."""
    from starlette.middleware import Middleware

    middleware = [Middleware(RequestLog)]
    if config.cors:
        from starlette.middleware.cors import CORSMiddleware

        middleware.append(Middleware(
            CORSMiddleware, allow_origins=config.cors, allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=["Authorization", "Content-Type", "Accept", "Mcp-Session-Id", "Mcp-Protocol-Version",
                           "Last-Event-ID"],
            expose_headers=["X-Mathlas-Bundle", "X-Mathlas-Ignored", "Mcp-Session-Id"], max_age=600))
    middleware.append(Middleware(Guard, config=config))
    middleware.append(Middleware(HotRoutes))
    return middleware


@contextlib.asynccontextmanager
async def _lifespan(app: Starlette):
    try:
        async with app.state.sessions.run():
            yield
    finally:
        app.state.run.close()


def create_app(config: ServeConfig) -> Starlette:
    """The app for ``config``. Opens no bundle; builds the MCP server (tool schemas only)."""
    served = api.Served(config.bundles, config.formal_bundle)
    sessions = _mcp_sessions(config, served)
    # The router tries routes in order; no two paths overlap, so the busiest come first.
    routes = [
        *(Route(path, endpoint, methods=list(methods)) for path, endpoint, methods in HOT),
        Route("/", page, methods=["GET", "HEAD"]),
        Route("/doc/{id:path}", doc_page, methods=["GET", "HEAD"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/api/doc/{id:path}", api_doc, methods=["GET"]),
        Route("/api/lean/search", lean_search, methods=["GET"]),
        Route("/api/lean/deps/{id:path}", lean_deps, methods=["GET"]),
        Route("/api/bundles", bundles, methods=["GET"]),
        Route("/mcp", McpEndpoint(sessions, config.timeout)),
    ]
    app = Starlette(routes=routes, middleware=_middleware(config), lifespan=_lifespan,
                    exception_handlers={HTTPException: _http_exception, api.MathlasError: _library_error})
    app.state.config = config
    app.state.served = served
    app.state.run = Runner(config.timeout, config.threads, _mathlas_error)
    app.state.sessions = sessions
    app.state.started = time.time()
    return app


def app_from_env() -> Starlette:
    """The app factory uvicorn's worker processes call (``--workers N``): the config travels in
    ``$MATHLAS_SERVE_CONFIG`` (set by ``mathlas serve`` for its own children)."""
    import os

    return create_app(ServeConfig.from_json(os.environ["MATHLAS_SERVE_CONFIG"]))
