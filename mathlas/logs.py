"""Logging: the library speaks through the ``mathlas`` logger and never prints.

The package installs a ``NullHandler``, so an application that embeds mathlas hears nothing until
it configures logging; the ``mathlas`` command shows INFO and above on stderr (WARNING with
``-q``), the MCP server logs at its ``--log-level``.
"""
from __future__ import annotations

import logging
import sys

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class StderrHandler(logging.Handler):
    """One plain line per record on whatever ``sys.stderr`` is at the time (tests and wrappers swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(self.format(record), file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - logging must never break a command or the server
            self.handleError(record)


def log_to_stderr(name: str, quiet: bool, *, propagate: bool | None = None) -> None:
    """Show the records of logger ``name`` on stderr, through one ``StderrHandler`` however often
    this is called: INFO and above, WARNING and above when ``quiet``. ``propagate=False`` keeps
    them from reaching the parent loggers' handlers as well (a line would show twice); None leaves
    it as it is."""
    logger = logging.getLogger(name)
    if not any(isinstance(h, StderrHandler) for h in logger.handlers):
        logger.addHandler(StderrHandler())
    if propagate is not None:
        logger.propagate = propagate
    logger.setLevel(logging.WARNING if quiet else logging.INFO)


