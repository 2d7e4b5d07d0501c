"""mathlas: offline math search and no-LLM math tools. ``open_bundle()`` is the way in."""
from mathlas.bundle import open_bundle, verify
from mathlas.errors import (BundleCorruptError, BundleNotFoundError, BundleVersionError, EncoderError,
                            InstallError, MathlasError, UsageError)
from mathlas.hit import Hit

__version__ = "0.1.0"

__all__ = ["open_bundle", "verify", "Hit", "MathlasError", "UsageError", "BundleNotFoundError",
           "BundleVersionError", "BundleCorruptError", "InstallError", "EncoderError", "__version__"]


def __getattr__(name: str):  # Bundle lives in mathlas.search; import it only when asked for
    if name == "Bundle":
        from mathlas.search import Bundle

        return Bundle
    raise AttributeError(name)
