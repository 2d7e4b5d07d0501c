"""``mathlas data pull oeis``: download stripped.gz and names.gz, check them, install atomically.

Each file is streamed into a ``.tmp-*`` file beside its final place, checked whole (the gzip stream
decompresses to its end with a good CRC; the text has ``#`` header lines, then only
``A<number> ...`` lines in strictly increasing A-number order, stripped lines being
comma-wrapped integers), and only when both files pass are they renamed into place, under the
same lock the index builds take. A truncated or corrupt download raises ``InstallError`` and
leaves the installed files as they were.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from mathlas.errors import InstallError

OEIS_BASE = "https://oeis.org"
_STRIPPED_DATA = re.compile(rb",?(?:-?\d+,)*(?:-?\d+)?,?")


def check_file(path: Path, kind: str) -> int:
    """Check a downloaded ``stripped`` or ``names`` file; returns its number of sequences.

    Raises ``OeisDataError`` when it is not a complete gzip file in the official format.
    """
    import gzip

    from .index import OeisDataError, iter_lines

    try:
        with gzip.open(path, "rb") as f:
            head = f.readline()
    except (OSError, EOFError) as e:
        raise OeisDataError(f"not a gzip file ({e})") from None
    if not head.startswith(b"#"):
        raise OeisDataError(f"does not start with the OEIS '#' header lines: {head[:60]!r}")
    last, n = -1, 0
    for a, rest in iter_lines(path, kind):
        if a <= last:
            raise OeisDataError(f"A{a:06d} follows A{last:06d}: not in A-number order")
        if kind == "stripped" and not _STRIPPED_DATA.fullmatch(rest.strip()):
            raise OeisDataError(f"A{a:06d}: terms are not comma-separated integers: {rest[:60]!r}")
        last, n = a, n + 1
    if n == 0:
        raise OeisDataError("no sequences in it")
    return n


def by_hand(base: str, dest: Path) -> str:
    """What to do when the files cannot be fetched from ``base`` (no network, a proxy, a mirror
    down): fetch them elsewhere, then install them from a folder (``--url file:///...``, checked as
    a download is), or copy them into ``dest`` yourself."""
    from .index import NAMES, STRIPPED

    if base.startswith("file:"):
        return f"; put {STRIPPED} and {NAMES} in that folder"
    return (f"; without the network here, download {STRIPPED} and {NAMES} from {base} elsewhere, then "
            f"run `mathlas data pull oeis --url file:///FOLDER/WITH/THEM` to check and install them into {dest}, "
            f"or copy them there yourself ($MATHLAS_OEIS_DIR sets the folder lookups read; "
            "`mathlas data path oeis` prints it)")


def _network_failure(error: InstallError) -> bool:
    """Whether a failed download failed on the network: the name did not resolve, the connection was
    refused, reset or timed out, the server answered an HTTP error (the cause ``download`` leaves in
    the context). Not a local write that failed (a full disk, a read-only folder) nor a download cut
    short at a length the server announced: fetching the files elsewhere would not help those."""
    import http.client
    import urllib.error

    return isinstance(error.__context__, (urllib.error.URLError, ConnectionError, TimeoutError,
                                          http.client.HTTPException))


def pull(base_url: str = OEIS_BASE, dest: Path | None = None, *, quiet: bool = False,
         build_index: bool = True) -> Path:
    """Download ``stripped.gz`` and ``names.gz`` from ``base_url`` into ``dest`` (default: where
    identify_sequence reads, ``oeis_dir()``), verify both, rename them into place, and build the
    index unless ``build_index`` is false. Returns ``dest``."""
    from mathlas.releases.archive import download as _download
    from mathlas.releases.staging import TMP_PREFIX, data_lock, talk

    from . import oeis_dir, open_index
    from .index import NAMES, STRIPPED, OeisDataError

    dest = (dest or oeis_dir()).expanduser()
    base = base_url.rstrip("/")
    with data_lock(dest, quiet=quiet):
        staged: dict[str, Path] = {}
        try:
            for name, kind in ((STRIPPED, "stripped"), (NAMES, "names")):
                url = f"{base}/{name}"
                tmp = dest / f"{TMP_PREFIX}{os.getpid()}-{name}"
                staged[name] = tmp
                talk(f"[oeis] downloading {url}", quiet)
                try:
                    _download(url, tmp, quiet=quiet)
                except InstallError as e:
                    raise InstallError(f"{e}{by_hand(base, dest) if _network_failure(e) else ''}") from None
                try:
                    n = check_file(tmp, kind)
                except OeisDataError as e:
                    raise InstallError(f"download of {url} is truncated or corrupt: {e}; nothing was "
                                       "installed, try again") from None
                talk(f"[oeis] {name}: {n:,} sequences, {tmp.stat().st_size / 1e6:.1f} MB", quiet)
            for name in (NAMES, STRIPPED):  # stripped last: it alone makes the data "available"
                os.replace(staged[name], dest / name)
        except OSError as e:
            raise InstallError(f"could not install the OEIS files into {dest}: {e}") from None
        finally:
            for tmp in staged.values():
                tmp.unlink(missing_ok=True)
        talk(f"[oeis] installed {STRIPPED} and {NAMES} into {dest}", quiet)
    if build_index:
        open_index(dest, quiet=quiet)
    return dest
