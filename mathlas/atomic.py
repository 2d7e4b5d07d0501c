"""Writing one file so that a reader sees the old file or the new one, never half of one: what is
written goes into a temporary file in the same directory (fsync'd when asked), which is then renamed
over the target; whatever fails on the way (an interrupt included), the temporary file is removed
and the target is left as it was. A leaf: it imports nothing of mathlas (the build uses it too)."""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb", *, fsync: bool = False,
                tmp: str | os.PathLike | None = None, prefix: str | None = None,
                suffix: str = ".tmp") -> Iterator[IO[Any]]:
    """A file open for writing (``mode`` "wb", or "w": UTF-8 text) that replaces ``path`` when the
    block ends without an error, flushed and fsync'd first with ``fsync``; on an error it is removed
    and the error raised, ``path`` untouched.

    The temporary file is ``tmp`` when given, opened as ``open`` does (the umask's permissions; a
    leftover of that name is overwritten): for a writer that holds a lock, or a name of its own.
    Otherwise ``tempfile.mkstemp`` makes a fresh one in ``path``'s directory, named ``prefix``
    (default ``.<name>.``), random letters and ``suffix``, with mkstemp's mode 0600."""
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_file writes with mode 'wb' or 'w', not {mode!r}")
    path = Path(path)
    encoding = None if "b" in mode else "utf-8"
    if tmp is None:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}." if prefix is None else prefix, suffix=suffix,
                                    dir=path.parent)
        temporary = Path(name)
    else:
        fd, temporary = None, Path(tmp)
    try:
        with (os.fdopen(fd, mode, encoding=encoding) if fd is not None
              else open(temporary, mode, encoding=encoding)) as f:
            yield f
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass
        raise


def atomic_write(path: str | os.PathLike, data: bytes | str, *, fsync: bool = False,
                 tmp: str | os.PathLike | None = None, prefix: str | None = None, suffix: str = ".tmp") -> None:
    """``data`` (bytes, or text written as UTF-8 with ``open``'s newlines) as the whole of ``path``,
    through ``atomic_file`` (its ``fsync``, ``tmp``, ``prefix`` and ``suffix``)."""
    with atomic_file(path, "w" if isinstance(data, str) else "wb", fsync=fsync, tmp=tmp, prefix=prefix,
                     suffix=suffix) as f:
        f.write(data)
