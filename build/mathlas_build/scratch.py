"""The temporary folders a build writes into before one rename puts its result in place.

A build stopped by a kill (SIGKILL, a machine going away) cannot remove its own: the next build beside
it does. Each folder is named ``PREFIX<host>-<pid>-<random>``, so a later run removes only the folders
of a process of this machine that no longer runs, never a live build's, nor one of another machine
sharing the folder (Ray's shards)."""
from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path


def _host() -> str:
    return "".join(c if c.isalnum() else "_" for c in socket.gethostname())[:40] or "host"


def make(parent: Path, prefix: str) -> Path:
    """A new temporary folder in ``parent`` named ``prefix<host>-<pid>-<random>``."""
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{_host()}-{os.getpid()}-", dir=parent))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # another user's process: alive
        return True
    return True


def sweep(parent: Path, prefix: str, *, quiet: bool = False) -> list[Path]:
    """Remove the folders ``make(parent, prefix)`` made for processes of this machine that no longer run;
    returns them, and says so on stderr unless ``quiet``."""
    parent = Path(parent)
    mine = f"{prefix}{_host()}-"
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for p in entries:
        if not p.name.startswith(mine) or p.is_symlink() or not p.is_dir():
            continue
        pid = p.name[len(mine):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        shutil.rmtree(p, ignore_errors=True)
        if not p.exists():
            removed.append(p)
    if removed and not quiet:
        print(f"[write] removed {len(removed)} temporary folder(s) a stopped build left in {parent}: "
              + ", ".join(p.name for p in removed), file=sys.stderr)
    return removed
