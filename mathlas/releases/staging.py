"""Staged writes into mathlas' data directory, shared by bundle installs and the OEIS tools.

Whatever is written there is built under a temporary name (``TMP_PREFIX``) and renamed into place
(``replace_dir``), while ``data_lock`` holds ``<dir>/.install.lock`` (a ``filelock``) so writers of
all processes take turns. The first holder of the lock removes what crashed writers left behind
(``.tmp-*``, ``.old-*``: only a lock holder creates them, so none is in use) and interrupted
downloads (``.downloads/*``) older than two weeks.
"""
from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator

from mathlas.errors import InstallError

log = logging.getLogger(__name__)

from filelock import FileLock, Timeout

LOCK_FILE = ".install.lock"
DOWNLOADS = ".downloads"
TMP_PREFIX = ".tmp-"
OLD_PREFIX = ".old-"
PART_MAX_AGE_S = 14 * 86400  # an interrupted download nobody resumed for two weeks is dropped


def replace_dir(staged: Path, target: Path, old_prefix: str = OLD_PREFIX) -> None:
    """Rename ``staged`` to ``target``, moving an existing ``target`` aside first and deleting it
    after (processes that still map its files keep them: unlinked files live on while mapped)."""
    if not target.exists():
        os.rename(staged, target)
        return
    aside = target.parent / f"{old_prefix}{target.name}-{os.getpid()}"
    os.rename(target, aside)
    try:
        os.rename(staged, target)
    except OSError:
        os.rename(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def talk(message: str, quiet: bool) -> None:
    """A progress or status line (logged at INFO: the mathlas command shows it on stderr), unless ``quiet``."""
    if not quiet:
        log.info(message)


_locks_guard = threading.Lock()
_locks: dict[Path, FileLock] = {}  # one per directory: re-entrant within a thread, exclusive across threads


@contextmanager
def data_lock(root: Path, *, quiet: bool) -> Iterator[None]:
    """Hold ``root/.install.lock`` (a ``filelock``) so installs of all processes take turns.

    On first acquisition, leftovers of crashed installs (``.tmp-*``, ``.old-*``) are removed:
    only a lock holder ever creates them, so none can be in use.
    """
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InstallError(f"cannot create {root}: {e}; set MATHLAS_DATA_DIR to a writable directory") from None
    key = root.resolve()
    with _locks_guard:
        lock = _locks.setdefault(key, FileLock(key / LOCK_FILE))
    first = not lock.is_locked  # this thread does not hold it yet
    try:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            talk("waiting for another mathlas install to finish ...", quiet)
            lock.acquire()
    except OSError as e:
        raise InstallError(f"cannot write to {key}: {e}; set MATHLAS_DATA_DIR to a writable directory") from None
    try:
        if first:
            _clean_leftovers(key)
        yield
    finally:
        lock.release()


def _clean_leftovers(root: Path) -> None:
    for p in root.iterdir():
        if p.name.startswith((TMP_PREFIX, OLD_PREFIX)):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
    downloads = root / DOWNLOADS
    if downloads.is_dir():  # keep interrupted downloads for resuming, but not forever
        for p in downloads.iterdir():
            try:
                if time.time() - p.lstat().st_mtime > PART_MAX_AGE_S:
                    p.unlink()
            except OSError:
                pass
