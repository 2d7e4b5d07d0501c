"""Where mathlas keeps what it installs and saves: one data directory, ``$MATHLAS_DATA_DIR`` or the
platform's per-user data directory (bundles, findings, OEIS data, funsearch databases live under it)."""
from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """``$MATHLAS_DATA_DIR``, else the platform's per-user data directory for mathlas."""
    env = os.environ.get("MATHLAS_DATA_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("mathlas"))
