"""Logging: the library speaks through the ``mathlas`` logger and never prints.

The package installs a ``NullHandler``, so an application that embeds mathlas hears nothing until
it configures logging; the ``mathlas`` command shows INFO and above on stderr (WARNING with
``-q``), the MCP server logs at its ``--log-level``.
"""
from __future__ import annotations


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


