"""The few errors mathlas raises. Each message says what went wrong and what to do.

The CLI maps ``UsageError`` to exit code 2 and every other ``MathlasError`` to exit code 1;
the MCP server turns them into tool errors.
"""
from __future__ import annotations


class MathlasError(Exception):
    """Base class: every error mathlas raises on purpose."""


class UsageError(MathlasError, ValueError):
    """Bad input from the caller: an empty query, k out of range, an unknown source name."""


class BundleNotFoundError(MathlasError):
    """No bundle at that path or with that installed name."""


class BundleVersionError(MathlasError):
    """The bundle's format_version is not one this mathlas can read."""


class BundleCorruptError(MathlasError):
    """A bundle file is missing, truncated or does not match its checksum."""


class InstallError(MathlasError):
    """A release archive could not be fetched, verified or unpacked."""


class EncoderError(MathlasError):
    """The bundle's query encoder (or its reranker) could not be loaded or run."""


class Cancelled(MathlasError):
    """The caller cancelled a long call (an MCP client's cancellation); its worker was stopped."""
