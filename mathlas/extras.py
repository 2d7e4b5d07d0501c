"""Optional features and the pip extra each one needs (``pip install 'mathlas[x]'``).

The core install is the search library and its command (``mathlas search``, ``show``, ``eval``,
``index``, ``lean``); what needs more sits behind an extra named for what it enables. A feature
asks ``require(extra, what)`` before it imports its dependencies, so a person without the extra
reads one line saying what to install instead of a traceback::

    mathlas: mathlas serve needs the serve extra: pip install 'mathlas[serve]'

``MissingExtra`` is a ``UsageError`` (the ``mathlas`` command exits 2) and an ``ImportError`` (code
that imports optionally, such as the MCP tool registry, skips the feature).
"""
from __future__ import annotations

import importlib.util

from mathlas.errors import UsageError

# extra -> the top-level modules mathlas imports from it (pyproject.toml's optional dependencies
# bring them; tests/test_extras.py checks that the core dependency list brings none of them)
EXTRAS: dict[str, tuple[str, ...]] = {
    "mcp": ("mcp", "anyio", "pydantic"),
    "serve": ("starlette", "uvicorn", "mcp", "anyio", "pydantic"),
    "numeric": ("mpmath", "sympy"),
}

# `mathlas COMMAND` -> the extra it needs, checked by mathlas.cli.main before the command runs
COMMANDS: dict[str, str] = {
    "mcp": "mcp",
    "serve": "serve",
    "constant": "numeric",
    "verify-numeric": "numeric",
    "conjecture": "numeric",
}


class MissingExtra(UsageError, ImportError):
    """A feature's optional dependencies are not installed; the message names the extra to install."""


def missing_module(extra: str) -> str | None:
    """The first module of ``extra`` that cannot be imported, or None when all of them can.

    Looks the modules up without importing them (sympy alone takes half a second to import).
    """
    for module in EXTRAS[extra]:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):  # a broken install, or a finder that refuses the module
            return module
    return None


def require(extra: str, what: str) -> None:
    """Raise ``MissingExtra`` (one line: what needs which extra, and the pip command) unless every
    module of ``extra`` is importable."""
    module = missing_module(extra)
    if module is not None:
        error = MissingExtra(f"{what} needs the {extra} extra: pip install 'mathlas[{extra}]'")
        error.name = module
        raise error


def exit_unless(extra: str, what: str) -> None:
    """For a ``python -m`` entry point: print ``require``'s one line and exit 2 when ``extra`` is missing."""
    import sys

    try:
        require(extra, what)
    except MissingExtra as e:
        print(f"mathlas: {e}", file=sys.stderr)
        sys.exit(2)
