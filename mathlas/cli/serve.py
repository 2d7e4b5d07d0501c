"""``mathlas serve``: the HTTP server (TheoremSearch-compatible ``POST /search``, the JSON API,
MCP at ``/mcp``, the search page at ``/``).

    mathlas serve [--host 127.0.0.1] [--port 8765] [--bundle B ...] [--formal-bundle F]
                  [--token T | --no-auth] [--cors ORIGIN ...] [--workers N] [--timeout S]

Safe by default: it binds 127.0.0.1; any other address needs ``--token`` (Bearer auth on every
endpoint but ``/health`` and the page) or an explicit ``--no-auth``, which prints a warning. Every
option has an environment fallback (``MATHLAS_SERVE_HOST``, ``MATHLAS_SERVE_PORT``,
``MATHLAS_BUNDLE``, ``MATHLAS_FORMAL_BUNDLE``, ``MATHLAS_TOKEN``...); a token is better given
through the environment, where other users' ``ps`` cannot read it. A bundle to serve that cannot
be found is refused before the server listens (one line, exit code 1, as other commands give).

Importing this module is light: uvicorn, starlette and the mcp SDK load when the server starts.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import sys

DEFAULT_PORT = 8765
# uvicorn's settings for every server process (scripts/bench_serve.py runs its bare floor app with them too)
UVICORN_OPTIONS = dict(log_level="warning", access_log=False, timeout_graceful_shutdown=30, lifespan="on",
                       server_header=False, proxy_headers=False)


def _env_list(name: str) -> list[str]:
    return [x for x in (os.environ.get(name) or "").split(",") if x.strip()]


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``serve`` subcommand to the ``mathlas`` command's subparsers."""
    p = subparsers.add_parser(
        "serve", help="serve search over HTTP: TheoremSearch-compatible API, JSON API, MCP, a web page",
        description="Serve mathlas over HTTP: POST /search (TheoremSearch-compatible), GET /api/... (the JSON of "
                    "--json), MCP over streamable HTTP at /mcp, and a search page at /. Binds 127.0.0.1 unless told "
                    "otherwise; another address needs --token or --no-auth. One line per request on stderr.")
    p.add_argument("--host", default=os.environ.get("MATHLAS_SERVE_HOST", "127.0.0.1"),
                   help="address to bind (default 127.0.0.1; $MATHLAS_SERVE_HOST)")
    p.add_argument("--port", type=int, default=int(os.environ.get("MATHLAS_SERVE_PORT", DEFAULT_PORT)),
                   help=f"port (default {DEFAULT_PORT}; 0 picks a free one; $MATHLAS_SERVE_PORT)")
    p.add_argument("--bundle", "-b", action="append", dest="bundles", metavar="B",
                   default=None, help="a bundle to serve (repeatable; the first is the default; default: "
                                      "$MATHLAS_BUNDLE or the default bundle)")
    p.add_argument("--formal-bundle", default=os.environ.get("MATHLAS_FORMAL_BUNDLE"), metavar="F",
                   help="the formal (Lean) bundle of /api/lean (default: $MATHLAS_FORMAL_BUNDLE, else every "
                        "installed formal bundle, mathlib first; docs/http.md)")
    p.add_argument("--token", default=os.environ.get("MATHLAS_TOKEN") or None, metavar="T",
                   help="require 'Authorization: Bearer T' on every endpoint but /health and the page "
                        "($MATHLAS_TOKEN; needed to bind another address than loopback)")
    p.add_argument("--no-auth", action="store_true",
                   help="bind a non-loopback address without a token (prints a warning)")
    p.add_argument("--cors", action="append", metavar="ORIGIN", default=None,
                   help="allow browser calls from this origin, e.g. https://example.org (repeatable; default: "
                        "CORS off; $MATHLAS_CORS, comma-separated)")
    p.add_argument("--workers", type=int, default=int(os.environ.get("MATHLAS_SERVE_WORKERS", 1)),
                   help="server processes (default 1; each opens its own bundles)")
    p.add_argument("--timeout", type=float, default=float(os.environ.get("MATHLAS_SERVE_TIMEOUT", 30)),
                   help="seconds a request may take before it gets 504 (default 30)")
    p.add_argument("--threads", type=int, default=int(os.environ.get("MATHLAS_SERVE_THREADS", 4)),
                   help="searches run at once per process; more requests wait their turn (default 4)")
    p.add_argument("--allow-host", action="append", dest="allow_hosts", metavar="NAME", default=None,
                   help="a loopback server also answers requests whose Host is NAME (any port) or NAME:PORT "
                        "(repeatable; $MATHLAS_ALLOW_HOSTS, comma-separated); by default only 127.0.0.0/8, "
                        "localhost and [::1]")
    p.add_argument("--read-timeout", type=float, default=float(os.environ.get("MATHLAS_SERVE_READ_TIMEOUT", 10)),
                   help="seconds a client has to send a request's headers, and then its body; an idle "
                        "connection is closed after 5 s or this, the smaller (default 10)")
    p.add_argument("--max-connections", type=int,
                   default=int(os.environ.get("MATHLAS_SERVE_MAX_CONNECTIONS", 1000)),
                   help="connections open at once per process; more are answered 503 and closed (default 1000, "
                        "lowered to the process's file descriptor limit less 64)")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-request log lines on stderr")
    p.set_defaults(run=run)
    return p


def config_from_args(args: argparse.Namespace):
    """The ``ServeConfig`` the arguments ask for, or a ``UsageError`` saying what is unsafe or wrong."""
    from mathlas.errors import UsageError
    from mathlas.web.app import ServeConfig, is_loopback

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be from 0 to 65535, got {args.port}")
    if args.workers < 1 or args.workers > 64:
        raise UsageError(f"--workers must be from 1 to 64, got {args.workers}")
    if not 1 <= args.threads <= 256:
        raise UsageError(f"--threads must be from 1 to 256, got {args.threads}")
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    if not 0 < args.read_timeout <= 3600:
        raise UsageError(f"--read-timeout must be from 0 to 3600 seconds, got {args.read_timeout}")
    if not 1 <= args.max_connections <= 1_000_000:
        raise UsageError(f"--max-connections must be from 1 to 1000000, got {args.max_connections}")
    if args.token is not None and len(args.token) < 8:
        raise UsageError("--token must be at least 8 characters (use a long random one, e.g. from `openssl rand -hex 32`)")
    if args.token and args.no_auth:
        raise UsageError("--token and --no-auth contradict each other; give one")
    if not is_loopback(args.host) and not args.token and not args.no_auth:
        raise UsageError(f"binding {args.host} makes the server reachable from other machines: give --token T "
                         "(or $MATHLAS_TOKEN) so requests need 'Authorization: Bearer T', or --no-auth to serve "
                         "everyone who can reach it")
    bundles = args.bundles or _env_list("MATHLAS_BUNDLE")
    return ServeConfig(host=args.host, port=args.port, bundles=bundles, formal_bundle=args.formal_bundle,
                       token=args.token, no_auth=args.no_auth, cors=args.cors or _env_list("MATHLAS_CORS"),
                       workers=args.workers, timeout=args.timeout, threads=args.threads,
                       allow_hosts=args.allow_hosts or _env_list("MATHLAS_ALLOW_HOSTS"),
                       read_timeout=args.read_timeout, max_connections=args.max_connections)


def check_bundles(bundles: list[str], *, from_env: bool = False) -> None:
    """Every bundle to serve (none: ``$MATHLAS_BUNDLE`` or the default bundle) is a directory or an
    installed bundle whose manifest reads, or shipped with mathlas (the first search installs it), else
    the library's error in one line naming where the bundle was asked for (``BundleNotFoundError``
    lists what is installed and how to install one). Reads manifests only; installs nothing."""
    from mathlas.bundle import read_manifest
    from mathlas.errors import BundleNotFoundError, MathlasError
    from mathlas.releases.install import DEFAULT_BUNDLE, in_use_version, resolve_bundle

    for spec in bundles or [None]:
        try:
            try:
                root = resolve_bundle(spec, quiet=True, install=False)
            except BundleNotFoundError:
                if in_use_version(spec or os.environ.get("MATHLAS_BUNDLE") or DEFAULT_BUNDLE) is not None:
                    continue  # shipped, not installed yet
                raise
            read_manifest(root)
        except MathlasError as e:
            where = ("the default bundle" if spec is None else
                     f"$MATHLAS_BUNDLE={spec}" if from_env else f"--bundle {spec}")
            raise type(e)(f"cannot serve {where}: {e}") from None


def _log_requests(quiet: bool) -> None:
    """Request lines and errors of ``mathlas.serve`` on stderr, once (not again through the
    ``mathlas`` logger the main CLI configures); the library's own lines (``mathlas``: a bundle
    installed, statements read) once too: the MCP SDK the server builds installs a handler on the
    root logger, which printed each of them a second time."""
    from mathlas.logs import log_to_stderr

    log_to_stderr("mathlas.serve", quiet, propagate=False)
    log_to_stderr("mathlas", quiet, propagate=False)


def prepare_statement_search(formal: str | None) -> None:
    """Read, or build once and keep, the statement index of each formal bundle the Lean endpoints
    search (``--formal-bundle``, else ``$MATHLAS_FORMAL_BUNDLE``, else every installed one), before the
    server listens. Built during a request, it took longer than the request's timeout (41 s for
    Mathlib on a quiet machine, 93 s under load: the first statement query was answered 504); from
    the cache it takes about a second with the bundle's opening. No formal bundle, or one that cannot be
    opened: nothing (the Lean endpoints say why when asked)."""
    from mathlas.errors import MathlasError
    from mathlas.formal import open_formal
    from mathlas.ranking.shape import ShapeIndex
    from mathlas.releases.formal_specs import formal_bundle_specs

    for spec in formal_bundle_specs(formal):
        try:
            ShapeIndex.of(open_formal(spec))
        except MathlasError:
            continue
        except Exception as e:  # noqa: BLE001 - a server that cannot prepare this still serves (built on first use)
            print(f"mathlas serve: search by statement of {spec} not prepared ({type(e).__name__}: {e}); the first "
                  "statement query builds it", file=sys.stderr, flush=True)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say so, and without it
    # a response's header and body writes wait out the client's delayed ACK (~40 ms a request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT or SIGTERM; in-flight requests finish first."""
    from mathlas.errors import MathlasError, UsageError

    try:
        config = config_from_args(args)
    except UsageError as e:
        print(f"mathlas: {e}", file=sys.stderr)
        return 2
    try:
        check_bundles(config.bundles, from_env=not args.bundles)
    except MathlasError as e:  # before binding: a server that would answer every search 404 is no server
        print(f"mathlas: {e}", file=sys.stderr)
        return 2 if isinstance(e, UsageError) else 1
    _log_requests(quiet=args.quiet)
    # The MCP tools and the library read these when a call names no bundle.
    if config.bundles:
        os.environ["MATHLAS_BUNDLE"] = config.bundles[0]
    if config.formal_bundle:
        os.environ["MATHLAS_FORMAL_BUNDLE"] = config.formal_bundle
    prepare_statement_search(config.formal_bundle)
    if config.no_auth and not config.loopback:
        print(f"mathlas serve: WARNING: serving {config.host} without a token (--no-auth): anyone who can reach "
              "this port can search and call the MCP tools", file=sys.stderr)
    try:
        sock = _bind(config.host, config.port)
    except OSError as e:
        print(f"mathlas: cannot listen on {config.host}:{config.port}: {e.strerror or e}", file=sys.stderr)
        return 1
    config.port = sock.getsockname()[1]
    import uvicorn

    from mathlas.web.limits import configure  # header, body and idle bounds, connection cap

    common = UVICORN_OPTIONS
    host = f"[{config.host}]" if ":" in config.host else config.host
    print(f"mathlas serve: http://{host}:{config.port}/ (search page), POST /search, /api, /mcp"
          + (" — token required" if config.token else ""), file=sys.stderr, flush=True)
    # uvicorn stops on SIGTERM/SIGINT after the requests in flight finish, then re-raises the signal
    # to the handler in place before it started: this one, so a requested stop exits 0.
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    # one ONNX thread a search, none spinning between runs: the requests in flight are the
    # parallelism (docs/http.md, "Load"); workers inherit it. $MATHLAS_ENCODER_THREADS overrides.
    os.environ.setdefault(ENCODER_THREADS_ENV, "1")
    try:
        if config.workers > 1:
            from uvicorn.supervisors import Multiprocess

            os.environ["MATHLAS_SERVE_CONFIG"] = config.to_json()
            uc = uvicorn.Config("mathlas.web.app:app_from_env", factory=True, workers=config.workers, **common)
            Multiprocess(configure(uc, config.limits), sockets=[sock]).run()
        else:
            from mathlas.web.app import create_app

            uc = uvicorn.Config(create_app(config), **common)
            uvicorn.Server(configure(uc, config.limits)).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    print("mathlas serve: stopped", file=sys.stderr, flush=True)
    return 0


# mathlas.encoder.THREADS_ENV (not imported: the server loads numpy with its first search)
ENCODER_THREADS_ENV = "MATHLAS_ENCODER_THREADS"


def main(argv: list[str] | None = None) -> int:
    """``python -m mathlas.web serve ...``: the command without the main ``mathlas`` CLI."""
    parser = argparse.ArgumentParser(prog="mathlas")
    add_parser(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    return args.run(args)
