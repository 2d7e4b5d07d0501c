"""mathlas: offline math search and no-LLM math tools. ``open_bundle()`` is the way in."""
import logging

from mathlas.bundle import verify
from mathlas.errors import (BundleCorruptError, BundleNotFoundError, BundleVersionError, EncoderError,
                            InstallError, MathlasError, UsageError)
from mathlas.hit import Document, Hit

__version__ = "0.1.0"  # the one place the version is written (pyproject.toml reads it from here)

__all__ = ["open_bundle", "Bundle", "verify", "Hit", "Document", "MathlasError", "UsageError",
           "BundleNotFoundError", "BundleVersionError", "BundleCorruptError", "InstallError", "EncoderError",
           "__version__"]

# The library never prints: it logs to the "mathlas" logger, silent until the application (or the
# mathlas command) configures logging.
logging.getLogger(__name__).addHandler(logging.NullHandler())


def __getattr__(name: str):  # the engine (numpy, pyarrow) loads only when asked for
    if name in ("open_bundle", "Bundle"):
        from mathlas import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'mathlas' has no attribute {name!r}")
