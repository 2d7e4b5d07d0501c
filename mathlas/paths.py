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


def _named_dirs() -> list[tuple[str, str]]:
    """The directories a server shows by name, not by path: (directory, its name)."""
    dirs = [(str(data_dir()), "$MATHLAS_DATA_DIR")]
    oeis = os.environ.get("MATHLAS_OEIS_DIR")
    if oeis:
        dirs.append((str(Path(oeis).expanduser()), "$MATHLAS_OEIS_DIR"))
    dirs.append((os.path.expanduser("~"), "~"))
    return dirs


def without_local_paths(text: str) -> str:
    """``text`` with the data directory written as ``$MATHLAS_DATA_DIR`` (and ``$MATHLAS_OEIS_DIR``,
    the home directory as ``~``): what a server says to a client (``mathlas serve``'s REST errors and
    every MCP answer over HTTP) shows no layout of the server's disk. The longest directory first,
    so a data directory under the home directory reads ``$MATHLAS_DATA_DIR``."""
    import re

    pairs = []
    for path, shown in _named_dirs():
        pairs += [(str(Path(path).resolve()), shown), (path, shown)]
    pairs = [(path.rstrip("/\\"), shown) for path, shown in pairs]
    for path, shown in sorted((p for p in pairs if len(p[0]) > 1), key=lambda p: -len(p[0])):
        # a whole directory name only: a home of /home/u leaves /home/user alone
        text = re.sub(re.escape(path) + r"(?![\w.-])", lambda _: shown, text)
    return text
